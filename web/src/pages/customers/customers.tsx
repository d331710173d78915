// Customers: everyone holding one of the partner's cards, searchable, paginated, with their
// cards, each card's tier (DESIGN.md §13) and points debt (§12: what a return took back beyond
// the balance, paid off by later earnings). **View** opens the customer below the list (kept
// in the URL as ?customer=): each card's tier, where it stands (value, next tier and what
// remains, kept until) and its tier history.
import { useEffect, useRef } from 'preact/hooks';
import { api } from '../../api/client';
import type { paths } from '../../api/loyalty-api';
import { Page } from '../../components/console';
import { Facts, LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { formatDateTime, formatEur, formatNumber, useI18n, type Locale, type Translate } from '../../i18n';
import { Swatch } from '../card-programmes/tiers';

type Customer = paths['/{locale}/partners/customers']['get']['responses'][200]['content']['application/json']['data'][number];
type Card = Customer['cards'][number];
type Named = { en: string; lt: string };

export function TierBadge({ tier }: { tier: Card['tier'] }) {
  const { locale } = useI18n();
  if (!tier) return <span class="tier-badge">—</span>;
  return (
    <span class="tier-badge">
      <Swatch color={tier.color} /> {tier.name[locale] || tier.name.en}
    </span>
  );
}

/** A qualifying value in its basis: points, or EUR for amount_spent. */
function valueText(locale: Locale, t: Translate, basis: Card['tier_progress']['basis'], value: number) {
  return basis === 'amount_spent' ? formatEur(locale, value) : t('customers.points_n', { points: formatNumber(locale, value) });
}

function TierHistory({ card }: { card: Card }) {
  const { t, locale } = useI18n();
  const history = useLoad(() => api.GET('/{locale}/partners/loyalty-cards/{id}/tier-history', { params: { path: { id: card.id }, query: { per_page: 20 } } }), [card.id]);
  const name = (x: { name: Named } | null) => (x ? x.name[locale] || x.name.en : '—');
  const caption = t('customers.tier_history', { card: card.card_number });
  return (
    <>
      <LoadError failure={history.failure} />
      <Table
        caption={caption}
        loading={history.loading}
        empty={t('customers.no_tier_history')}
        head={[t('customers.tier_when'), t('customers.tier_from'), t('customers.tier_to'), t('customers.tier_reason')]}
        rows={(history.data?.data ?? []).map((h) => [formatDateTime(locale, h.at), name(h.from), name(h.to), t(`customers.tier_reason_${h.reason}`)])}
      />
    </>
  );
}

function CustomerView({ customer, programmes, onClose }: { customer: Customer; programmes: Map<number, Named>; onClose: () => void }) {
  const { t, locale } = useI18n();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [customer.id]);
  const title = customer.name ?? customer.phone;
  return (
    <section class="panel" aria-labelledby="customer-view">
      <h2 id="customer-view" tabIndex={-1} ref={heading}>
        {t('customers.view_title', { name: title })}
      </h2>
      <Facts
        items={[
          [t('customers.name'), customer.name],
          [t('customers.phone'), customer.phone],
          [t('customers.email'), customer.email],
          [t('customers.balance'), formatNumber(locale, customer.points_balance)],
          [t('customers.debt'), formatNumber(locale, customer.points_debt)],
          [t('customers.since'), formatDateTime(locale, customer.created_at)],
        ]}
      />
      {customer.cards.map((card) => {
        const p = card.tier_progress;
        const programme = programmes.get(card.partner_card_id);
        return (
          <section key={card.id} class="subpanel" aria-labelledby={`customer-card-${card.id}`}>
            <h3 id={`customer-card-${card.id}`}>
              {t('customers.card_title', { card: card.card_number, programme: programme ? programme[locale] || programme.en : `#${card.partner_card_id}` })}
            </h3>
            <Facts
              items={[
                [t('customers.tier'), <TierBadge tier={card.tier} />],
                [t('customers.tier_value', { basis: t(`tiers.basis_${p.basis}`) }), valueText(locale, t, p.basis, p.value)],
                [t('customers.tier_window'), t(`tiers.window_${p.window}`)],
                [
                  t('customers.tier_next'),
                  p.next ? t('customers.tier_next_text', { name: p.next.name[locale] || p.next.name.en, remaining: valueText(locale, t, p.basis, p.next.remaining) }) : t('customers.tier_top'),
                ],
                [t('customers.tier_keep_until'), p.keep_until ? formatDateTime(locale, p.keep_until) : null],
                [t('customers.balance'), formatNumber(locale, card.points_balance)],
              ]}
            />
            <TierHistory card={card} />
          </section>
        );
      })}
      <button type="button" class="button button--secondary" onClick={onClose}>
        {t('customers.close')}
      </button>
    </section>
  );
}

export default function Customers() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const search = query.search ?? '';
  const viewing = query.customer ? Number(query.customer) : undefined;
  const list = useLoad(
    () => api.GET('/{locale}/partners/customers', { params: { query: { page, per_page: 20, ...(search ? { search } : {}) } } }),
    [page, search],
  );
  const cards = useLoad(() => api.GET('/{locale}/partners/cards', { params: { query: { per_page: 100 } } }), []);
  const programmes = new Map((cards.data?.data ?? []).map((c) => [c.id, c.title] as const));
  const shown = viewing === undefined ? undefined : list.data?.data.find((c) => c.id === viewing);
  return (
    <Page title={t('nav.customers')}>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ search: String(new FormData(e.currentTarget).get('search') ?? '').trim(), customer: undefined });
        }}
      >
        <label for="customer-search">{t('customers.search')}</label>
        <input id="customer-search" name="search" type="search" defaultValue={search} aria-describedby="customer-search-hint" />
        <span class="hint" id="customer-search-hint">
          {t('customers.search_hint')}
        </span>
        <button type="submit" class="button">
          {t('common.search')}
        </button>
      </form>
      <LoadError failure={list.failure} />
      <Table
        caption={t('customers.list')}
        loading={list.loading}
        empty={t('customers.none')}
        head={[
          t('common.id'),
          t('customers.name'),
          t('customers.phone'),
          t('customers.email'),
          t('customers.cards_tiers'),
          t('customers.balance'),
          t('customers.debt'),
          t('customers.since'),
          t('common.actions'),
        ]}
        rows={(list.data?.data ?? []).map((c) => [
          c.id,
          <span id={`customer-${c.id}`}>{c.name ?? '—'}</span>,
          c.phone,
          c.email ?? '—',
          c.cards.map((k) => (
            <span key={k.id} class="card-line">
              <a class="chip" href={`/dashboard/transactions?card_id=${k.id}`}>
                {k.card_number}
              </a>{' '}
              <TierBadge tier={k.tier} />
              {k.points_debt > 0 && <span class="neg"> {t('customers.card_debt', { points: formatNumber(locale, k.points_debt) })}</span>}
            </span>
          )),
          formatNumber(locale, c.points_balance),
          formatNumber(locale, c.points_debt),
          formatDateTime(locale, c.created_at),
          <button
            type="button"
            class="button button--secondary button--small"
            aria-describedby={`customer-${c.id}`}
            aria-pressed={viewing === c.id}
            onClick={() => setQuery({ customer: String(c.id), page: query.page })}
          >
            {t('customers.view')}
          </button>,
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(p) => setQuery({ page: String(p), customer: undefined })} label={t('customers.list')} />
      {shown && <CustomerView key={shown.id} customer={shown} programmes={programmes} onClose={() => setQuery({ customer: undefined, page: query.page })} />}
    </Page>
  );
}
