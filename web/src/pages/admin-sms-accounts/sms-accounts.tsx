// SMS accounts: every partner's balance, senders and prices; top up, approve or revoke a
// sender name, override prices per country (DESIGN.md §4, §7).
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { Checkbox, Field, Form, Submit, bool, text, useForm } from '../../components/form';
import { usePartners } from '../../components/partner-picker';
import { formatEur, useI18n } from '../../i18n';

interface Account {
  partner_id: number;
  balance: number;
  senders: string[];
  prices: Record<string, number>;
  transliterate: boolean;
}

/** "LT=0.029, *=0.06" ↔ {LT: 0.029, "*": 0.06}; a country left out is removed (null). */
function parsePrices(input: string, before: Record<string, number>): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const k of Object.keys(before)) out[k] = null;
  for (const part of input.split(/[,;\n]/)) {
    const [k, v] = part.split('=').map((s) => s.trim());
    if (!k) continue;
    const n = Number((v ?? '').replace(',', '.'));
    out[k.toUpperCase()] = (Number.isFinite(n) && v !== '' ? n : v) as number;
  }
  return out;
}

function Manage({ account, onChange }: { account: Account; onChange: () => void }) {
  const { t, locale } = useI18n();
  const topUp = useForm();
  const sender = useForm();
  const prices = useForm();
  const revoke = useForm();
  const [done, setDone] = useState<string>();
  const id = account.partner_id;
  const after = (message: string) => {
    setDone(message);
    onChange();
  };
  return (
    <section class="panel" aria-labelledby="sms-manage">
      <h2 id="sms-manage">{t('sms_accounts.manage', { id })}</h2>
      {done && (
        <div class="notice notice--success" role="status">
          {done}
        </div>
      )}
      <LoadError failure={revoke.failure} />
      <div class="columns">
        <Form
          form={topUp}
          label={t('sms_accounts.top_up')}
          onSubmit={async (fd, el) => {
            const amount = text(fd, 'amount').replace(',', '.');
            const r = await topUp.run(() => api.POST('/{locale}/admin/partners/sms-accounts/{partner_id}/top-up', { params: { path: { partner_id: id } }, body: { amount } }));
            if (r) {
              el.reset();
              after(t('sms_accounts.topped_up', { balance: formatEur(locale, r.data.balance) }));
            }
          }}
        >
          <Field name="amount" label={t('sms_accounts.amount')} hint={t('sms_accounts.amount_hint')} inputMode="decimal" />
          <Submit form={topUp}>{t('sms_accounts.top_up')}</Submit>
        </Form>
        <Form
          form={sender}
          label={t('sms_accounts.approve')}
          onSubmit={async (fd, el) => {
            const r = await sender.run(() => api.POST('/{locale}/admin/partners/{id}/sms-senders', { params: { path: { id } }, body: { name: text(fd, 'name') } }));
            if (r) {
              el.reset();
              after(t('sms_accounts.approved'));
            }
          }}
        >
          <Field name="name" label={t('sms_accounts.sender')} hint={t('sms_accounts.sender_hint')} maxLength={11} />
          <Submit form={sender}>{t('sms_accounts.approve')}</Submit>
        </Form>
        <Form
          form={prices}
          label={t('sms_accounts.prices')}
          key={JSON.stringify(account.prices) + String(account.transliterate)}
          onSubmit={async (fd) => {
            const body = { prices: parsePrices(text(fd, 'prices'), account.prices) as Record<string, number>, transliterate: bool(fd, 'transliterate') };
            const r = await prices.run(() => api.PUT('/{locale}/admin/partners/sms-accounts/{partner_id}', { params: { path: { partner_id: id } }, body }));
            if (r) after(t('common.saved'));
          }}
        >
          <Field
            name="prices"
            label={t('sms_accounts.prices')}
            hint={t('sms_accounts.prices_hint')}
            defaultValue={Object.entries(account.prices)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ')}
          />
          <Checkbox name="transliterate" label={t('sms.transliterate')} checked={account.transliterate} />
          <Submit form={prices}>{t('common.save')}</Submit>
        </Form>
      </div>
      {account.senders.length > 0 && (
        <ul class="chips" aria-label={t('sms.senders')}>
          {account.senders.map((s) => (
            <li key={s}>
              <span id={`sender-${s}`}>{s}</span>{' '}
              <button
                type="button"
                class="button button--danger button--small"
                aria-describedby={`sender-${s}`}
                onClick={async () => {
                  const r = await revoke.run(() => api.DELETE('/{locale}/admin/partners/{id}/sms-senders/{name}', { params: { path: { id, name: s } } }));
                  if (r) after(t('sms_accounts.revoked', { name: s }));
                }}
              >
                {t('api_keys.revoke')}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export default function SmsAccounts() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const list = useLoad(() => api.GET('/{locale}/admin/partners/sms-accounts', { params: { query: { page, per_page: 20 } } }), [page]);
  const partners = usePartners();
  const selected = query.partner ? Number(query.partner) : undefined;
  const name = (id: number) => partners.data?.data.find((p) => p.id === id)?.name ?? `#${id}`;
  const account = list.data?.data.find((a) => a.partner_id === selected);
  return (
    <Page title={t('nav.sms_accounts')}>
      <LoadError failure={list.failure} />
      <Table
        caption={t('sms_accounts.list')}
        loading={list.loading}
        empty={t('sms_accounts.none')}
        head={[t('admin.partner'), t('sms.balance'), t('sms.senders'), t('sms.prices'), t('common.actions')]}
        rows={(list.data?.data ?? []).map((a) => [
          <span id={`acct-${a.partner_id}`}>{name(a.partner_id)}</span>,
          formatEur(locale, a.balance),
          a.senders.join(', ') || '—',
          Object.entries(a.prices as Record<string, number>)
            .map(([k, v]) => `${k} ${v}`)
            .join(' · ') || t('sms_accounts.default_prices'),
          <button type="button" class="button button--secondary button--small" aria-describedby={`acct-${a.partner_id}`} aria-pressed={selected === a.partner_id} onClick={() => setQuery({ partner: String(a.partner_id), page: query.page })}>
            {t('sms_accounts.manage_short')}
          </button>,
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('sms_accounts.list')} />
      {account && <Manage key={account.partner_id} account={account as Account} onChange={list.reload} />}
    </Page>
  );
}
