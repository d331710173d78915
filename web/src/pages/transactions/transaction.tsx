// One transaction (DESIGN.md §12): its fields, its basket lines with the points each earned
// and how much of each was returned, the breakdown by source and campaign, and its returns
// (entries of type `return` whose returns_id is this one).
import type { ComponentChildren } from 'preact';
import { useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { Facts, LoadError, Table, useLoad } from '../../components/data';
import { formatDateTime, formatEur, formatNumber, useI18n } from '../../i18n';

export default function Transaction() {
  const { t, locale } = useI18n();
  const { params } = useRoute();
  const id = Number(params.id);
  const tx = useLoad(() => api.GET('/{locale}/partners/transactions/{id}', { params: { path: { id } } }), [id]);
  const shops = useLoad(() => api.GET('/{locale}/partners/shops', { params: { query: { per_page: 100 } } }), []);
  const x = tx.data?.data;
  // A line matched by product_id alone has no name of its own: the catalogue's names.
  const [productNames, setProductNames] = useState(new Map<number, string>());
  const unnamed = [...new Set((x?.items ?? []).filter((l) => l.product_id !== null && !l.name).map((l) => l.product_id!))];
  useEffect(() => {
    if (unnamed.length === 0) return;
    let live = true;
    void Promise.all(unnamed.map((pid) => api.GET('/{locale}/shop/products/{id}', { params: { path: { id: pid } } }).catch(() => undefined))).then((rs) => {
      if (live) setProductNames(new Map(rs.flatMap((r) => (r?.data ? [[r.data.data.id, r.data.data.name] as const] : []))));
    });
    return () => {
      live = false;
    };
  }, [unnamed.join(',')]);
  const nameOf = (l: { name: string | null; product_id: number | null }) => l.name ?? (l.product_id === null ? null : (productNames.get(l.product_id) ?? `#${l.product_id}`));
  const shopName = (sid: number | null) => (sid === null ? null : (shops.data?.data.find((s) => s.id === sid)?.name ?? `#${sid}`));
  const txLink = (tid: number | null) => (tid === null ? null : <a href={`/dashboard/transactions/${tid}`}>{t('transaction.n', { id: tid })}</a>);
  const lineName = (lineId: string) => {
    const line = x?.items.find((l) => l.line_id === lineId);
    const name = line ? nameOf(line) : null;
    return name ? `${lineId} (${name})` : lineId;
  };

  const facts: Array<[string, ComponentChildren]> = x
    ? [
        [t('common.id'), x.id],
        [t('common.date'), formatDateTime(locale, x.created_at)],
        [t('transactions.type'), t(`transactions.type_${x.type}`)],
        [t('transactions.points'), <span class={x.points < 0 ? 'neg' : 'pos'}>{formatNumber(locale, x.points)}</span>],
        [t('transactions.amount'), x.amount === null ? null : formatEur(locale, x.amount)],
        [t('transactions.balance_after'), formatNumber(locale, x.balance_after)],
        [t('transactions.card_id'), <a href={`/dashboard/transactions?card_id=${x.card_id}`}>{x.card_id}</a>],
        [t('transactions.user_id'), x.user_id],
        [t('transactions.shop'), shopName(x.shop_id)],
        [t('transaction.receipt'), x.receipt_number],
        [t('transaction.reason'), x.reason],
        [t('transaction.reverses'), txLink(x.reverses_id)],
        [t('transaction.returns_id'), txLink(x.returns_id)],
      ]
    : [];

  return (
    <Page title={x ? t('transaction.title', { id: x.id }) : t('nav.transactions')}>
      <p>
        <a href="/dashboard/transactions">{t('transaction.back')}</a>
      </p>
      <LoadError failure={tx.failure} />
      {x && (
        <>
          <section class="panel" aria-labelledby="transaction-fields">
            <h2 id="transaction-fields">{t('transaction.fields')}</h2>
            <Facts items={facts} />
          </section>
          <Table
            caption={t('transaction.lines')}
            empty={t('transaction.no_lines')}
            head={[t('transaction.line_id'), t('transaction.product'), t('transaction.sku'), t('transaction.quantity'), t('transactions.amount'), t('transactions.points'), t('transaction.returned_quantity')]}
            rows={x.items.map((l) => [
              l.line_id,
              l.product_id === null ? (l.name ?? '—') : <a href={`/dashboard/products/${l.product_id}`}>{nameOf(l)}</a>,
              l.sku ?? l.ean ?? '—',
              formatNumber(locale, l.quantity),
              formatEur(locale, l.amount),
              formatNumber(locale, l.points),
              formatNumber(locale, l.returned_quantity),
            ])}
          />
          <Table
            caption={t('transaction.breakdown')}
            empty={t('transaction.no_breakdown')}
            head={[t('breakdown.source'), t('breakdown.campaign'), t('breakdown.points'), t('breakdown.lines')]}
            rows={x.breakdown.map((b) => [t(`breakdown.source_${b.source}`), b.name ?? '—', formatNumber(locale, b.points), b.line_ids.length === 0 ? '—' : b.line_ids.map(lineName).join(', ')])}
          />
          <Table
            caption={t('transaction.returns')}
            empty={t('transaction.no_returns')}
            head={[t('common.id'), t('common.date'), t('transactions.points'), t('transactions.amount'), t('transactions.balance_after'), t('transactions.receipt')]}
            rows={x.returns.map((r) => [
              <a href={`/dashboard/transactions/${r.id}`}>{r.id}</a>,
              formatDateTime(locale, r.created_at),
              <span class={r.points < 0 ? 'neg' : 'pos'}>{formatNumber(locale, r.points)}</span>,
              formatEur(locale, r.amount),
              formatNumber(locale, r.balance_after),
              r.receipt_number ?? r.reason ?? '—',
            ])}
          />
        </>
      )}
    </Page>
  );
}
