// Products (DESIGN.md §9, §11): the catalogue the feeds brought, searched (name, sku, ean,
// brand) and filtered (category and everything under it, in stock, featured, inactive, the
// products of one import), paginated; each opens its product view.
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { Field, Select } from '../../components/form';
import { formatNumber, useI18n } from '../../i18n';

export default function Products() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const q = query.q ?? '';
  const categoryId = query.category_id ? Number(query.category_id) : undefined;
  const inStock = query.in_stock === 'true' ? true : query.in_stock === 'false' ? false : undefined;
  const featured = query.featured === 'true' ? true : undefined;
  const inactive = query.is_active === 'false';
  const importId = query.import_id ? Number(query.import_id) : undefined;
  const list = useLoad(
    () =>
      api.GET('/{locale}/shop/products', {
        params: {
          query: {
            page,
            per_page: 20,
            ...(q ? { q } : {}),
            ...(categoryId ? { category_id: categoryId } : {}),
            ...(inStock !== undefined ? { in_stock: inStock } : {}),
            ...(featured ? { featured } : {}),
            ...(inactive ? { is_active: false } : {}),
            ...(importId ? { import_id: importId } : {}),
          },
        },
      }),
    [page, q, categoryId, inStock, featured, inactive, importId],
  );
  const categories = useLoad(() => api.GET('/{locale}/shop/categories'), []);
  const tree = [...(categories.data?.data ?? [])].sort((a, b) => a.path.localeCompare(b.path, locale));

  return (
    <Page title={t('nav.products')}>
      <form
        class="filters filters--grid"
        role="search"
        aria-label={t('products.filters')}
        onSubmit={(ev) => {
          ev.preventDefault();
          const fd = new FormData(ev.currentTarget);
          setQuery({
            q: String(fd.get('q') ?? '').trim(),
            category_id: String(fd.get('category_id') ?? ''),
            in_stock: String(fd.get('in_stock') ?? ''),
            featured: fd.get('featured') === 'true' ? 'true' : undefined,
            is_active: fd.get('inactive') === 'true' ? 'false' : undefined,
          });
        }}
      >
        <Field name="q" label={t('products.search')} hint={t('products.search_hint')} type="search" defaultValue={q} />
        <Select
          name="category_id"
          label={t('products.category')}
          defaultValue={query.category_id ?? ''}
          options={[{ value: '', label: t('common.all') }, ...tree.map((c) => ({ value: String(c.id), label: c.path }))]}
        />
        <Select
          name="in_stock"
          label={t('products.stock')}
          defaultValue={query.in_stock ?? ''}
          options={[
            { value: '', label: t('common.all') },
            { value: 'true', label: t('products.in_stock') },
            { value: 'false', label: t('products.out_of_stock') },
          ]}
        />
        <div class="field field--checkbox">
          <input type="checkbox" id="products-featured" name="featured" value="true" defaultChecked={featured} />
          <label for="products-featured">{t('products.featured_only')}</label>
        </div>
        <div class="field field--checkbox">
          <input type="checkbox" id="products-inactive" name="inactive" value="true" defaultChecked={inactive} />
          <label for="products-inactive">{t('products.inactive_only')}</label>
        </div>
        <div class="actions">
          <button type="submit" class="button">
            {t('common.search')}
          </button>
        </div>
      </form>
      {importId !== undefined && (
        <p class="notice" role="status">
          {t('products.of_import', { id: importId })}{' '}
          <a href={`/dashboard/imports?import=${importId}`}>{t('products.see_import')}</a>{' '}
          <button type="button" class="button button--secondary button--small" onClick={() => setQuery({ import_id: undefined })}>
            {t('products.all_imports')}
          </button>
        </p>
      )}
      <LoadError failure={list.failure ?? categories.failure} />
      <Table
        caption={t('products.list')}
        loading={list.loading}
        empty={t('products.none')}
        head={[t('common.id'), t('products.name'), t('products.sku'), t('products.ean'), t('products.brand'), t('products.price'), t('products.stock'), t('common.status')]}
        rows={(list.data?.data ?? []).map((p) => [
          p.id,
          <a href={`/dashboard/products/${p.id}`}>
            {p.name}
            {p.featured ? ' ★' : ''}
          </a>,
          p.sku ?? '—',
          p.ean ?? '—',
          p.brand ?? '—',
          p.price === null ? '—' : `${formatNumber(locale, p.discounted_price ?? p.price)} ${p.currency ?? ''}`.trim(),
          p.availability ? t('products.in_stock') : t('products.out_of_stock'),
          p.is_active ? t('cards.active') : t('cards.inactive'),
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(n) => setQuery({ page: String(n) })} label={t('products.list')} />
    </Page>
  );
}
