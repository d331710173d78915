// Webhooks (DESIGN.md §4, §14): the signing secret (shown on request, rotated with a
// confirmation), the partner's event subscriptions (add, edit, pause, delete, test) and every
// delivery with its attempts.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Confirm, CopyButton } from '../../components/confirm';
import { Page } from '../../components/console';
import { LoadError, Pager, Status, Table, useLoad, useQuery } from '../../components/data';
import { Checkbox, CheckboxGroup, Field, Form, Submit, changedFields, nullText, text, useForm } from '../../components/form';
import { formatDateTime, useI18n } from '../../i18n';

/** The event types of DESIGN.md §14 (the API refuses any other name). */
const EVENT_TYPES = [
  'transaction.created',
  'transaction.returned',
  'transaction.reversed',
  'card.created',
  'card.tier_changed',
  'coupon.claimed',
  'coupon.redeemed',
  'coupon.rolled_back',
  'campaign.exhausted',
  'game.reward_claimed',
  'import.finished',
  'sms.status',
] as const;

interface Subscription {
  id: number;
  url: string;
  events: string[];
  is_active: boolean;
  description: string | null;
  created_at: string;
}

function Subscriptions({ onTested }: { onTested: () => void }) {
  const { t, locale } = useI18n();
  const list = useLoad(() => api.GET('/{locale}/partners/webhooks'), []);
  const form = useForm();
  const rowForm = useForm();
  const [editing, setEditing] = useState<Subscription>();
  const [deleting, setDeleting] = useState<Subscription>();
  const [notice, setNotice] = useState<string>();

  const save = async (fd: FormData, el: HTMLFormElement) => {
    const picked = fd.getAll('events').map(String);
    const body = {
      url: text(fd, 'url'),
      events: picked.includes('*') ? ['*'] : picked,
      description: nullText(fd, 'description'),
      is_active: fd.get('is_active') === 'true',
    };
    const r = editing
      ? await form.run(() => api.PUT('/{locale}/partners/webhooks/{id}', { params: { path: { id: editing.id } }, body: changedFields(body, editing) }))
      : await form.run(() => api.POST('/{locale}/partners/webhooks', { body }));
    if (r) {
      setNotice(t(editing ? 'webhooks.sub_updated' : 'webhooks.sub_created', { url: r.data.url }));
      setEditing(undefined);
      el.reset();
      list.reload();
    }
  };
  const toggle = async (s: Subscription) => {
    const r = await rowForm.run(() => api.PUT('/{locale}/partners/webhooks/{id}', { params: { path: { id: s.id } }, body: { is_active: !s.is_active } }));
    if (r) {
      setNotice(t(r.data.is_active ? 'webhooks.sub_activated' : 'webhooks.sub_deactivated', { url: r.data.url }));
      list.reload();
    }
  };
  const test = async (s: Subscription) => {
    const r = await rowForm.run(() => api.POST('/{locale}/partners/webhooks/{id}/test', { params: { path: { id: s.id } } }));
    if (r) {
      setNotice(t('webhooks.test_sent', { url: s.url }));
      onTested();
    }
  };
  const remove = async () => {
    const s = deleting;
    setDeleting(undefined);
    if (!s) return;
    const r = await rowForm.run(() => api.DELETE('/{locale}/partners/webhooks/{id}', { params: { path: { id: s.id } } }));
    if (r) {
      setNotice(t('webhooks.sub_deleted', { url: s.url }));
      list.reload();
    }
  };
  const options = [{ value: '*', label: t('webhooks.all_events') }, ...EVENT_TYPES.map((e) => ({ value: e, label: e }))];
  const title = editing ? t('webhooks.sub_edit', { id: editing.id }) : t('webhooks.sub_add');

  return (
    <>
      {notice && (
        <div class="notice notice--success" role="status">
          {notice}
        </div>
      )}
      <section class="panel" aria-labelledby="webhook-subscription-form">
        <h2 id="webhook-subscription-form">{title}</h2>
        <p>{t('webhooks.sub_intro')}</p>
        <Form form={form} onSubmit={save} label={title} key={editing?.id ?? 'new'}>
          <Field name="url" label={t('webhooks.url')} hint={t('webhooks.url_hint')} type="url" inputMode="url" defaultValue={editing?.url ?? ''} maxLength={2048} />
          <CheckboxGroup name="events" legend={t('webhooks.events')} hint={t('webhooks.events_hint')} options={options} checked={editing?.events ?? []} />
          <Field name="description" label={t('webhooks.description')} defaultValue={editing?.description ?? ''} maxLength={500} />
          <Checkbox name="is_active" label={t('webhooks.active')} checked={editing?.is_active ?? true} />
          <div class="actions">
            <Submit form={form}>{editing ? t('common.save') : t('webhooks.sub_add')}</Submit>
            {editing && (
              <button type="button" class="button button--secondary" onClick={() => setEditing(undefined)}>
                {t('common.cancel')}
              </button>
            )}
          </div>
        </Form>
      </section>
      <LoadError failure={list.failure ?? rowForm.failure} />
      <Table
        caption={t('webhooks.subscriptions')}
        loading={list.loading}
        empty={t('webhooks.no_subscriptions')}
        head={[t('webhooks.url'), t('webhooks.events'), t('common.status'), t('webhooks.description'), t('common.created'), t('common.actions')]}
        rows={(list.data?.data ?? []).map((s) => [
          <span class="clip" id={`subscription-${s.id}`}>
            {s.url}
          </span>,
          s.events.includes('*') ? t('webhooks.all_events') : s.events.join(', '),
          <Status value={s.is_active ? 'active' : 'inactive'} label={t(s.is_active ? 'webhooks.active_yes' : 'webhooks.active_no')} />,
          s.description ?? '—',
          formatDateTime(locale, s.created_at),
          <span class="row-actions">
            <button type="button" class="button button--secondary button--small" aria-describedby={`subscription-${s.id}`} onClick={() => void test(s)}>
              {t('webhooks.test')}
            </button>
            <button type="button" class="button button--secondary button--small" aria-describedby={`subscription-${s.id}`} onClick={() => setEditing(s)}>
              {t('common.edit')}
            </button>
            <button type="button" class="button button--secondary button--small" aria-describedby={`subscription-${s.id}`} onClick={() => void toggle(s)}>
              {t(s.is_active ? 'webhooks.deactivate' : 'webhooks.activate')}
            </button>
            <button type="button" class="button button--danger button--small" aria-describedby={`subscription-${s.id}`} onClick={() => setDeleting(s)}>
              {t('common.delete')}
            </button>
          </span>,
        ])}
      />
      <Confirm open={deleting !== undefined} title={t('webhooks.sub_delete_title')} confirm={t('common.delete')} onConfirm={remove} onClose={() => setDeleting(undefined)}>
        <p>{t('webhooks.sub_delete_text', { url: deleting?.url ?? '' })}</p>
      </Confirm>
    </>
  );
}

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
      <Subscriptions
        onTested={() => {
          deliveries.reload();
          // The ping goes at once: show its outcome a moment later.
          setTimeout(() => deliveries.reload(), 1500);
        }}
      />
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
