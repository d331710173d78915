// Partners: every business on the platform, and the form that creates one (its first
// sign-in uses the e-mail and password given here).
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { Field, Form, Submit, text, useForm } from '../../components/form';
import { formatDateTime, useI18n } from '../../i18n';

export default function Partners() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const list = useLoad(() => api.GET('/{locale}/admin/partners', { params: { query: { page, per_page: 20 } } }), [page]);
  const form = useForm();
  const [created, setCreated] = useState<string>();
  const [formKey, setFormKey] = useState(0);

  const create = async (fd: FormData) => {
    const body = { name: text(fd, 'name'), email: text(fd, 'email'), password: String(fd.get('password') ?? '') };
    const r = await form.run(() => api.POST('/{locale}/admin/partners', { body }));
    if (r) {
      setCreated(t('partners.created', { name: r.data.name, email: r.data.email }));
      setFormKey((k) => k + 1);
      list.reload();
    }
  };

  return (
    <Page title={t('nav.partners')}>
      {created && (
        <div class="notice notice--success" role="status">
          {created}
        </div>
      )}
      <section class="panel" aria-labelledby="partner-create">
        <h2 id="partner-create">{t('partners.create')}</h2>
        <Form form={form} onSubmit={create} label={t('partners.create')} key={formKey}>
          <div class="grid">
            <Field name="name" label={t('partners.name')} maxLength={255} />
            <Field name="email" label={t('partners.email')} type="email" autoComplete="off" />
            <Field name="password" label={t('partners.password')} hint={t('partners.password_hint')} type="password" autoComplete="new-password" />
          </div>
          <Submit form={form}>{t('partners.create')}</Submit>
        </Form>
      </section>
      <LoadError failure={list.failure} />
      <Table
        caption={t('partners.list')}
        loading={list.loading}
        empty={t('partners.none')}
        head={[t('common.id'), t('partners.name'), t('partners.email'), t('common.status'), t('common.created'), t('common.actions')]}
        rows={(list.data?.data ?? []).map((p) => [
          p.id,
          p.name,
          p.email,
          t(`partners.status_${p.status}`),
          formatDateTime(locale, p.created_at),
          <span class="row-actions">
            <a href={`/dashboard/admin/messages?partner=${p.id}`}>{t('nav.messages')}</a>
            <a href={`/dashboard/admin/commission?partner=${p.id}`}>{t('nav.commission')}</a>
            <a href={`/dashboard/admin/statistics?partner=${p.id}`}>{t('nav.statistics')}</a>
          </span>,
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('partners.list')} />
    </Page>
  );
}
