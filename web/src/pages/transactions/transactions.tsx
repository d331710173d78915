// Transactions: the points ledger of every card of the partner, filtered (type, dates, shop,
// card, customer), paginated, exported as CSV with the same filters. A transaction's id opens
// its details (transaction.tsx: lines, breakdown, returns).
import { useState } from 'preact/hooks';
import { api, download, type Failure } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { Select } from '../../components/form';
import { formatDateTime, formatEur, formatNumber, useI18n } from '../../i18n';

const TYPES = ['purchase', 'deduct', 'adjust', 'bonus', 'expire', 'reversal', 'return'] as const;
type TxType = (typeof TYPES)[number];
const FILTERS = ['type', 'from', 'to', 'shop_id', 'card_id', 'user_id'] as const;

export function filtersOf(query: Record<string, string>) {
  const out: { type?: TxType; from?: string; to?: string; shop_id?: number; card_id?: number; user_id?: number } = {};
  if (query.type && (TYPES as readonly string[]).includes(query.type)) out.type = query.type as TxType;
  if (query.from) out.from = query.from;
  if (query.to) out.to = query.to;
  for (const k of ['shop_id', 'card_id', 'user_id'] as const) if (query[k]) out[k] = Number(query[k]);
  return out;
}

export default function Transactions() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const filters = filtersOf(query);
  const key = JSON.stringify(filters);
  const list = useLoad(() => api.GET('/{locale}/partners/transactions', { params: { query: { page, per_page: 25, ...filters } } }), [page, key]);
  const shops = useLoad(() => api.GET('/{locale}/partners/shops', { params: { query: { per_page: 100 } } }), []);
  const [exportFailure, setExportFailure] = useState<Failure>();
  const [exporting, setExporting] = useState(false);
  const shopName = (id: number | null) => (id === null ? '—' : (shops.data?.data.find((s) => s.id === id)?.name ?? `#${id}`));

  const exportCsv = async () => {
    setExporting(true);
    const qs = new URLSearchParams(Object.entries(filters).map(([k, v]) => [k, String(v)])).toString();
    setExportFailure(await download(`/{locale}/partners/transactions/export${qs ? `?${qs}` : ''}`, `transactions-${new Date().toISOString().slice(0, 10)}.csv`));
    setExporting(false);
  };

  return (
    <Page
      title={t('nav.transactions')}
      actions={
        <button type="button" class="button button--secondary" onClick={exportCsv} disabled={exporting}>
          {t('transactions.export')}
        </button>
      }
    >
      <form
        class="filters filters--grid"
        aria-label={t('transactions.filters')}
        onSubmit={(e) => {
          e.preventDefault();
          const fd = new FormData(e.currentTarget);
          setQuery(Object.fromEntries(FILTERS.map((f) => [f, String(fd.get(f) ?? '').trim()])));
        }}
      >
        <Select
          name="type"
          label={t('transactions.type')}
          defaultValue={query.type ?? ''}
          options={[{ value: '', label: t('common.all') }, ...TYPES.map((ty) => ({ value: ty, label: t(`transactions.type_${ty}`) }))]}
        />
        <div class="field">
          <label for="tx-from">{t('common.from')}</label>
          <input id="tx-from" name="from" type="date" defaultValue={query.from} />
        </div>
        <div class="field">
          <label for="tx-to">{t('common.to')}</label>
          <input id="tx-to" name="to" type="date" defaultValue={query.to} />
        </div>
        <Select
          name="shop_id"
          label={t('transactions.shop')}
          defaultValue={query.shop_id ?? ''}
          options={[{ value: '', label: t('common.all') }, ...(shops.data?.data ?? []).map((s) => ({ value: String(s.id), label: s.name }))]}
        />
        <div class="field">
          <label for="tx-card">{t('transactions.card_id')}</label>
          <input id="tx-card" name="card_id" inputMode="numeric" defaultValue={query.card_id} />
        </div>
        <div class="field">
          <label for="tx-user">{t('transactions.user_id')}</label>
          <input id="tx-user" name="user_id" inputMode="numeric" defaultValue={query.user_id} />
        </div>
        <div class="actions">
          <button type="submit" class="button">
            {t('common.filter')}
          </button>
          <a class="button button--secondary" href="/dashboard/transactions">
            {t('common.clear')}
          </a>
        </div>
      </form>
      <LoadError failure={list.failure ?? exportFailure} />
      {list.failure && Object.entries(list.failure.fields).map(([f, m]) => <p key={f} class="field-error">{`${f}: ${m.join(' ')}`}</p>)}
      <Table
        caption={t('transactions.list')}
        loading={list.loading}
        empty={t('transactions.none')}
        head={[t('common.id'), t('common.date'), t('transactions.type'), t('transactions.points'), t('transactions.amount'), t('transactions.balance_after'), t('transactions.card_id'), t('transactions.shop'), t('transactions.receipt')]}
        rows={(list.data?.data ?? []).map((x) => [
          <a href={`/dashboard/transactions/${x.id}`} aria-label={t('transaction.open', { id: x.id })}>
            {x.id}
          </a>,
          formatDateTime(locale, x.created_at),
          t(`transactions.type_${x.type}`),
          <span class={x.points < 0 ? 'neg' : 'pos'}>{formatNumber(locale, x.points)}</span>,
          formatEur(locale, x.amount),
          formatNumber(locale, x.balance_after),
          x.card_id,
          shopName(x.shop_id),
          x.receipt_number ?? x.reason ?? '—',
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('transactions.list')} />
    </Page>
  );
}
