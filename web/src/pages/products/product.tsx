// One product (DESIGN.md §9): every field as the feed gave it, its categories, the import that
// last contained it, and the offers that name it (in their product_ids, or import-sourced).
import type { ComponentChildren } from 'preact';
import { useRoute } from 'preact-iso';
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { Facts, LoadError, Table, useLoad } from '../../components/data';
import { formatDateTime, formatNumber, useI18n } from '../../i18n';

const link = (url: string | null) =>
  url ? (
    <a href={url} rel="noopener noreferrer" target="_blank">
      {url}
    </a>
  ) : null;

export default function Product() {
  const { t, locale } = useI18n();
  const { params } = useRoute();
  const id = Number(params.id);
  const product = useLoad(() => api.GET('/{locale}/shop/products/{id}', { params: { path: { id } } }), [id]);
  const offers = useLoad(() => api.GET('/{locale}/partners/offers', { params: { query: { product_id: id, per_page: 100 } } }), [id]);
  const p = product.data?.data;
  const money = (v: number | null) => (v === null ? null : `${formatNumber(locale, v)} ${p?.currency ?? ''}`.trim());

  const facts: Array<[string, ComponentChildren]> = p
    ? [
        [t('common.id'), p.id],
        [t('products.xml_id'), p.xml_id],
        [t('products.external_id'), p.external_id],
        [t('products.sku'), p.sku],
        [t('products.ean'), p.ean],
        [t('products.brand'), p.brand],
        [t('products.model'), p.model],
        [t('products.price'), money(p.price)],
        [t('products.discounted_price'), money(p.discounted_price)],
        [t('products.stock'), `${p.availability ? t('products.in_stock') : t('products.out_of_stock')}${p.stock_quantity !== null ? ` (${formatNumber(locale, p.stock_quantity)})` : ''}`],
        [t('products.weight'), p.weight],
        [t('products.color'), p.color],
        [t('products.size'), p.size],
        [t('products.delivery_info'), p.delivery_info],
        [t('products.warranty_info'), p.warranty_info],
        [t('products.featured'), p.featured ? t('products.yes') : t('products.no')],
        [t('common.status'), p.is_active ? t('cards.active') : t('cards.inactive')],
        [t('products.url'), link(p.external_url)],
        [t('products.image'), link(p.image_url)],
        [
          t('products.images'),
          p.images.length === 0 ? null : (
            <ul class="plain">
              {p.images.map((u) => (
                <li key={u}>{link(u)}</li>
              ))}
            </ul>
          ),
        ],
        [
          t('products.categories'),
          p.categories.length === 0
            ? null
            : p.categories.map((c) => (
                <a key={c.id} class="chip" href={`/dashboard/products?category_id=${c.id}`}>
                  {c.name}
                </a>
              )),
        ],
        [
          t('products.last_import'),
          p.last_import_id === null ? null : <a href={`/dashboard/imports?import=${p.last_import_id}`}>{t('imports.import_n', { id: p.last_import_id })}</a>,
        ],
        [t('common.created'), formatDateTime(locale, p.created_at)],
        [t('common.updated'), formatDateTime(locale, p.updated_at)],
      ]
    : [];

  return (
    <Page title={p ? p.name : t('nav.products')}>
      <p>
        <a href="/dashboard/products">{t('products.back')}</a>
      </p>
      <LoadError failure={product.failure} />
      {p && (
        <>
          <section class="panel" aria-labelledby="product-fields">
            <h2 id="product-fields">{t('products.fields')}</h2>
            <Facts items={facts} />
            {p.description && (
              <>
                <h3>{t('products.description')}</h3>
                <p class="pre-line">{p.description}</p>
              </>
            )}
          </section>
          <LoadError failure={offers.failure} />
          <Table
            caption={t('products.offers')}
            loading={offers.loading}
            empty={t('products.no_offers')}
            head={[t('common.id'), t('offers.title'), t('offers.discount'), t('common.status')]}
            rows={(offers.data?.data ?? []).map((o) => [
              o.id,
              <span>
                {o.title}
                {o.source === 'import' ? <span class="hint"> ({t('offers.from_import')})</span> : null}
              </span>,
              `${t(`offers.discount_${o.discount_type}`)}${o.discount_value !== null ? ` ${formatNumber(locale, o.discount_value)}${o.discount_type === 'percent' ? ' %' : ' €'}` : ''}`,
              o.is_active ? t('cards.active') : t('cards.inactive'),
            ])}
          />
          <p>
            <a href="/dashboard/offers">{t('products.all_offers')}</a>
          </p>
        </>
      )}
    </Page>
  );
}
