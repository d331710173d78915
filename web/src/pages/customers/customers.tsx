// Customers: everyone holding one of the partner's cards, searchable, paginated, with their
// cards and each card's points debt (DESIGN.md §12: what a return took back beyond the balance,
// paid off by later earnings).
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { formatDateTime, formatNumber, useI18n } from '../../i18n';

export default function Customers() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const search = query.search ?? '';
  const list = useLoad(
    () => api.GET('/{locale}/partners/customers', { params: { query: { page, per_page: 20, ...(search ? { search } : {}) } } }),
    [page, search],
  );
  return (
    <Page title={t('nav.customers')}>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ search: String(new FormData(e.currentTarget).get('search') ?? '').trim() });
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
        head={[t('common.id'), t('customers.name'), t('customers.phone'), t('customers.email'), t('customers.cards'), t('customers.balance'), t('customers.debt'), t('customers.since')]}
        rows={(list.data?.data ?? []).map((c) => [
          c.id,
          c.name ?? '—',
          c.phone,
          c.email ?? '—',
          c.cards.map((k) => (
            <span key={k.id}>
              <a class="chip" href={`/dashboard/transactions?card_id=${k.id}`}>
                {k.card_number}
              </a>
              {k.points_debt > 0 && <span class="neg"> {t('customers.card_debt', { points: formatNumber(locale, k.points_debt) })}</span>}
            </span>
          )),
          formatNumber(locale, c.points_balance),
          formatNumber(locale, c.points_debt),
          formatDateTime(locale, c.created_at),
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('customers.list')} />
    </Page>
  );
}
