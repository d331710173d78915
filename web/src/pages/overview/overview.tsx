// Overview: the last 30 UTC days at a glance — KPIs and per-day charts from one call,
// GET partners/stats (transactions, points awarded and deducted, coupons redeemed, new cards,
// SMS spend per day), plus the counts the lists give, and the cards per tier of each
// programme that has tiers (GET partners/tiers/summary).
import { api } from '../../api/client';
import { BarChart, DayChart, daysAgoUtc, todayUtc } from '../../components/chart';
import { Page } from '../../components/console';
import { LoadError, useLoad } from '../../components/data';
import { formatEur, formatNumber, useI18n } from '../../i18n';

const DAYS = 30;
/** The bar of the cards without a tier, and of a tier without a colour. */
const NO_TIER_COLOR = '#9ca3af';
const TIER_COLOR = '#0e7490';

export default function Overview() {
  const { t, locale } = useI18n();
  const from = daysAgoUtc(DAYS - 1);
  const to = todayUtc();
  const stats = useLoad(() => api.GET('/{locale}/partners/stats', { params: { query: { from, to } } }), []);
  const customers = useLoad(() => api.GET('/{locale}/partners/customers', { params: { query: { per_page: 1 } } }), []);
  const shops = useLoad(() => api.GET('/{locale}/partners/shops', { params: { query: { per_page: 1 } } }), []);
  const cards = useLoad(() => api.GET('/{locale}/partners/cards', { params: { query: { per_page: 1, is_active: true } } }), []);
  const sms = useLoad(() => api.GET('/{locale}/partners/sms-account'), []);
  const tiers = useLoad(() => api.GET('/{locale}/partners/tiers/summary'), []);

  const s = stats.data?.data;
  const days = s?.by_day.map((d) => d.day) ?? [];
  type Day = NonNullable<typeof s>['by_day'][number];
  const series = (pick: (d: Day) => number) => s?.by_day.map(pick) ?? [];
  // '…' while a figure loads (not '—', which would read as no value).
  const kpi = (v: number | undefined, eur = false) => (v === undefined ? '…' : eur ? formatEur(locale, v) : formatNumber(locale, v));

  return (
    <Page title={t('nav.overview')}>
      <p class="lead">{t('overview.period', { from, to })}</p>
      <LoadError failure={stats.failure ?? customers.failure ?? shops.failure ?? cards.failure ?? tiers.failure} />
      <dl class="kpis">
        <div>
          <dt>{t('overview.customers')}</dt>
          <dd>{kpi(customers.data?.meta.total)}</dd>
        </div>
        <div>
          <dt>{t('overview.shops')}</dt>
          <dd>{kpi(shops.data?.meta.total)}</dd>
        </div>
        <div>
          <dt>{t('overview.active_programmes')}</dt>
          <dd>{kpi(cards.data?.pagination.total)}</dd>
        </div>
        <div>
          <dt>{t('overview.sms_balance')}</dt>
          <dd>{kpi(sms.data?.data.balance, true)}</dd>
        </div>
        <div>
          <dt>{t('overview.transactions_30')}</dt>
          <dd>{kpi(s?.totals.transactions)}</dd>
        </div>
        <div>
          <dt>{t('overview.awarded_30')}</dt>
          <dd>{kpi(s?.totals.points_awarded)}</dd>
        </div>
        <div>
          <dt>{t('overview.deducted_30')}</dt>
          <dd>{kpi(s?.totals.points_deducted)}</dd>
        </div>
        <div>
          <dt>{t('overview.coupons_30')}</dt>
          <dd>{kpi(s?.totals.coupons_redeemed)}</dd>
        </div>
        <div>
          <dt>{t('overview.new_cards_30')}</dt>
          <dd>{kpi(s?.totals.new_cards)}</dd>
        </div>
        <div>
          <dt>{t('overview.sms_spend_30')}</dt>
          <dd>{kpi(s?.totals.sms_spend, true)}</dd>
        </div>
      </dl>
      {s && (
        <div class="charts">
          <DayChart title={t('overview.chart_transactions')} days={days} series={[{ label: t('overview.transactions'), values: series((d) => d.transactions), color: '#1d4ed8' }]} />
          <DayChart
            title={t('overview.chart_points')}
            days={days}
            series={[
              { label: t('overview.awarded'), values: series((d) => d.points_awarded), color: '#047857' },
              { label: t('overview.deducted'), values: series((d) => d.points_deducted), color: '#b45309' },
            ]}
          />
          <DayChart
            title={t('overview.chart_engagement')}
            days={days}
            series={[
              { label: t('overview.coupons'), values: series((d) => d.coupons_redeemed), color: '#be185d' },
              { label: t('overview.new_cards'), values: series((d) => d.new_cards), color: '#0e7490' },
            ]}
          />
          <DayChart title={t('overview.chart_sms')} days={days} digits={2} series={[{ label: t('overview.sms_spend'), values: series((d) => d.sms_spend), color: '#7c3aed' }]} />
        </div>
      )}
      {(tiers.data?.data.length ?? 0) > 0 && (
        <section aria-labelledby="overview-tiers">
          <h2 id="overview-tiers">{t('overview.tiers')}</h2>
          <div class="charts">
            {tiers.data!.data.map((p) => (
              <BarChart
                key={p.partner_card_id}
                title={t('overview.chart_tiers', { programme: p.title[locale] || p.title.en })}
                categoryLabel={t('overview.tier')}
                valueLabel={t('overview.cards')}
                bars={p.tiers.map((x) => ({
                  label: x.name ? x.name[locale] || x.name.en : t('overview.no_tier'),
                  value: x.cards,
                  color: x.tier_id === null ? NO_TIER_COLOR : (x.color ?? TIER_COLOR),
                }))}
              />
            ))}
          </div>
        </section>
      )}
    </Page>
  );
}
