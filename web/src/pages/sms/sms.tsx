// SMS: the account (balance, approved senders, prices, transliteration) and the messages
// with their status. Statuses are re-read every 5 s (the spec's advised poll interval) while
// a message on screen is still on its way: the API publishes no SMS event a browser may read.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, Pager, Status, Table, useLoad, useQuery } from '../../components/data';
import { Checkbox, Form, Submit, bool, useForm } from '../../components/form';
import { formatDateTime, formatEur, useI18n } from '../../i18n';

const PENDING = new Set(['queued', 'sent']);
export const SMS_REFRESH_MS = 5000;

export default function Sms() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const account = useLoad(() => api.GET('/{locale}/partners/sms-account'), []);
  const messages = useLoad(() => api.GET('/{locale}/partners/sms/messages', { params: { query: { page, per_page: 20 } } }), [page]);
  const form = useForm();
  const [saved, setSaved] = useState(false);

  const rows = messages.data?.data ?? [];
  const live = rows.some((m) => PENDING.has(m.status));
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => messages.reload(), SMS_REFRESH_MS);
    return () => clearInterval(timer);
  }, [live]);

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
        {live ? t('sms.live') : ''}
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
