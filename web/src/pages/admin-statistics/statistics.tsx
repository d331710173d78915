// Statistics for a date range, the platform's or one partner's: totals from one call of
// admin/partners/stats, per-day charts from one call per day (the endpoint answers totals
// for a range; ranges up to MAX_CHART_DAYS are charted).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api/client';
import { DayChart, daysAgoUtc, daysBetween, todayUtc } from '../../components/chart';
import { Page } from '../../components/console';
import { LoadError, useLoad, useQuery } from '../../components/data';
import { Select } from '../../components/form';
import { usePartners } from '../../components/partner-picker';
import { formatEur, formatNumber, useI18n } from '../../i18n';
import type { paths } from '../../api/loyalty-api';

type Stats = paths['/{locale}/admin/partners/stats']['get']['responses'][200]['content']['application/json']['data'];
export const MAX_CHART_DAYS = 62;
const PARALLEL = 6;

async function perDay(days: string[], partner: number | undefined): Promise<Map<string, Stats>> {
  const out = new Map<string, Stats>();
  let next = 0;
  const worker = async () => {
    while (next < days.length) {
      const day = days[next++]!;
      const r = await api.GET('/{locale}/admin/partners/stats', { params: { query: { from: day, to: day, ...(partner ? { partner_id: partner } : {}) } } });
      if (r.data) out.set(day, r.data.data);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return out;
}

export default function Statistics() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const from = query.from ?? daysAgoUtc(29);
  const to = query.to ?? todayUtc();
  const partner = query.partner ? Number(query.partner) : undefined;
  const partners = usePartners();
  const totals = useLoad(() => api.GET('/{locale}/admin/partners/stats', { params: { query: { from, to, ...(partner ? { partner_id: partner } : {}) } } }), [from, to, partner]);
  const days = from <= to ? daysBetween(from, to) : [];
  const chartable = days.length > 0 && days.length <= MAX_CHART_DAYS;
  const [byDay, setByDay] = useState<Map<string, Stats>>();
  useEffect(() => {
    setByDay(undefined);
    if (chartable && !totals.failure) void perDay(days, partner).then(setByDay);
  }, [from, to, partner, Boolean(totals.failure)]);

  const s = totals.data?.data;
  const series = (pick: (x: Stats) => number) => days.map((d) => (byDay?.get(d) ? pick(byDay.get(d)!) : 0));

  return (
    <Page title={t('nav.statistics')}>
      <form
        class="filters filters--grid"
        aria-label={t('stats.range')}
        onSubmit={(e) => {
          e.preventDefault();
          const fd = new FormData(e.currentTarget);
          setQuery({ from: String(fd.get('from') ?? ''), to: String(fd.get('to') ?? ''), partner: String(fd.get('partner') ?? '') });
        }}
      >
        <div class="field">
          <label for="stats-from">{t('common.from')}</label>
          <input id="stats-from" name="from" type="date" defaultValue={from} />
        </div>
        <div class="field">
          <label for="stats-to">{t('common.to')}</label>
          <input id="stats-to" name="to" type="date" defaultValue={to} />
        </div>
        <Select
          name="partner"
          label={t('admin.partner')}
          defaultValue={query.partner ?? ''}
          options={[{ value: '', label: t('stats.all_partners') }, ...(partners.data?.data ?? []).map((p) => ({ value: String(p.id), label: p.name }))]}
        />
        <div class="actions">
          <button type="submit" class="button">
            {t('stats.show')}
          </button>
        </div>
      </form>
      <LoadError failure={totals.failure} />
      {totals.failure && Object.entries(totals.failure.fields).map(([f, m]) => <p key={f} class="field-error">{`${f}: ${m.join(' ')}`}</p>)}
      {s && (
        <dl class="kpis">
          <div>
            <dt>{t('stats.partners')}</dt>
            <dd>{t('stats.of_total', { n: formatNumber(locale, s.partners.active), total: formatNumber(locale, s.partners.total), added: formatNumber(locale, s.partners.new) })}</dd>
          </div>
          <div>
            <dt>{t('stats.customers')}</dt>
            <dd>{t('stats.plus_new', { total: formatNumber(locale, s.customers.total), added: formatNumber(locale, s.customers.new) })}</dd>
          </div>
          <div>
            <dt>{t('stats.cards')}</dt>
            <dd>{t('stats.plus_new', { total: formatNumber(locale, s.cards.total), added: formatNumber(locale, s.cards.new) })}</dd>
          </div>
          <div>
            <dt>{t('stats.transactions')}</dt>
            <dd>{formatNumber(locale, s.transactions.count)}</dd>
          </div>
          <div>
            <dt>{t('stats.points_issued')}</dt>
            <dd>{formatNumber(locale, s.points.issued)}</dd>
          </div>
          <div>
            <dt>{t('stats.points_redeemed')}</dt>
            <dd>{formatNumber(locale, s.points.redeemed)}</dd>
          </div>
          <div>
            <dt>{t('stats.purchase_amount')}</dt>
            <dd>{formatEur(locale, s.purchase_amount)}</dd>
          </div>
          <div>
            <dt>{t('stats.sms')}</dt>
            <dd>{t('stats.sms_value', { sent: formatNumber(locale, s.sms.sent), revenue: formatEur(locale, s.sms.revenue) })}</dd>
          </div>
        </dl>
      )}
      {!chartable && days.length > 0 && <p class="notice">{t('stats.too_long', { max: MAX_CHART_DAYS })}</p>}
      {chartable && byDay && (
        <div class="charts">
          <DayChart title={t('stats.chart_transactions')} days={days} series={[{ label: t('stats.transactions'), values: series((x) => x.transactions.count), color: '#1d4ed8' }]} />
          <DayChart
            title={t('stats.chart_points')}
            days={days}
            series={[
              { label: t('stats.points_issued'), values: series((x) => x.points.issued), color: '#047857' },
              { label: t('stats.points_redeemed'), values: series((x) => x.points.redeemed), color: '#b45309' },
            ]}
          />
          <DayChart
            title={t('stats.chart_new')}
            days={days}
            series={[
              { label: t('stats.new_customers'), values: series((x) => x.customers.new), color: '#0e7490' },
              { label: t('stats.new_cards'), values: series((x) => x.cards.new), color: '#7c3aed' },
            ]}
          />
          <DayChart title={t('stats.chart_sms')} days={days} digits={2} series={[{ label: t('stats.sms_revenue'), values: series((x) => x.sms.revenue), color: '#be185d' }]} />
        </div>
      )}
    </Page>
  );
}
