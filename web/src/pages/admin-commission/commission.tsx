// Commission of one partner (DESIGN.md §7): the rate and its history, a new rate version,
// month by month amounts, locking and unlocking months, recomputing one.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, Pager, Status, Table, useLoad, useQuery } from '../../components/data';
import { Field, Form, Submit, optNumber, optText, useForm } from '../../components/form';
import { PartnerPicker, pickedPartner } from '../../components/partner-picker';
import { formatDateTime, formatEur, formatNumber, useI18n } from '../../i18n';

function PartnerCommission({ id }: { id: number }) {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const rates = useLoad(() => api.GET('/{locale}/admin/partners/{id}/commission/rates', { params: { path: { id } } }), [id]);
  const periods = useLoad(() => api.GET('/{locale}/admin/partners/{id}/commission/periods', { params: { path: { id }, query: { page, per_page: 12 } } }), [id, page]);
  const rateForm = useForm();
  const periodForm = useForm();
  const rowForm = useForm();
  const [done, setDone] = useState<string>();
  const refresh = (message: string) => {
    setDone(message);
    rates.reload();
    periods.reload();
  };
  const period = (fd: FormData) => optText(fd, 'period');
  const r = rates.data?.data;

  return (
    <>
      {done && (
        <div class="notice notice--success" role="status">
          {done}
        </div>
      )}
      <LoadError failure={rates.failure ?? periods.failure ?? rowForm.failure} />
      <section class="panel" aria-labelledby="rates">
        <h2 id="rates">{t('commission.rates')}</h2>
        <p>{r?.current ? t('commission.current', { rate: formatNumber(locale, r.current.rate_percent), from: r.current.valid_from }) : t('commission.no_rate')}</p>
        <Table
          caption={t('commission.history')}
          empty={t('commission.no_rate')}
          head={[t('commission.rate_percent'), t('commission.valid_from'), t('common.created')]}
          rows={(r?.history ?? []).map((h) => [`${formatNumber(locale, h.rate_percent)} %`, h.valid_from, formatDateTime(locale, h.created_at)])}
        />
        <Form
          form={rateForm}
          label={t('commission.set_rate')}
          class="form form--inline"
          onSubmit={async (fd, el) => {
            const body = { rate_percent: optNumber(fd, 'rate_percent') as number, ...(optText(fd, 'valid_from') ? { valid_from: optText(fd, 'valid_from') } : {}) };
            const ok = await rateForm.run(() => api.PUT('/{locale}/admin/partners/{id}/commission/rates', { params: { path: { id } }, body }));
            if (ok) {
              el.reset();
              refresh(t('common.saved'));
            }
          }}
        >
          <Field name="rate_percent" label={t('commission.rate_percent')} inputMode="decimal" />
          <Field name="valid_from" label={t('commission.valid_from')} hint={t('commission.valid_from_hint')} type="date" />
          <Submit form={rateForm}>{t('commission.set_rate')}</Submit>
        </Form>
      </section>
      <section class="panel" aria-labelledby="periods">
        <h2 id="periods">{t('commission.periods')}</h2>
        <Form form={periodForm} label={t('commission.period_actions')} class="form form--inline" onSubmit={() => undefined}>
          <Field name="period" label={t('commission.period')} hint={t('commission.period_hint')} placeholder="YYYY-MM" />
          <button
            type="button"
            class="button"
            onClick={async (e) => {
              const fd = new FormData((e.currentTarget as HTMLButtonElement).form!);
              const p = period(fd);
              const ok = await periodForm.run(() => api.POST('/{locale}/admin/partners/{id}/commission/lock', { params: { path: { id } }, body: p ? { period: p } : {} }));
              if (ok) refresh(t('commission.locked', { period: ok.data.period }));
            }}
          >
            {t('commission.lock')}
          </button>
          <button
            type="button"
            class="button button--secondary"
            onClick={async (e) => {
              const fd = new FormData((e.currentTarget as HTMLButtonElement).form!);
              const p = period(fd);
              const ok = await periodForm.run(() => api.POST('/{locale}/admin/partners/{id}/commission/force-sync', { params: { path: { id } }, body: p ? { period: p } : {} }));
              if (ok) refresh(t('commission.synced', { period: ok.data.period }));
            }}
          >
            {t('commission.sync')}
          </button>
        </Form>
        <Table
          caption={t('commission.periods')}
          loading={periods.loading}
          empty={t('commission.no_periods')}
          head={[t('commission.period'), t('common.status'), t('commission.purchases'), t('commission.base'), t('commission.amount'), t('common.actions')]}
          rows={(periods.data?.data ?? []).map((p) => [
            <span id={`period-${p.period}`}>{p.period}</span>,
            <Status value={p.status} label={t(`commission.status_${p.status}`)} />,
            `${formatNumber(locale, p.purchases_count)} · ${formatEur(locale, p.purchase_amount)}`,
            formatEur(locale, p.base_amount),
            formatEur(locale, p.commission_amount),
            p.status === 'locked' ? (
              <button
                type="button"
                class="button button--secondary button--small"
                aria-describedby={`period-${p.period}`}
                onClick={async () => {
                  const ok = await rowForm.run(() => api.POST('/{locale}/admin/partners/{id}/commission/unlock', { params: { path: { id } }, body: { period: p.period } }));
                  if (ok) refresh(t('commission.unlocked', { period: p.period }));
                }}
              >
                {t('commission.unlock')}
              </button>
            ) : (
              <button
                type="button"
                class="button button--small"
                aria-describedby={`period-${p.period}`}
                onClick={async () => {
                  const ok = await rowForm.run(() => api.POST('/{locale}/admin/partners/{id}/commission/lock', { params: { path: { id } }, body: { period: p.period } }));
                  if (ok) refresh(t('commission.locked', { period: p.period }));
                }}
              >
                {t('commission.lock')}
              </button>
            ),
          ])}
        />
        <Pager meta={periods.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('commission.periods')} />
      </section>
    </>
  );
}

export default function Commission() {
  const t = useI18n().t;
  const [query] = useQuery();
  const id = pickedPartner(query);
  return (
    <Page title={t('nav.commission')}>
      <PartnerPicker />
      {id === undefined ? <p>{t('admin.pick_first')}</p> : <PartnerCommission key={id} id={id} />}
    </Page>
  );
}
