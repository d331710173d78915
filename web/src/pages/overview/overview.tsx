// Overview: the last 30 UTC days at a glance. No endpoint gives a partner's figures per day
// yet, so they are added up here from the lists the API has (transactions filtered by date;
// SMS messages newest first), reading at most MAX_PAGES pages of each; past that the page
// says the figures are partial. New cards and coupons redeemed per day need an endpoint.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api/client';
import { DayChart, daysAgoUtc, daysBetween, todayUtc } from '../../components/chart';
import { Page } from '../../components/console';
import { LoadError, useLoad } from '../../components/data';
import { formatEur, formatNumber, useI18n } from '../../i18n';

const DAYS = 30;
const PER_PAGE = 100;
export const MAX_PAGES = 20;

interface DayFigures {
  transactions: number;
  awarded: number;
  deducted: number;
  sms: number;
}

interface Figures {
  days: string[];
  byDay: Map<string, DayFigures>;
  partial: boolean;
}

async function collect(from: string, to: string): Promise<Figures> {
  const days = daysBetween(from, to);
  const byDay = new Map(days.map((d) => [d, { transactions: 0, awarded: 0, deducted: 0, sms: 0 }]));
  let partial = false;

  const txPage = (page: number) => api.GET('/{locale}/partners/transactions', { params: { query: { from, to, page, per_page: PER_PAGE } } });
  const first = await txPage(1);
  if (first.error || !first.data) throw first.error ?? new Error('transactions');
  const last = Math.min(first.data.meta.last_page, MAX_PAGES);
  partial ||= first.data.meta.last_page > MAX_PAGES;
  const rest = await Promise.all(Array.from({ length: Math.max(0, last - 1) }, (_, i) => txPage(i + 2)));
  for (const r of [first, ...rest]) {
    for (const x of r.data?.data ?? []) {
      const f = byDay.get(x.created_at.slice(0, 10));
      if (!f) continue;
      if (x.type === 'purchase' || x.type === 'deduct') f.transactions += 1;
      if (x.points > 0 && x.type !== 'reversal') f.awarded += x.points;
      if (x.type === 'deduct') f.deducted += -x.points;
    }
  }

  // SMS messages come newest first, without a date filter: read back to the first day.
  for (let page = 1; page <= MAX_PAGES; page++) {
    const r = await api.GET('/{locale}/partners/sms/messages', { params: { query: { page, per_page: PER_PAGE } } });
    if (r.error || !r.data) break;
    let older = false;
    for (const m of r.data.data) {
      const day = m.created_at.slice(0, 10);
      if (day < from) older = true;
      const f = byDay.get(day);
      if (f && !m.refunded) f.sms += m.cost.amount;
    }
    if (older || page >= r.data.meta.last_page) break;
    if (page === MAX_PAGES) partial = true;
  }
  return { days, byDay, partial };
}

export default function Overview() {
  const { t, locale } = useI18n();
  const [figures, setFigures] = useState<Figures>();
  const [failed, setFailed] = useState(false);
  const customers = useLoad(() => api.GET('/{locale}/partners/customers', { params: { query: { per_page: 1 } } }), []);
  const shops = useLoad(() => api.GET('/{locale}/partners/shops', { params: { query: { per_page: 1 } } }), []);
  const cards = useLoad(() => api.GET('/{locale}/partners/cards', { params: { query: { per_page: 1, is_active: true } } }), []);
  const sms = useLoad(() => api.GET('/{locale}/partners/sms-account'), []);
  const from = daysAgoUtc(DAYS - 1);
  const to = todayUtc();

  useEffect(() => {
    collect(from, to).then(setFigures, () => setFailed(true));
  }, []);

  const series = (pick: (f: DayFigures) => number) => (figures ? figures.days.map((d) => pick(figures.byDay.get(d)!)) : []);
  const total = (pick: (f: DayFigures) => number) => series(pick).reduce((a, b) => a + b, 0);

  return (
    <Page title={t('nav.overview')}>
      <p class="lead">{t('overview.period', { from, to })}</p>
      <LoadError failure={customers.failure ?? shops.failure ?? cards.failure} />
      <dl class="kpis">
        <div>
          <dt>{t('overview.customers')}</dt>
          <dd>{formatNumber(locale, customers.data?.meta.total)}</dd>
        </div>
        <div>
          <dt>{t('overview.shops')}</dt>
          <dd>{formatNumber(locale, shops.data?.meta.total)}</dd>
        </div>
        <div>
          <dt>{t('overview.active_programmes')}</dt>
          <dd>{formatNumber(locale, cards.data?.pagination.total)}</dd>
        </div>
        <div>
          <dt>{t('overview.sms_balance')}</dt>
          <dd>{formatEur(locale, sms.data?.data.balance)}</dd>
        </div>
        <div>
          <dt>{t('overview.transactions_30')}</dt>
          <dd>{figures ? formatNumber(locale, total((f) => f.transactions)) : '…'}</dd>
        </div>
        <div>
          <dt>{t('overview.awarded_30')}</dt>
          <dd>{figures ? formatNumber(locale, total((f) => f.awarded)) : '…'}</dd>
        </div>
        <div>
          <dt>{t('overview.deducted_30')}</dt>
          <dd>{figures ? formatNumber(locale, total((f) => f.deducted)) : '…'}</dd>
        </div>
        <div>
          <dt>{t('overview.sms_spend_30')}</dt>
          <dd>{figures ? formatEur(locale, total((f) => f.sms)) : '…'}</dd>
        </div>
      </dl>
      {failed && (
        <div class="notice notice--error" role="alert">
          {t('overview.failed')}
        </div>
      )}
      {figures?.partial && (
        <div class="notice" role="status">
          {t('overview.partial', { rows: MAX_PAGES * PER_PAGE })}
        </div>
      )}
      {figures && (
        <div class="charts">
          <DayChart title={t('overview.chart_transactions')} days={figures.days} series={[{ label: t('overview.transactions'), values: series((f) => f.transactions), color: '#1d4ed8' }]} />
          <DayChart
            title={t('overview.chart_points')}
            days={figures.days}
            series={[
              { label: t('overview.awarded'), values: series((f) => f.awarded), color: '#047857' },
              { label: t('overview.deducted'), values: series((f) => f.deducted), color: '#b45309' },
            ]}
          />
          <DayChart title={t('overview.chart_sms')} days={figures.days} digits={2} series={[{ label: t('overview.sms_spend'), values: series((f) => f.sms), color: '#7c3aed' }]} />
        </div>
      )}
    </Page>
  );
}
