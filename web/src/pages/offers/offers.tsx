// Offers (DESIGN.md §8): what customers claim as coupons. Listed (filters active, featured),
// created, edited (PUT takes the whole form: every field is on it) and deleted here.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { paths } from '../../api/loyalty-api';
import { Confirm } from '../../components/confirm';
import { Page } from '../../components/console';
import { LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { Checkbox, CheckboxGroup, Field, Form, Select, Submit, changedFields, TextArea, bool, nullNumber, nullText, optNumber, text, useForm } from '../../components/form';
import { formatDateTime, formatNumber, useI18n } from '../../i18n';

type OfferBody = paths['/{locale}/partners/offers']['post']['requestBody']['content']['application/json'];
type Offer = paths['/{locale}/partners/offers']['get']['responses'][200]['content']['application/json']['data'][number];

const DISCOUNT_TYPES = ['percent', 'fixed', 'price', 'gift'] as const;

/** A datetime-local box (read as UTC) → ISO; text that is no date goes as is, for the API to name. */
function isoOrNull(v: string): string | null {
  if (!v) return null;
  const d = new Date(`${v}Z`);
  return Number.isNaN(d.getTime()) ? v : d.toISOString();
}
const localOf = (iso: string | null | undefined) => (iso ? iso.slice(0, 16) : '');

function offerBody(fd: FormData): OfferBody {
  const card = text(fd, 'partner_card_id');
  return {
    title: text(fd, 'title'),
    description: nullText(fd, 'description'),
    discount_type: text(fd, 'discount_type') as OfferBody['discount_type'],
    discount_value: nullNumber(fd, 'discount_value'),
    reward_details: nullText(fd, 'reward_details'),
    points_cost: optNumber(fd, 'points_cost') ?? 0,
    partner_card_id: card ? Number(card) : null,
    starts_at: isoOrNull(text(fd, 'starts_at')),
    ends_at: isoOrNull(text(fd, 'ends_at')),
    max_claims: nullNumber(fd, 'max_claims'),
    max_claims_per_customer: optNumber(fd, 'max_claims_per_customer') ?? 1,
    coupon_validity_days: nullNumber(fd, 'coupon_validity_days'),
    is_active: bool(fd, 'is_active'),
    featured: bool(fd, 'featured'),
    shop_ids: fd.getAll('shop_ids').map((v) => Number(v)),
  };
}

export default function Offers() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const isActive = query.is_active === 'true' ? true : query.is_active === 'false' ? false : undefined;
  const featured = query.featured === 'true' ? true : undefined;
  const list = useLoad(
    () => api.GET('/{locale}/partners/offers', { params: { query: { page, per_page: 20, ...(isActive !== undefined ? { is_active: isActive } : {}), ...(featured ? { featured } : {}) } } }),
    [page, isActive, featured],
  );
  const cards = useLoad(() => api.GET('/{locale}/partners/cards', { params: { query: { per_page: 100 } } }), []);
  const shops = useLoad(() => api.GET('/{locale}/partners/shops', { params: { query: { per_page: 100 } } }), []);
  const form = useForm();
  const rowForm = useForm();
  const [editing, setEditing] = useState<Offer>();
  const [deleting, setDeleting] = useState<Offer>();
  const [formKey, setFormKey] = useState(0);
  const [saved, setSaved] = useState<string>();

  const save = async (fd: FormData) => {
    const body = offerBody(fd);
    const r = editing
      ? await form.run(() => api.PUT('/{locale}/partners/offers/{id}', { params: { path: { id: editing.id } }, body: changedFields(body, editing) }))
      : await form.run(() => api.POST('/{locale}/partners/offers', { body }));
    if (r) {
      setSaved(t(editing ? 'offers.updated' : 'offers.created', { title: r.data.title }));
      setEditing(undefined);
      setFormKey((k) => k + 1);
      list.reload();
    }
  };
  const remove = async () => {
    const offer = deleting;
    setDeleting(undefined);
    if (!offer) return;
    const r = await rowForm.run(() => api.DELETE('/{locale}/partners/offers/{id}', { params: { path: { id: offer.id } } }));
    if (r) {
      setSaved(t('offers.deleted', { title: offer.title }));
      if (editing?.id === offer.id) setEditing(undefined);
      list.reload();
    }
  };
  const edit = (o: Offer) => {
    form.fail(undefined);
    setEditing(o);
    setSaved(undefined);
    document.getElementById('offer-form')?.scrollIntoView();
  };

  const e = editing;
  const formTitle = e ? t('offers.edit', { title: e.title }) : t('offers.create');
  return (
    <Page title={t('nav.offers')}>
      {saved && (
        <div class="notice notice--success" role="status">
          {saved}
        </div>
      )}
      <form
        class="filters filters--grid"
        aria-label={t('offers.filters')}
        onSubmit={(ev) => {
          ev.preventDefault();
          const fd = new FormData(ev.currentTarget);
          setQuery({ is_active: String(fd.get('is_active') ?? ''), featured: fd.get('featured') === 'true' ? 'true' : undefined });
        }}
      >
        <div class="field">
          <label for="offers-active">{t('offers.state')}</label>
          <select id="offers-active" name="is_active">
            <option value="" selected={!query.is_active}>{t('common.all')}</option>
            <option value="true" selected={query.is_active === 'true'}>{t('cards.active')}</option>
            <option value="false" selected={query.is_active === 'false'}>{t('cards.inactive')}</option>
          </select>
        </div>
        <div class="field field--checkbox">
          <input type="checkbox" id="offers-featured" name="featured" value="true" defaultChecked={featured} />
          <label for="offers-featured">{t('offers.featured_only')}</label>
        </div>
        <div class="actions">
          <button type="submit" class="button">
            {t('common.filter')}
          </button>
        </div>
      </form>
      <LoadError failure={list.failure ?? rowForm.failure} />
      <Table
        caption={t('offers.list')}
        loading={list.loading}
        empty={t('offers.none')}
        head={[t('common.id'), t('offers.title'), t('offers.discount'), t('offers.points_cost'), t('offers.claims'), t('offers.window'), t('common.status'), t('common.actions')]}
        rows={(list.data?.data ?? []).map((o) => [
          o.id,
          <span id={`offer-${o.id}`}>
            {o.title}
            {o.featured ? ` ★` : ''}
            {o.source === 'import' ? <span class="hint"> ({t('offers.from_import')})</span> : null}
          </span>,
          `${t(`offers.discount_${o.discount_type}`)}${o.discount_value !== null ? ` ${formatNumber(locale, o.discount_value)}${o.discount_type === 'percent' ? ' %' : ' €'}` : ''}`,
          formatNumber(locale, o.points_cost),
          `${formatNumber(locale, o.claims_count)} / ${o.max_claims === null ? '∞' : formatNumber(locale, o.max_claims)}`,
          `${formatDateTime(locale, o.starts_at)} – ${formatDateTime(locale, o.ends_at)}`,
          o.is_active ? t('cards.active') : t('cards.inactive'),
          <span class="row-actions">
            <button type="button" class="button button--secondary button--small" aria-describedby={`offer-${o.id}`} onClick={() => edit(o)}>
              {t('common.edit')}
            </button>
            <button type="button" class="button button--danger button--small" aria-describedby={`offer-${o.id}`} onClick={() => setDeleting(o)}>
              {t('common.delete')}
            </button>
          </span>,
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('offers.list')} />
      <section class="panel" aria-labelledby="offer-form">
        <h2 id="offer-form">{formTitle}</h2>
        <Form form={form} onSubmit={save} label={formTitle} key={`${e?.id ?? 'new'}-${formKey}`}>
          <div class="grid">
            <Field name="title" label={t('offers.title')} maxLength={255} defaultValue={e?.title} />
            <Select
              name="discount_type"
              label={t('offers.discount_type')}
              defaultValue={e?.discount_type ?? 'percent'}
              options={DISCOUNT_TYPES.map((v) => ({ value: v, label: t(`offers.discount_${v}`) }))}
            />
            <Field name="discount_value" label={t('offers.discount_value')} hint={t('offers.discount_value_hint')} inputMode="decimal" defaultValue={e?.discount_value?.toString() ?? ''} />
            <Field name="reward_details" label={t('offers.reward_details')} defaultValue={e?.reward_details ?? ''} />
            <Field name="points_cost" label={t('offers.points_cost')} hint={t('offers.points_cost_hint')} inputMode="numeric" defaultValue={String(e?.points_cost ?? 0)} />
            <Select
              name="partner_card_id"
              label={t('offers.card')}
              defaultValue={e?.partner_card_id ? String(e.partner_card_id) : ''}
              options={[{ value: '', label: t('offers.no_card') }, ...(cards.data?.data ?? []).map((c) => ({ value: String(c.id), label: c.title[locale] || c.title.en }))]}
            />
            <Field name="starts_at" label={t('offers.starts_at')} hint={t('common.utc')} type="datetime-local" defaultValue={localOf(e?.starts_at)} />
            <Field name="ends_at" label={t('offers.ends_at')} hint={t('common.utc')} type="datetime-local" defaultValue={localOf(e?.ends_at)} />
            <Field name="max_claims" label={t('offers.max_claims')} hint={t('offers.empty_unlimited')} inputMode="numeric" defaultValue={e?.max_claims?.toString() ?? ''} />
            <Field name="max_claims_per_customer" label={t('offers.max_claims_per_customer')} inputMode="numeric" defaultValue={String(e?.max_claims_per_customer ?? 1)} />
            <Field name="coupon_validity_days" label={t('offers.coupon_validity_days')} hint={t('cards.empty_never')} inputMode="numeric" defaultValue={e?.coupon_validity_days?.toString() ?? ''} />
          </div>
          <TextArea name="description" label={t('offers.description')} rows={2} defaultValue={e?.description ?? ''} />
          {(shops.data?.data.length ?? 0) > 0 && (
            <CheckboxGroup
              name="shop_ids"
              legend={t('offers.shops')}
              hint={t('offers.shops_hint')}
              options={(shops.data?.data ?? []).map((sh) => ({ value: String(sh.id), label: sh.name }))}
              checked={(e?.shop_ids ?? []).map(String)}
            />
          )}
          <Checkbox name="is_active" label={t('cards.is_active')} checked={e?.is_active ?? true} />
          <Checkbox name="featured" label={t('offers.featured')} checked={e?.featured ?? false} />
          <div class="actions">
            <Submit form={form}>{e ? t('common.save') : t('offers.create')}</Submit>
            {e && (
              <button
                type="button"
                class="button button--secondary"
                onClick={() => {
                  form.fail(undefined);
                  setEditing(undefined);
                }}
              >
                {t('common.cancel')}
              </button>
            )}
          </div>
        </Form>
      </section>
      <Confirm open={deleting !== undefined} title={t('offers.delete_title', { title: deleting?.title ?? '' })} confirm={t('common.delete')} onConfirm={remove} onClose={() => setDeleting(undefined)}>
        <p>{t('offers.delete_text')}</p>
      </Confirm>
    </Page>
  );
}
