// Card programmes (spec "Partner card"): the list (filter active/inactive, paginated) and the
// create form; each programme opens on its own page to be edited or deleted.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { useForm } from '../../components/form';
import { formatDateTime, useI18n } from '../../i18n';
import { CardForm, cardBody } from './card-form';

export default function CardProgrammes() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const active = query.is_active;
  const list = useLoad(
    () => api.GET('/{locale}/partners/cards', { params: { query: { page, per_page: 20, ...(active ? { is_active: active === 'true' } : {}) } } }),
    [page, active],
  );
  const form = useForm();
  const [created, setCreated] = useState<string>();
  const [formKey, setFormKey] = useState(0);

  const create = async (fd: FormData) => {
    const r = await form.run(() => api.POST('/{locale}/partners/cards', { body: cardBody(fd) }));
    if (r) {
      setCreated(t('cards.created', { name: r.data.title[locale] }));
      setFormKey((k) => k + 1);
      list.reload();
    }
  };

  return (
    <Page title={t('nav.card_programmes')}>
      {created && (
        <div class="notice notice--success" role="status">
          {created}
        </div>
      )}
      <div class="filters">
        <label for="card-active">{t('cards.filter_active')}</label>
        <select id="card-active" value={active ?? ''} onChange={(e) => setQuery({ is_active: e.currentTarget.value })}>
          <option value="">{t('common.all')}</option>
          <option value="true">{t('cards.active')}</option>
          <option value="false">{t('cards.inactive')}</option>
        </select>
      </div>
      <LoadError failure={list.failure} />
      <Table
        caption={t('cards.list')}
        loading={list.loading}
        empty={t('cards.none')}
        head={[t('common.id'), t('cards.title'), t('common.status'), t('common.updated')]}
        rows={(list.data?.data ?? []).map((c) => [
          c.id,
          <a href={`/dashboard/card-programmes/${c.id}`}>{c.title[locale] || c.title.en}</a>,
          c.is_active ? t('cards.active') : t('cards.inactive'),
          formatDateTime(locale, c.updated_at),
        ])}
      />
      <Pager meta={list.data?.pagination} onPage={(p) => setQuery({ page: String(p) })} label={t('cards.list')} />
      <section class="panel" aria-labelledby="card-create">
        <h2 id="card-create">{t('cards.create')}</h2>
        <CardForm key={formKey} form={form} onSubmit={create} submit={t('cards.create')} />
      </section>
    </Page>
  );
}
