// The admin pages that act on one partner pick it here; the choice is kept in ?partner=.
import { api } from '../api/client';
import { useT } from '../i18n';
import { useLoad, useQuery } from './data';

export function usePartners() {
  return useLoad(() => api.GET('/{locale}/admin/partners', { params: { query: { per_page: 100 } } }), []);
}

export function PartnerPicker() {
  const t = useT();
  const [query, setQuery] = useQuery();
  const partners = usePartners();
  return (
    <div class="filters">
      <label for="partner-pick">{t('admin.partner')}</label>
      <select id="partner-pick" value={query.partner ?? ''} onChange={(e) => setQuery({ partner: e.currentTarget.value })}>
        <option value="">{t('admin.choose_partner')}</option>
        {(partners.data?.data ?? []).map((p) => (
          <option key={p.id} value={String(p.id)}>
            {p.name} (#{p.id})
          </option>
        ))}
      </select>
    </div>
  );
}

export const pickedPartner = (query: Record<string, string>) => (query.partner ? Number(query.partner) : undefined);
