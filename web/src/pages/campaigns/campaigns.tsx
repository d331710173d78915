// Campaigns (DESIGN.md §12): what a partner adds to a programme's base points — a multiplier,
// a bonus, points per EUR or per item — on some shops, products, categories, days and hours,
// within limits. Listed with their status and budget left (filters programme, status),
// created and edited with every field (field names are the API's dotted paths, so its 422
// lands next to the field), paused and resumed, deleted. The Preview panel below tries a
// basket against them.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { paths } from '../../api/loyalty-api';
import { Confirm } from '../../components/confirm';
import { Page } from '../../components/console';
import { LoadError, Pager, Status, Table, useLoad, useQuery } from '../../components/data';
import { Checkbox, CheckboxGroup, Field, Form, Select, Submit, changedFields, TextArea, bool, nullNumber, nullText, optNumber, text, useForm } from '../../components/form';
import { formatDateTime, formatNumber, useI18n } from '../../i18n';
import { ProductPicker, type Picked } from './product-picker';
import { Preview } from './preview';

type CampaignBody = paths['/{locale}/partners/campaigns']['post']['requestBody']['content']['application/json'];
export type Campaign = paths['/{locale}/partners/campaigns']['get']['responses'][200]['content']['application/json']['data'][number];

const EFFECTS = ['multiplier', 'bonus', 'per_currency', 'per_item'] as const;
export const STATUSES = ['scheduled', 'running', 'paused', 'ended', 'exhausted'] as const;
type CampaignStatus = (typeof STATUSES)[number];
const DAYS = [1, 2, 3, 4, 5, 6, 7] as const;

/** A datetime-local box (read as UTC) → ISO; text that is no date goes as is, for the API to name. */
function isoOrNull(v: string): string | null {
  if (!v) return null;
  const d = new Date(`${v}Z`);
  return Number.isNaN(d.getTime()) ? v : d.toISOString();
}
const localOf = (iso: string | null | undefined) => (iso ? iso.slice(0, 16) : '');
/** A comma-separated box as a list; numbers stay text when they are not, for the API to name. */
const listOf = (v: string) =>
  v
    .split(/[,\s]+/)
    .map((x) => x.trim())
    .filter(Boolean);
const idsOf = (v: string) => listOf(v).map((x) => (/^\d+$/.test(x) ? Number(x) : x)) as number[];

/** Boxes that hold a list (tier ids, skus): the API names an item (`tier_ids.2`), the page shows it on the box. */
const LIST_BOXES = ['tier_ids', 'conditions.skus'];
async function listErrorsOnList<T extends { error?: unknown }>(call: Promise<T>): Promise<T> {
  const r = await call;
  const errors = (r.error as { errors?: unknown } | undefined)?.errors;
  if (errors && typeof errors === 'object' && !Array.isArray(errors)) {
    const out: Record<string, string[]> = {};
    for (const [field, messages] of Object.entries(errors as Record<string, string[]>)) {
      const box = LIST_BOXES.find((b) => field.startsWith(`${b}.`)) ?? field;
      out[box] = [...(out[box] ?? []), ...messages];
    }
    (r.error as { errors: Record<string, string[]> }).errors = out;
  }
  return r;
}

function campaignBody(fd: FormData): CampaignBody {
  return {
    name: text(fd, 'name'),
    description: nullText(fd, 'description'),
    partner_card_id: optNumber(fd, 'partner_card_id') as number,
    is_active: bool(fd, 'is_active'),
    starts_at: isoOrNull(text(fd, 'starts_at')),
    ends_at: isoOrNull(text(fd, 'ends_at')),
    schedule: {
      days_of_week: fd.getAll('schedule.days_of_week').map(Number),
      from_time: nullText(fd, 'schedule.from_time'),
      to_time: nullText(fd, 'schedule.to_time'),
      time_zone: text(fd, 'schedule.time_zone'),
    },
    shop_ids: fd.getAll('shop_ids').map(Number),
    tier_ids: idsOf(text(fd, 'tier_ids')),
    conditions: {
      min_amount: nullNumber(fd, 'conditions.min_amount'),
      product_ids: fd.getAll('conditions.product_ids').map(Number),
      category_ids: fd.getAll('conditions.category_ids').map(Number),
      skus: listOf(text(fd, 'conditions.skus')),
      first_purchase_only: bool(fd, 'conditions.first_purchase_only'),
    },
    effect: { type: text(fd, 'effect.type') as CampaignBody['effect']['type'], value: optNumber(fd, 'effect.value') as number },
    priority: optNumber(fd, 'priority') ?? 0,
    exclusive: bool(fd, 'exclusive'),
    limits: {
      per_customer: nullNumber(fd, 'limits.per_customer'),
      per_customer_per_day: nullNumber(fd, 'limits.per_customer_per_day'),
      uses: nullNumber(fd, 'limits.uses'),
      points_budget: nullNumber(fd, 'limits.points_budget'),
    },
  };
}

export default function Campaigns() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const programme = query.partner_card_id ? Number(query.partner_card_id) : undefined;
  const status = (STATUSES as readonly string[]).includes(query.status ?? '') ? (query.status as CampaignStatus) : undefined;
  const list = useLoad(
    () =>
      api.GET('/{locale}/partners/campaigns', {
        params: { query: { page, per_page: 20, ...(programme ? { partner_card_id: programme } : {}), ...(status ? { status } : {}) } },
      }),
    [page, programme, status],
  );
  const cards = useLoad(() => api.GET('/{locale}/partners/cards', { params: { query: { per_page: 100 } } }), []);
  const shops = useLoad(() => api.GET('/{locale}/partners/shops', { params: { query: { per_page: 100 } } }), []);
  const categories = useLoad(() => api.GET('/{locale}/shop/categories'), []);
  const form = useForm();
  const rowForm = useForm();
  const [editing, setEditing] = useState<Campaign>();
  const [deleting, setDeleting] = useState<Campaign>();
  const [formKey, setFormKey] = useState(0);
  const [saved, setSaved] = useState<string>();
  const [products, setProducts] = useState<Picked[]>([]);

  const cardName = (id: number) => {
    const c = cards.data?.data.find((x) => x.id === id);
    return c ? c.title[locale] || c.title.en : `#${id}`;
  };
  const effectText = (c: Campaign) => {
    const v = formatNumber(locale, c.effect.value);
    return t(`campaigns.effect_${c.effect.type}_n`, { value: v });
  };

  const reset = (c: Campaign | undefined) => {
    form.fail(undefined);
    setEditing(c);
    setProducts((c?.conditions.product_ids ?? []).map((id) => ({ id, name: `#${id}`, sku: null, price: null })));
    setFormKey((k) => k + 1);
  };
  const save = async (fd: FormData) => {
    const body = campaignBody(fd);
    const r = editing
      ? await form.run(() => listErrorsOnList(api.PUT('/{locale}/partners/campaigns/{id}', { params: { path: { id: editing.id } }, body: changedFields(body, editing) })))
      : await form.run(() => listErrorsOnList(api.POST('/{locale}/partners/campaigns', { body })));
    if (r) {
      setSaved(t(editing ? 'campaigns.updated' : 'campaigns.created', { name: r.data.name }));
      reset(undefined);
      list.reload();
    }
  };
  const toggle = async (c: Campaign) => {
    setSaved(undefined);
    const r = await rowForm.run(() => api.PUT('/{locale}/partners/campaigns/{id}', { params: { path: { id: c.id } }, body: { is_active: !c.is_active } }));
    if (r) {
      setSaved(t(r.data.is_active ? 'campaigns.resumed' : 'campaigns.paused', { name: r.data.name }));
      list.reload();
    }
  };
  const remove = async () => {
    const c = deleting;
    setDeleting(undefined);
    if (!c) return;
    const r = await rowForm.run(() => api.DELETE('/{locale}/partners/campaigns/{id}', { params: { path: { id: c.id } } }));
    if (r) {
      setSaved(t('campaigns.deleted', { name: c.name }));
      if (editing?.id === c.id) reset(undefined);
      list.reload();
    }
  };
  const edit = (c: Campaign) => {
    setSaved(undefined);
    reset(c);
    document.getElementById('campaign-form')?.scrollIntoView();
  };

  const e = editing;
  const formTitle = e ? t('campaigns.edit', { name: e.name }) : t('campaigns.create');
  const cardOptions = (cards.data?.data ?? []).map((c) => ({ value: String(c.id), label: c.title[locale] || c.title.en }));
  const weekday = new Intl.DateTimeFormat(locale === 'lt' ? 'lt-LT' : 'en-GB', { weekday: 'long', timeZone: 'UTC' });
  const tree = [...(categories.data?.data ?? [])].sort((a, b) => a.path.localeCompare(b.path, locale));
  return (
    <Page title={t('nav.campaigns')}>
      {saved && (
        <div class="notice notice--success" role="status">
          {saved}
        </div>
      )}
      <form
        class="filters filters--grid"
        aria-label={t('campaigns.filters')}
        onSubmit={(ev) => {
          ev.preventDefault();
          const fd = new FormData(ev.currentTarget);
          setQuery({ partner_card_id: String(fd.get('partner_card_id') ?? ''), status: String(fd.get('status') ?? '') });
        }}
      >
        <div class="field">
          <label for="campaigns-programme">{t('campaigns.programme')}</label>
          <select id="campaigns-programme" name="partner_card_id">
            <option value="" selected={!programme}>
              {t('common.all')}
            </option>
            {cardOptions.map((o) => (
              <option key={o.value} value={o.value} selected={String(programme) === o.value}>
                {o.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="campaigns-status">{t('common.status')}</label>
          <select id="campaigns-status" name="status">
            <option value="" selected={!status}>
              {t('common.all')}
            </option>
            {STATUSES.map((s) => (
              <option key={s} value={s} selected={status === s}>
                {t(`campaigns.status_${s}`)}
              </option>
            ))}
          </select>
        </div>
        <div class="actions">
          <button type="submit" class="button">
            {t('common.filter')}
          </button>
        </div>
      </form>
      <LoadError failure={list.failure ?? rowForm.failure} />
      <Table
        caption={t('campaigns.list')}
        loading={list.loading}
        empty={t('campaigns.none')}
        head={[
          t('common.id'),
          t('campaigns.name'),
          t('campaigns.programme'),
          t('campaigns.effect'),
          t('campaigns.window'),
          t('common.status'),
          t('campaigns.uses'),
          t('campaigns.budget_left'),
          t('common.actions'),
        ]}
        rows={(list.data?.data ?? []).map((c) => [
          c.id,
          <span id={`campaign-${c.id}`}>
            {c.name}
            {c.exclusive ? <span class="hint"> ({t('campaigns.exclusive_short')})</span> : null}
          </span>,
          cardName(c.partner_card_id),
          effectText(c),
          `${formatDateTime(locale, c.starts_at)} – ${formatDateTime(locale, c.ends_at)}`,
          <Status value={c.status} label={t(`campaigns.status_${c.status}`)} />,
          `${formatNumber(locale, c.uses_count)} / ${c.limits.uses === null ? '∞' : formatNumber(locale, c.limits.uses)}`,
          c.budget_left === null ? t('campaigns.no_budget') : `${formatNumber(locale, c.budget_left)} / ${formatNumber(locale, c.limits.points_budget)}`,
          <span class="row-actions">
            <button type="button" class="button button--secondary button--small" aria-describedby={`campaign-${c.id}`} onClick={() => edit(c)}>
              {t('common.edit')}
            </button>
            <button type="button" class="button button--secondary button--small" aria-describedby={`campaign-${c.id}`} onClick={() => toggle(c)} disabled={rowForm.busy}>
              {c.is_active ? t('campaigns.pause') : t('campaigns.resume')}
            </button>
            <button type="button" class="button button--danger button--small" aria-describedby={`campaign-${c.id}`} onClick={() => setDeleting(c)}>
              {t('common.delete')}
            </button>
          </span>,
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('campaigns.list')} />

      <section class="panel" aria-labelledby="campaign-form">
        <h2 id="campaign-form">{formTitle}</h2>
        <Form form={form} onSubmit={save} label={formTitle} key={`${e?.id ?? 'new'}-${formKey}`}>
          <div class="grid">
            <Field name="name" label={t('campaigns.name')} maxLength={255} defaultValue={e?.name} />
            <Select
              name="partner_card_id"
              label={t('campaigns.programme')}
              defaultValue={e ? String(e.partner_card_id) : (cardOptions[0]?.value ?? '')}
              options={cardOptions}
            />
            <Field name="starts_at" label={t('campaigns.starts_at')} hint={t('campaigns.starts_at_hint')} type="datetime-local" defaultValue={localOf(e?.starts_at)} />
            <Field name="ends_at" label={t('campaigns.ends_at')} hint={t('campaigns.ends_at_hint')} type="datetime-local" defaultValue={localOf(e?.ends_at)} />
          </div>
          <TextArea name="description" label={t('campaigns.description')} rows={2} defaultValue={e?.description ?? ''} />

          <h3>{t('campaigns.effect')}</h3>
          <div class="grid">
            <Select
              name="effect.type"
              label={t('campaigns.effect_type')}
              defaultValue={e?.effect.type ?? 'multiplier'}
              options={EFFECTS.map((v) => ({ value: v, label: t(`campaigns.effect_${v}`) }))}
            />
            <Field name="effect.value" label={t('campaigns.effect_value')} hint={t('campaigns.effect_value_hint')} inputMode="decimal" defaultValue={e?.effect.value.toString() ?? ''} />
            <Field name="priority" label={t('campaigns.priority')} hint={t('campaigns.priority_hint')} inputMode="numeric" defaultValue={String(e?.priority ?? 0)} />
          </div>
          <Checkbox name="exclusive" label={t('campaigns.exclusive')} checked={e?.exclusive ?? false} />
          <Checkbox name="is_active" label={t('campaigns.is_active')} checked={e?.is_active ?? true} />

          <h3>{t('campaigns.schedule')}</h3>
          <CheckboxGroup
            name="schedule.days_of_week"
            legend={t('campaigns.days_of_week')}
            hint={t('campaigns.days_hint')}
            options={DAYS.map((d) => ({ value: String(d), label: weekday.format(new Date(Date.UTC(2024, 0, d))) }))}
            checked={(e?.schedule.days_of_week ?? []).map(String)}
          />
          <div class="grid">
            <Field name="schedule.from_time" label={t('campaigns.from_time')} hint={t('campaigns.time_hint')} type="time" defaultValue={e?.schedule.from_time ?? ''} />
            <Field name="schedule.to_time" label={t('campaigns.to_time')} hint={t('campaigns.to_time_hint')} type="time" defaultValue={e?.schedule.to_time ?? ''} />
            <Field name="schedule.time_zone" label={t('campaigns.time_zone')} hint={t('campaigns.time_zone_hint')} defaultValue={e?.schedule.time_zone ?? 'Europe/Vilnius'} />
          </div>

          <h3>{t('campaigns.where_who')}</h3>
          {(shops.data?.data.length ?? 0) > 0 && (
            <CheckboxGroup
              name="shop_ids"
              legend={t('campaigns.shops')}
              hint={t('campaigns.shops_hint')}
              options={(shops.data?.data ?? []).map((sh) => ({ value: String(sh.id), label: sh.name }))}
              checked={(e?.shop_ids ?? []).map(String)}
            />
          )}
          <Field name="tier_ids" label={t('campaigns.tier_ids')} hint={t('campaigns.tier_ids_hint')} defaultValue={(e?.tier_ids ?? []).join(', ')} />

          <h3>{t('campaigns.conditions')}</h3>
          <div class="grid">
            <Field name="conditions.min_amount" label={t('campaigns.min_amount')} hint={t('campaigns.min_amount_hint')} inputMode="decimal" defaultValue={e?.conditions.min_amount?.toString() ?? ''} />
            <Field name="conditions.skus" label={t('campaigns.skus')} hint={t('campaigns.skus_hint')} defaultValue={(e?.conditions.skus ?? []).join(', ')} />
          </div>
          <ProductPicker form={form} name="conditions.product_ids" picked={products} onChange={setProducts} />
          {tree.length > 0 && (
            <CheckboxGroup
              name="conditions.category_ids"
              legend={t('campaigns.categories')}
              hint={t('campaigns.categories_hint')}
              options={tree.map((c) => ({ value: String(c.id), label: c.path }))}
              checked={(e?.conditions.category_ids ?? []).map(String)}
            />
          )}
          <Checkbox name="conditions.first_purchase_only" label={t('campaigns.first_purchase_only')} checked={e?.conditions.first_purchase_only ?? false} />

          <h3>{t('campaigns.limits')}</h3>
          <div class="grid">
            <Field name="limits.points_budget" label={t('campaigns.points_budget')} hint={t('campaigns.empty_unlimited')} inputMode="numeric" defaultValue={e?.limits.points_budget?.toString() ?? ''} />
            <Field name="limits.uses" label={t('campaigns.limit_uses')} hint={t('campaigns.empty_unlimited')} inputMode="numeric" defaultValue={e?.limits.uses?.toString() ?? ''} />
            <Field name="limits.per_customer" label={t('campaigns.per_customer')} hint={t('campaigns.empty_unlimited')} inputMode="numeric" defaultValue={e?.limits.per_customer?.toString() ?? ''} />
            <Field
              name="limits.per_customer_per_day"
              label={t('campaigns.per_customer_per_day')}
              hint={t('campaigns.empty_unlimited')}
              inputMode="numeric"
              defaultValue={e?.limits.per_customer_per_day?.toString() ?? ''}
            />
          </div>
          <div class="actions">
            <Submit form={form}>{e ? t('common.save') : t('campaigns.create')}</Submit>
            {e && (
              <button type="button" class="button button--secondary" onClick={() => reset(undefined)}>
                {t('common.cancel')}
              </button>
            )}
          </div>
        </Form>
      </section>

      <Preview cards={cards.data?.data ?? []} shops={shops.data?.data ?? []} />

      <Confirm open={deleting !== undefined} title={t('campaigns.delete_title', { name: deleting?.name ?? '' })} confirm={t('common.delete')} onConfirm={remove} onClose={() => setDeleting(undefined)}>
        <p>{t('campaigns.delete_text')}</p>
      </Confirm>
    </Page>
  );
}
