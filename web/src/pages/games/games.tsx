// Games (configuration: spin wheel, scratch card, slot machine) — list, create with its
// reward segments (probabilities sum to 1), switch on and off.
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { Page } from '../../components/console';
import { LoadError, Pager, Table, useLoad, useQuery } from '../../components/data';
import { Checkbox, Field, Form, Select, Submit, TextArea, bool, nullNumber, nullText, optNumber, text, useForm } from '../../components/form';
import { formatDateTime, useI18n } from '../../i18n';
import type { paths } from '../../api/loyalty-api';

type GameBody = paths['/{locale}/partners/games']['post']['requestBody']['content']['application/json'];
type Reward = GameBody['rewards'][number];

const TYPES = ['spin_wheel', 'scratch_card', 'slot_machine'] as const;
const REWARD_TYPES = ['points', 'coupon', 'none'] as const;

function isoOrNull(v: string): string | null {
  if (!v) return null;
  const d = new Date(`${v}Z`);
  return Number.isNaN(d.getTime()) ? v : d.toISOString();
}

function gameBody(fd: FormData, rows: number): GameBody {
  const rewards: Reward[] = [];
  for (let i = 0; i < rows; i++) {
    const type = text(fd, `rewards.${i}.reward_type`) as Reward['reward_type'];
    rewards.push({
      label: text(fd, `rewards.${i}.label`),
      probability: optNumber(fd, `rewards.${i}.probability`) as number,
      reward_type: type,
      points: type === 'points' ? nullNumber(fd, `rewards.${i}.points`) : null,
      coupon:
        type === 'coupon'
          ? { title: text(fd, `rewards.${i}.coupon.title`), discount_type: text(fd, `rewards.${i}.coupon.discount_type`) as 'percent' | 'fixed', discount_value: optNumber(fd, `rewards.${i}.coupon.discount_value`) as number }
          : null,
    });
  }
  const card = text(fd, 'partner_card_id');
  return {
    type: text(fd, 'type') as GameBody['type'],
    name: text(fd, 'name'),
    description: nullText(fd, 'description'),
    partner_card_id: card ? Number(card) : null,
    is_active: bool(fd, 'is_active'),
    starts_at: isoOrNull(text(fd, 'starts_at')),
    ends_at: isoOrNull(text(fd, 'ends_at')),
    coupon_validity_days: nullNumber(fd, 'coupon_validity_days'),
    plays_per_customer_per_day: optNumber(fd, 'plays_per_customer_per_day'),
    rewards,
  };
}

export default function Games() {
  const { t, locale } = useI18n();
  const [query, setQuery] = useQuery();
  const page = Number(query.page ?? 1);
  const list = useLoad(() => api.GET('/{locale}/partners/games', { params: { query: { page, per_page: 20 } } }), [page]);
  const cards = useLoad(() => api.GET('/{locale}/partners/cards', { params: { query: { per_page: 100 } } }), []);
  const form = useForm();
  const toggleForm = useForm();
  const [rows, setRows] = useState(2);
  const [formKey, setFormKey] = useState(0);
  const [saved, setSaved] = useState<string>();

  const create = async (fd: FormData) => {
    const r = await form.run(() => api.POST('/{locale}/partners/games', { body: gameBody(fd, rows) }));
    if (r) {
      setSaved(t('games.created', { name: r.data.name }));
      setFormKey((k) => k + 1);
      setRows(2);
      list.reload();
    }
  };
  const toggle = async (id: number, isActive: boolean) => {
    const r = await toggleForm.run(() => api.PUT('/{locale}/partners/games/{id}', { params: { path: { id } }, body: { is_active: isActive } }));
    if (r) list.reload();
  };

  return (
    <Page title={t('nav.games')}>
      {saved && (
        <div class="notice notice--success" role="status">
          {saved}
        </div>
      )}
      <LoadError failure={list.failure ?? toggleForm.failure} />
      <Table
        caption={t('games.list')}
        loading={list.loading}
        empty={t('games.none')}
        head={[t('common.id'), t('games.name'), t('games.type'), t('games.rewards'), t('games.window'), t('common.status'), t('common.actions')]}
        rows={(list.data?.data ?? []).map((g) => [
          g.id,
          <span id={`game-${g.id}`}>{g.name}</span>,
          t(`games.type_${g.type}`),
          g.rewards.map((r) => `${r.label} (${Math.round(r.probability * 1000) / 10}%)`).join(', '),
          `${formatDateTime(locale, g.starts_at)} – ${formatDateTime(locale, g.ends_at)}`,
          g.is_active ? t('cards.active') : t('cards.inactive'),
          <button type="button" class="button button--secondary button--small" aria-describedby={`game-${g.id}`} onClick={() => toggle(g.id, !g.is_active)}>
            {g.is_active ? t('games.deactivate') : t('games.activate')}
          </button>,
        ])}
      />
      <Pager meta={list.data?.meta} onPage={(p) => setQuery({ page: String(p) })} label={t('games.list')} />
      <section class="panel" aria-labelledby="game-create">
        <h2 id="game-create">{t('games.create')}</h2>
        <Form form={form} onSubmit={create} label={t('games.create')} key={formKey}>
          <div class="grid">
            <Field name="name" label={t('games.name')} maxLength={255} />
            <Select name="type" label={t('games.type')} options={TYPES.map((v) => ({ value: v, label: t(`games.type_${v}`) }))} />
            <Select
              name="partner_card_id"
              label={t('games.card')}
              options={[{ value: '', label: t('games.any_card') }, ...(cards.data?.data ?? []).map((c) => ({ value: String(c.id), label: c.title[locale] || c.title.en }))]}
            />
            <Field name="plays_per_customer_per_day" label={t('games.plays_per_day')} inputMode="numeric" defaultValue="1" />
            <Field name="starts_at" label={t('games.starts_at')} hint={t('common.utc')} type="datetime-local" />
            <Field name="ends_at" label={t('games.ends_at')} hint={t('common.utc')} type="datetime-local" />
            <Field name="coupon_validity_days" label={t('games.coupon_validity_days')} hint={t('cards.empty_never')} inputMode="numeric" />
          </div>
          <TextArea name="description" label={t('games.description')} rows={2} />
          <Checkbox name="is_active" label={t('cards.is_active')} checked />
          <fieldset>
            <legend>{t('games.rewards')}</legend>
            <p class="hint" id="rewards-hint">
              {t('games.rewards_hint')}
            </p>
            {Array.from({ length: rows }, (_, i) => (
              <fieldset class="reward" key={i}>
                <legend>{t('games.reward_n', { n: i + 1 })}</legend>
                <div class="grid">
                  <Field name={`rewards.${i}.label`} label={t('games.reward_label')} />
                  <Field name={`rewards.${i}.probability`} label={t('games.probability')} hint={t('games.probability_hint')} inputMode="decimal" />
                  <Select name={`rewards.${i}.reward_type`} label={t('games.reward_type')} options={REWARD_TYPES.map((v) => ({ value: v, label: t(`games.reward_${v}`) }))} />
                  <Field name={`rewards.${i}.points`} label={t('games.points')} hint={t('games.points_hint')} inputMode="numeric" />
                  <Field name={`rewards.${i}.coupon.title`} label={t('games.coupon_title')} hint={t('games.coupon_hint')} />
                  <Select
                    name={`rewards.${i}.coupon.discount_type`}
                    label={t('games.discount_type')}
                    options={[
                      { value: 'percent', label: t('games.discount_percent') },
                      { value: 'fixed', label: t('games.discount_fixed') },
                    ]}
                  />
                  <Field name={`rewards.${i}.coupon.discount_value`} label={t('games.discount_value')} inputMode="decimal" />
                </div>
              </fieldset>
            ))}
            <div class="actions">
              <button type="button" class="button button--secondary" onClick={() => setRows((n) => n + 1)}>
                {t('games.add_reward')}
              </button>
              {rows > 1 && (
                <button type="button" class="button button--secondary" onClick={() => setRows((n) => n - 1)}>
                  {t('games.remove_reward')}
                </button>
              )}
            </div>
          </fieldset>
          <Submit form={form}>{t('games.create')}</Submit>
        </Form>
      </section>
    </Page>
  );
}
