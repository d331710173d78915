// API keys (DESIGN.md §2): create with a name — the secret is shown once, with a copy
// button, and never again — list, revoke at once.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Confirm, CopyButton } from '../../components/confirm';
import { Page } from '../../components/console';
import { LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { Field, Form, Submit, text, useForm } from '../../components/form';
import { formatDateTime, useI18n } from '../../i18n';

interface Created {
  id: number;
  name: string;
  key: string;
  secret: string;
}

export default function ApiKeys() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const list = useLoad(() => api.GET('/{locale}/partners/api-keys', { params: { query: { page, per_page: 20 } } }), [page]);
  const form = useForm();
  const revokeForm = useForm();
  const [created, setCreated] = useState<Created>();
  const [revoking, setRevoking] = useState<{ id: number; name: string }>();

  const create = async (fd: FormData, el: HTMLFormElement) => {
    const r = await form.run(() => api.POST('/{locale}/partners/api-keys', { body: { name: text(fd, 'name') } }));
    if (r) {
      setCreated(r.data);
      el.reset();
      list.reload();
    }
  };
  const revoke = async () => {
    if (!revoking) return;
    const id = revoking.id;
    setRevoking(undefined);
    const r = await revokeForm.run(() => api.DELETE('/{locale}/partners/api-keys/{id}', { params: { path: { id } } }));
    if (r) {
      if (created?.id === id) setCreated(undefined);
      list.reload();
    }
  };

  return (
    <Page title={t('nav.api_keys')}>
      <p class="lead">{t('api_keys.intro')}</p>
      {created && (
        <section class="panel panel--success" aria-labelledby="new-key">
          <h2 id="new-key">{t('api_keys.created', { name: created.name })}</h2>
          <p>{t('api_keys.secret_once')}</p>
          <dl class="secret">
            <dt>{t('api_keys.key')}</dt>
            <dd>
              <code data-testid="api-key">{created.key}</code> <CopyButton value={created.key} label={t('api_keys.copy_key')} />
            </dd>
            <dt>{t('api_keys.secret')}</dt>
            <dd>
              <code data-testid="api-secret">{created.secret}</code> <CopyButton value={created.secret} label={t('api_keys.copy_secret')} />
            </dd>
          </dl>
          <p>{t('api_keys.try')}</p>
          <pre class="code">{`curl -X POST ${location.origin}/${locale}/shop/validate-credentials \\\n  -H "X-API-Key: ${created.key}" \\\n  -H "X-API-Secret: ${created.secret}"`}</pre>
          <button type="button" class="button button--secondary" onClick={() => setCreated(undefined)}>
            {t('api_keys.done')}
          </button>
        </section>
      )}
      <section class="panel" aria-labelledby="create-key">
        <h2 id="create-key">{t('api_keys.create')}</h2>
        <Form form={form} onSubmit={create} label={t('api_keys.create')} class="form form--inline">
          <Field name="name" label={t('api_keys.name')} hint={t('api_keys.name_hint')} maxLength={255} />
          <Submit form={form}>{t('api_keys.create')}</Submit>
        </Form>
      </section>
      <LoadError failure={list.failure ?? revokeForm.failure} />
      <Table
        caption={t('api_keys.list')}
        loading={list.loading}
        empty={t('api_keys.none')}
        head={[t('api_keys.name'), t('api_keys.key'), t('common.created'), t('common.actions')]}
        rows={(list.data?.data ?? []).map((k) => [
          <span id={`key-${k.id}`}>{k.name}</span>,
          <code>{k.key}</code>,
          formatDateTime(locale, k.created_at),
          <button type="button" class="button button--danger button--small" aria-describedby={`key-${k.id}`} onClick={() => setRevoking(k)}>
            {t('api_keys.revoke')}
          </button>,
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('api_keys.list')} />
      <Confirm
        open={revoking !== undefined}
        title={t('api_keys.revoke_title', { name: revoking?.name ?? '' })}
        confirm={t('api_keys.revoke')}
        onConfirm={revoke}
        onClose={() => setRevoking(undefined)}
      >
        <p>{t('api_keys.revoke_text')}</p>
      </Confirm>
    </Page>
  );
}
