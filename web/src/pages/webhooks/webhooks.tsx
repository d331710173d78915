// Webhooks (DESIGN.md §4): the signing secret (shown on request, rotated with a
// confirmation) and every delivery with its attempts.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Confirm, CopyButton } from '../../components/confirm';
import { Page } from '../../components/console';
import { LoadError, Pager, Status, Table, useLoad, useQuery } from '../../components/data';
import { useForm } from '../../components/form';
import { formatDateTime, useI18n } from '../../i18n';

function Attempts({ id }: { id: number }) {
  const { t, locale } = useI18n();
  const detail = useLoad(() => api.GET('/{locale}/partners/webhook-deliveries/{id}', { params: { path: { id } } }), [id]);
  return (
    <>
      <LoadError failure={detail.failure} />
      <Table
        caption={t('webhooks.attempts', { id })}
        loading={detail.loading}
        empty={t('webhooks.no_attempts')}
        head={['#', t('common.date'), t('webhooks.http_status'), t('webhooks.error'), t('webhooks.duration')]}
        rows={(detail.data?.data.attempts ?? []).map((a) => [a.attempt_no, formatDateTime(locale, a.attempted_at), a.status_code ?? '—', a.error ?? '—', a.duration_ms === null ? '—' : `${a.duration_ms} ms`])}
      />
    </>
  );
}

export default function Webhooks() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const deliveries = useLoad(() => api.GET('/{locale}/partners/webhook-deliveries', { params: { query: { page, per_page: 20 } } }), [page]);
  const secretForm = useForm();
  const [secret, setSecret] = useState<string>();
  const [rotating, setRotating] = useState(false);
  const [open, setOpen] = useState<number>();

  const show = async () => {
    const r = await secretForm.run(() => api.GET('/{locale}/partners/webhook-secret'));
    if (r) setSecret(r.data.secret);
  };
  const rotate = async () => {
    setRotating(false);
    const r = await secretForm.run(() => api.POST('/{locale}/partners/webhook-secret/rotate'));
    if (r) setSecret(r.data.secret);
  };

  return (
    <Page title={t('nav.webhooks')}>
      <section class="panel" aria-labelledby="webhook-secret">
        <h2 id="webhook-secret">{t('webhooks.secret')}</h2>
        <p>{t('webhooks.intro')}</p>
        <LoadError failure={secretForm.failure} />
        {secret ? (
          <p>
            <code data-testid="webhook-secret">{secret}</code> <CopyButton value={secret} label={t('webhooks.copy')} />
          </p>
        ) : (
          <button type="button" class="button button--secondary" onClick={show}>
            {t('webhooks.show')}
          </button>
        )}{' '}
        <button type="button" class="button button--danger" onClick={() => setRotating(true)}>
          {t('webhooks.rotate')}
        </button>
      </section>
      <LoadError failure={deliveries.failure} />
      <Table
        caption={t('webhooks.deliveries')}
        loading={deliveries.loading}
        empty={t('webhooks.none')}
        head={[t('common.date'), t('webhooks.event'), t('webhooks.url'), t('common.status'), t('webhooks.attempts_count'), t('webhooks.last'), '']}
        rows={(deliveries.data?.data ?? []).map((d) => [
          formatDateTime(locale, d.created_at),
          d.event_type,
          <span class="clip">{d.url}</span>,
          <Status value={d.status} label={t(`webhooks.status_${d.status}`)} />,
          d.attempts,
          d.last_status_code ?? d.last_error ?? '—',
          <button type="button" class="button button--secondary button--small" aria-expanded={open === d.id} onClick={() => setOpen(open === d.id ? undefined : d.id)}>
            {t('webhooks.show_attempts')}
          </button>,
        ])}
      />
      <Pager meta={deliveries.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('webhooks.deliveries')} />
      {open !== undefined && <Attempts id={open} />}
      <Confirm open={rotating} title={t('webhooks.rotate_title')} confirm={t('webhooks.rotate')} onConfirm={rotate} onClose={() => setRotating(false)}>
        <p>{t('webhooks.rotate_text')}</p>
      </Confirm>
    </Page>
  );
}
