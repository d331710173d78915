// SMS: the account (balance, approved senders, prices, transliteration) and the messages
// with their status. Statuses arrive live as `sms.status` events on the partner's private
// channel; while that channel is not subscribed (a blocked WebSocket, a proxy) they are
// re-read every 5 s (the spec's advised poll interval) as long as a message on screen is on
// its way.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api/client';
import { listenPartner } from '../../api/realtime';
import { Page } from '../../components/console';
import { LoadError, Pager, Status, Table, useLoad, useQuery } from '../../components/data';
import { Checkbox, Form, Submit, bool, useForm } from '../../components/form';
import { formatDateTime, formatEur, useI18n } from '../../i18n';

const PENDING = new Set(['queued', 'sent']);
export const SMS_REFRESH_MS = 5000;
const RELOAD_AT_MOST_EVERY_MS = 1000;
const MAX_UPDATES = 200;

type Message = NonNullable<Awaited<ReturnType<typeof loadMessages>>['data']>['data'][number];
type StatusEvent = Pick<Message, 'message_id' | 'status' | 'sent_at' | 'delivered_at' | 'failed_at' | 'expired_at' | 'error_message' | 'refunded'>;

const loadMessages = (page: number) => api.GET('/{locale}/partners/sms/messages', { params: { query: { page, per_page: 20 } } });

/** Statuses only move forward: queued, sent, then a final one. */
const rank = (status: string) => (status === 'queued' ? 0 : status === 'sent' ? 1 : 2);

function isStatusEvent(data: unknown): data is StatusEvent {
  const d = data as Partial<StatusEvent> | null;
  return typeof d === 'object' && d !== null && typeof d.message_id === 'string' && typeof d.status === 'string';
}

export default function Sms() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const account = useLoad(() => api.GET('/{locale}/partners/sms-account'), []);
  const messages = useLoad(() => loadMessages(page), [page]);
  const form = useForm();
  const [saved, setSaved] = useState(false);
  const [live, setLive] = useState(false);
  const [updates, setUpdates] = useState<Map<string, StatusEvent>>(new Map());

  const loaded = messages.data?.data ?? [];
  // An event newer than the list replaces its status fields; an older one (the list was read
  // after it) is ignored.
  const rows = loaded.map((m) => {
    const u = updates.get(m.message_id);
    return u && rank(u.status) >= rank(m.status) ? { ...m, ...u } : m;
  });
  const onScreen = useRef<{ ids: Set<string>; page: number }>({ ids: new Set(), page });
  onScreen.current = { ids: new Set(loaded.map((m) => m.message_id)), page };
  const reload = useRef(messages.reload);
  reload.current = messages.reload;
  const reloadSoon = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  // Events the list has caught up with are dropped once it is read again.
  useEffect(() => {
    if (!messages.data) return;
    const listed = new Map(messages.data.data.map((m) => [m.message_id, m.status]));
    setUpdates((m) => {
      const kept = new Map([...m].filter(([id, u]) => !listed.has(id) || rank(u.status) > rank(listed.get(id)!)));
      return kept.size === m.size ? m : kept;
    });
  }, [messages.data]);

  useEffect(() => {
    const channel = listenPartner((event, data) => {
      if (event !== 'sms.status' || !isStatusEvent(data)) return;
      setUpdates((m) => {
        const next = new Map(m).set(data.message_id, data);
        // Bounded: the oldest go first (a page shows 20; the rest are for rows about to appear).
        for (const id of next.keys()) {
          if (next.size <= MAX_UPDATES) break;
          next.delete(id);
        }
        return next;
      });
      // A message just sent from elsewhere (a till, the API) appears on the first page: its
      // first event is its hand-over (or its failure before it). Reloads are at most one a second.
      const fresh = data.status === 'sent' || data.sent_at === null;
      if (fresh && !onScreen.current.ids.has(data.message_id) && onScreen.current.page === 1 && reloadSoon.current === undefined) {
        reloadSoon.current = setTimeout(() => {
          reloadSoon.current = undefined;
          reload.current();
        }, RELOAD_AT_MOST_EVERY_MS);
      }
    }, setLive);
    return () => {
      channel.close();
      clearTimeout(reloadSoon.current);
    };
  }, []);

  // Subscribed: read once more, for changes made before it was. Not subscribed: poll while a
  // message on screen is on its way.
  const pending = rows.some((m) => PENDING.has(m.status));
  useEffect(() => {
    if (live) messages.reload();
  }, [live]);
  useEffect(() => {
    if (live || !pending) return;
    const timer = setInterval(() => messages.reload(), SMS_REFRESH_MS);
    return () => clearInterval(timer);
  }, [live, pending]);

  const save = async (fd: FormData) => {
    const r = await form.run(() => api.PUT('/{locale}/partners/sms-account', { body: { transliterate: bool(fd, 'transliterate') } }));
    if (r) {
      setSaved(true);
      account.reload();
    }
  };
  const a = account.data?.data;
  return (
    <Page title={t('nav.sms')}>
      <LoadError failure={account.failure} />
      {a && (
        <section class="panel" aria-labelledby="sms-account">
          <h2 id="sms-account">{t('sms.account')}</h2>
          <dl class="kpis">
            <div>
              <dt>{t('sms.balance')}</dt>
              <dd>{formatEur(locale, a.balance)}</dd>
            </div>
            <div>
              <dt>{t('sms.senders')}</dt>
              <dd>{a.senders.length > 0 ? a.senders.join(', ') : t('sms.no_senders')}</dd>
            </div>
            <div>
              <dt>{t('sms.prices')}</dt>
              <dd>
                {Object.entries(a.prices as Record<string, number>)
                  .map(([c, p]) => `${c === '*' ? t('sms.other_countries') : c} ${formatEur(locale, p)}`)
                  .join(' · ') || '—'}
              </dd>
            </div>
          </dl>
          <p class="hint">{t('sms.senders_hint')}</p>
          {saved && (
            <div class="notice notice--success" role="status">
              {t('common.saved')}
            </div>
          )}
          <Form form={form} onSubmit={save} label={t('sms.settings')} class="form form--inline" key={String(a.transliterate)}>
            <Checkbox name="transliterate" label={t('sms.transliterate')} checked={a.transliterate} />
            <Submit form={form}>{t('common.save')}</Submit>
          </Form>
        </section>
      )}
      <LoadError failure={messages.failure} />
      <p class="hint" aria-live="polite">
        {live ? t('sms.live') : pending ? t('sms.polling') : ''}
      </p>
      <Table
        caption={t('sms.messages')}
        loading={messages.loading && rows.length === 0}
        empty={t('sms.none')}
        head={[t('common.date'), t('sms.to'), t('sms.sender'), t('sms.text'), t('sms.parts'), t('sms.cost'), t('common.status')]}
        rows={rows.map((m) => [
          formatDateTime(locale, m.created_at),
          m.destination,
          m.source,
          <span class="clip">{m.message}</span>,
          m.parts,
          `${formatEur(locale, m.cost.amount)}${m.refunded ? ` (${t('sms.refunded')})` : ''}`,
          <>
            <Status value={m.status} label={t(`sms.status_${m.status}`)} />
            {m.error_message && <span class="hint"> {m.error_message}</span>}
          </>,
        ])}
      />
      <Pager meta={messages.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('sms.messages')} />
    </Page>
  );
}
