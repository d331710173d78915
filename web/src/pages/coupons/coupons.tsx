// Coupons: every coupon of the partner (claimed offers, game rewards), newest first, filtered
// (status, code, offer, shop redeemed at, customer, card, dates), paginated, exported as CSV
// with the same filters.
import { useState } from 'preact/hooks';
import { api, download, type Failure } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, Pager, Status, Table, useLoad, useQuery } from '../../components/data';
import { Select } from '../../components/form';
import { formatDateTime, useI18n } from '../../i18n';

const STATUSES = ['active', 'pending', 'used', 'expired'] as const;
type CouponStatus = (typeof STATUSES)[number] | 'all';
const FILTERS = ['status', 'code', 'offer_id', 'shop_id', 'user_id', 'card_id', 'from', 'to'] as const;

export function couponFiltersOf(query: Record<string, string>) {
  const out: { status?: CouponStatus; code?: string; from?: string; to?: string; offer_id?: number; shop_id?: number; user_id?: number; card_id?: number } = {};
  if (query.status && (STATUSES as readonly string[]).includes(query.status)) out.status = query.status as CouponStatus;
  if (query.code) out.code = query.code;
  if (query.from) out.from = query.from;
  if (query.to) out.to = query.to;
  for (const k of ['offer_id', 'shop_id', 'user_id', 'card_id'] as const) if (query[k]) out[k] = Number(query[k]);
  return out;
}

export default function Coupons() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const filters = couponFiltersOf(query);
  const key = JSON.stringify(filters);
  const list = useLoad(() => api.GET('/{locale}/partners/coupons', { params: { query: { page, per_page: 25, ...filters } } }), [page, key]);
  const shops = useLoad(() => api.GET('/{locale}/partners/shops', { params: { query: { per_page: 100 } } }), []);
  const offers = useLoad(() => api.GET('/{locale}/partners/offers', { params: { query: { per_page: 100 } } }), []);
  const [exportFailure, setExportFailure] = useState<Failure>();
  const [exporting, setExporting] = useState(false);
  const shopName = (id: number | null) => (id === null ? '—' : (shops.data?.data.find((s) => s.id === id)?.name ?? `#${id}`));

  const exportCsv = async () => {
    setExporting(true);
    const qs = new URLSearchParams(Object.entries(filters).map(([k, v]) => [k, String(v)])).toString();
    setExportFailure(await download(`/{locale}/partners/coupons/export${qs ? `?${qs}` : ''}`, `coupons-${new Date().toISOString().slice(0, 10)}.csv`));
    setExporting(false);
  };
  const rows = list.data?.data.coupons ?? [];

  return (
    <Page
      title={t('nav.coupons')}
      actions={
        <button type="button" class="button button--secondary" onClick={exportCsv} disabled={exporting}>
          {t('coupons.export')}
        </button>
      }
    >
      <form
        class="filters filters--grid"
        aria-label={t('coupons.filters')}
        onSubmit={(e) => {
          e.preventDefault();
          const fd = new FormData(e.currentTarget);
          setQuery(Object.fromEntries(FILTERS.map((f) => [f, String(fd.get(f) ?? '').trim()])));
        }}
      >
        <Select
          name="status"
          label={t('common.status')}
          defaultValue={query.status ?? ''}
          options={[{ value: '', label: t('common.all') }, ...STATUSES.map((st) => ({ value: st, label: t(`coupons.status_${st}`) }))]}
        />
        <div class="field">
          <label for="cp-code">{t('coupons.code')}</label>
          <input id="cp-code" name="code" autoComplete="off" defaultValue={query.code} />
        </div>
        <Select
          name="offer_id"
          label={t('coupons.offer')}
          defaultValue={query.offer_id ?? ''}
          options={[{ value: '', label: t('common.all') }, ...(offers.data?.data ?? []).map((o) => ({ value: String(o.id), label: o.title }))]}
        />
        <Select
          name="shop_id"
          label={t('coupons.used_shop')}
          defaultValue={query.shop_id ?? ''}
          options={[{ value: '', label: t('common.all') }, ...(shops.data?.data ?? []).map((sh) => ({ value: String(sh.id), label: sh.name }))]}
        />
        <div class="field">
          <label for="cp-user">{t('transactions.user_id')}</label>
          <input id="cp-user" name="user_id" inputMode="numeric" defaultValue={query.user_id} />
        </div>
        <div class="field">
          <label for="cp-card">{t('transactions.card_id')}</label>
          <input id="cp-card" name="card_id" inputMode="numeric" defaultValue={query.card_id} />
        </div>
        <div class="field">
          <label for="cp-from">{t('coupons.created_from')}</label>
          <input id="cp-from" name="from" type="date" defaultValue={query.from} />
        </div>
        <div class="field">
          <label for="cp-to">{t('coupons.created_to')}</label>
          <input id="cp-to" name="to" type="date" defaultValue={query.to} />
        </div>
        <div class="actions">
          <button type="submit" class="button">
            {t('common.filter')}
          </button>
          <a class="button button--secondary" href="/dashboard/coupons">
            {t('common.clear')}
          </a>
        </div>
      </form>
      <LoadError failure={list.failure ?? exportFailure} />
      {list.failure && Object.entries(list.failure.fields).map(([f, m]) => <p key={f} class="field-error">{`${f}: ${m.join(' ')}`}</p>)}
      <Table
        caption={t('coupons.list')}
        loading={list.loading}
        empty={t('coupons.none')}
        head={[t('coupons.code'), t('coupons.reward'), t('coupons.customer'), t('common.status'), t('common.created'), t('coupons.expires'), t('coupons.used')]}
        rows={rows.map((c) => [
          <code>{c.code}</code>,
          c.offer ? c.offer.title : c.game ? `${c.game.name}: ${c.game.reward_description}` : '—',
          c.user.name || c.user.email || `#${c.user.id}`,
          <Status value={c.status} label={t(`coupons.status_${c.status}`)} />,
          formatDateTime(locale, c.created_at),
          c.expires_at ? formatDateTime(locale, c.expires_at) : t('coupons.never'),
          c.used_at ? `${formatDateTime(locale, c.used_at)}, ${shopName(c.used_shop_id)}` : '—',
        ])}
      />
      <Pager meta={list.data?.data.pagination} onPage={(p) => setQuery({ page: String(p) })} label={t('coupons.list')} />
    </Page>
  );
}
