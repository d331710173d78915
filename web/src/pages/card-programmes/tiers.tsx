// The programme's tiers (DESIGN.md §13): listed lowest threshold first (the API's order, so a
// changed threshold re-sorts the list: "reorder by threshold"), added and edited in one form
// (field names are the API's, so a taken threshold's 409 and every 422 land on their field),
// deleted after a confirmation. Cards move to the new thresholds in the background.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { paths } from '../../api/loyalty-api';
import { Confirm } from '../../components/confirm';
import { LoadError, Table, useLoad } from '../../components/data';
import { Field, Form, Submit, changedFields, TextArea, optNumber, text, useForm } from '../../components/form';
import { formatNumber, useI18n } from '../../i18n';

type TierBody = paths['/{locale}/partners/cards/{id}/tiers']['post']['requestBody']['content']['application/json'];
export type Tier = paths['/{locale}/partners/cards/{id}/tiers']['get']['responses'][200]['content']['application/json']['data'][number];

/** A colour as a small square (an SVG fill: the console's CSP allows no inline style). */
export function Swatch({ color }: { color: string | null | undefined }) {
  if (!color) return null;
  return (
    <svg class="swatch" width="14" height="14" viewBox="0 0 14 14" aria-hidden="true" focusable="false">
      <rect x="0.5" y="0.5" width="13" height="13" rx="2" fill={color} stroke="#6b7280" />
    </svg>
  );
}

function tierBody(fd: FormData): TierBody {
  const benefitsEn = text(fd, 'benefits.en');
  const benefitsLt = text(fd, 'benefits.lt');
  return {
    name: { en: text(fd, 'name.en'), lt: text(fd, 'name.lt') },
    threshold: optNumber(fd, 'threshold') as number,
    earn_multiplier: optNumber(fd, 'earn_multiplier') ?? 1,
    // Both boxes empty: no benefits; one of them: the API names the empty one.
    benefits: benefitsEn || benefitsLt ? { en: benefitsEn, lt: benefitsLt } : null,
    color: text(fd, 'color') || null,
  };
}

export function Tiers({ programme }: { programme: number }) {
  const { t, locale } = useI18n();
  const list = useLoad(() => api.GET('/{locale}/partners/cards/{id}/tiers', { params: { path: { id: programme } } }), [programme]);
  const form = useForm();
  const rowForm = useForm();
  const [editing, setEditing] = useState<Tier>();
  const [deleting, setDeleting] = useState<Tier>();
  const [formKey, setFormKey] = useState(0);
  const [saved, setSaved] = useState<string>();
  // The quota's error names `tiers`: the summary links it to the list.
  form.labels.set('tiers', { id: 'tiers-heading', label: t('tiers.title') });

  const nameOf = (x: { name: { en: string; lt: string } }) => x.name[locale] || x.name.en;
  const reset = (x: Tier | undefined) => {
    form.fail(undefined);
    setEditing(x);
    setFormKey((k) => k + 1);
  };
  const save = async (fd: FormData) => {
    setSaved(undefined);
    const body = tierBody(fd);
    const r = editing
      ? await form.run(() => api.PUT('/{locale}/partners/cards/{id}/tiers/{tier_id}', { params: { path: { id: programme, tier_id: editing.id } }, body: changedFields(body, editing) }))
      : await form.run(() => api.POST('/{locale}/partners/cards/{id}/tiers', { params: { path: { id: programme } }, body }));
    if (r) {
      setSaved(t(editing ? 'tiers.updated' : 'tiers.created', { name: nameOf(r.data) }));
      reset(undefined);
      list.reload();
    }
  };
  const remove = async () => {
    const x = deleting;
    setDeleting(undefined);
    if (!x) return;
    setSaved(undefined);
    const r = await rowForm.run(() => api.DELETE('/{locale}/partners/cards/{id}/tiers/{tier_id}', { params: { path: { id: programme, tier_id: x.id } } }));
    if (r) {
      setSaved(t('tiers.deleted', { name: nameOf(x) }));
      if (editing?.id === x.id) reset(undefined);
      list.reload();
    }
  };
  const edit = (x: Tier) => {
    setSaved(undefined);
    reset(x);
    document.getElementById('tier-form')?.scrollIntoView();
  };

  const e = editing;
  const formTitle = e ? t('tiers.edit', { name: nameOf(e) }) : t('tiers.add');
  return (
    <section class="panel" aria-labelledby="tiers-heading">
      <h2 id="tiers-heading" tabIndex={-1}>
        {t('tiers.title')}
      </h2>
      <p class="hint">{t('tiers.hint')}</p>
      {saved && (
        <div class="notice notice--success" role="status">
          {saved}
        </div>
      )}
      <LoadError failure={list.failure ?? rowForm.failure} />
      <Table
        caption={t('tiers.list')}
        loading={list.loading}
        empty={t('tiers.none')}
        head={[t('tiers.name'), t('tiers.threshold'), t('tiers.earn_multiplier'), t('tiers.color'), t('tiers.benefits'), t('common.actions')]}
        rows={(list.data?.data ?? []).map((x) => [
          <span id={`tier-${x.id}`}>{nameOf(x)}</span>,
          formatNumber(locale, x.threshold),
          `× ${formatNumber(locale, x.earn_multiplier)}`,
          x.color ? (
            <span class="swatch-label">
              <Swatch color={x.color} /> {x.color}
            </span>
          ) : (
            '—'
          ),
          x.benefits ? x.benefits[locale] || x.benefits.en : '—',
          <span class="row-actions">
            <button type="button" class="button button--secondary button--small" aria-describedby={`tier-${x.id}`} onClick={() => edit(x)}>
              {t('common.edit')}
            </button>
            <button type="button" class="button button--danger button--small" aria-describedby={`tier-${x.id}`} onClick={() => setDeleting(x)}>
              {t('common.delete')}
            </button>
          </span>,
        ])}
      />

      <h3 id="tier-form">{formTitle}</h3>
      <Form form={form} onSubmit={save} label={formTitle} key={`${e?.id ?? 'new'}-${formKey}`}>
        <div class="grid">
          <Field name="name.en" label={t('tiers.name_en')} maxLength={100} defaultValue={e?.name.en} />
          <Field name="name.lt" label={t('tiers.name_lt')} maxLength={100} defaultValue={e?.name.lt} />
          <Field name="threshold" label={t('tiers.threshold')} hint={t('tiers.threshold_hint')} inputMode="numeric" defaultValue={e ? String(e.threshold) : ''} />
          <Field name="earn_multiplier" label={t('tiers.earn_multiplier')} hint={t('tiers.earn_multiplier_hint')} inputMode="decimal" defaultValue={String(e?.earn_multiplier ?? 1)} />
          <Field name="color" label={t('tiers.color')} hint={t('tiers.color_hint')} defaultValue={e?.color ?? ''} autoComplete="off" />
        </div>
        <div class="grid">
          <TextArea name="benefits.en" label={t('tiers.benefits_en')} hint={t('tiers.benefits_hint')} rows={2} defaultValue={e?.benefits?.en ?? ''} />
          <TextArea name="benefits.lt" label={t('tiers.benefits_lt')} rows={2} defaultValue={e?.benefits?.lt ?? ''} />
        </div>
        <div class="actions">
          <Submit form={form}>{e ? t('common.save') : t('tiers.add')}</Submit>
          {e && (
            <button type="button" class="button button--secondary" onClick={() => reset(undefined)}>
              {t('common.cancel')}
            </button>
          )}
        </div>
      </Form>

      <Confirm
        open={deleting !== undefined}
        title={t('tiers.delete_title', { name: deleting ? nameOf(deleting) : '' })}
        confirm={t('common.delete')}
        onConfirm={remove}
        onClose={() => setDeleting(undefined)}
      >
        <p>{t('tiers.delete_text')}</p>
      </Confirm>
    </section>
  );
}
