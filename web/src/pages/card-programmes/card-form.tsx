// The card programme form, for create (every field) and edit (PUT takes any subset: the form
// sends only what changed, and a design with the parts it does not show — logo, background
// image, opacity — kept). Field names are the API's, so its errors land next to them.
import { api } from '../../api/client';
import { useLoad } from '../../components/data';
import { Checkbox, Field, Form, Select, Submit, TextArea, bool, changedFields, nullNumber, optNumber, text, type FormState } from '../../components/form';
import { useT } from '../../i18n';
import type { paths } from '../../api/loyalty-api';

type CardBody = paths['/{locale}/partners/cards']['post']['requestBody']['content']['application/json'];
type FullCard = paths['/{locale}/partners/cards/{id}']['get']['responses'][200]['content']['application/json']['data'];

const COLOURS = ['background_color', 'text_color', 'text_color_labels', 'qr_color', 'qr_background_color'] as const;
// The programme's tier settings (DESIGN.md §13); the tiers themselves are listed under the form.
const TIER_BASES = ['points_earned', 'amount_spent'] as const;
const TIER_WINDOWS = ['rolling_12_months', 'calendar_year', 'lifetime'] as const;
const TIER_DOWNGRADES = ['end_of_window', 'never'] as const;

export function cardBody(fd: FormData): CardBody {
  const design: Record<string, string | null> = {};
  for (const c of COLOURS) {
    const v = text(fd, `card_design.${c}`);
    if (v) design[c] = v;
  }
  return {
    title: { en: text(fd, 'title.en'), lt: text(fd, 'title.lt') },
    description: { en: text(fd, 'description.en'), lt: text(fd, 'description.lt') },
    terms_conditions: { en: text(fd, 'terms_conditions.en'), lt: text(fd, 'terms_conditions.lt') },
    card_design: design,
    is_active: bool(fd, 'is_active'),
    shop_ids: fd.getAll('shop_ids').map(Number),
    auto_assign: bool(fd, 'auto_assign'),
    points_enabled: bool(fd, 'points_enabled'),
    initial_bonus_points: optNumber(fd, 'initial_bonus_points'),
    points_expiration_days: nullNumber(fd, 'points_expiration_days'),
    points_per_currency: optNumber(fd, 'points_per_currency'),
    currency_amount: optNumber(fd, 'currency_amount'),
    round_points_up: bool(fd, 'round_points_up'),
    points_per_visit: optNumber(fd, 'points_per_visit'),
    min_points_per_purchase: optNumber(fd, 'min_points_per_purchase'),
    max_points_per_purchase: nullNumber(fd, 'max_points_per_purchase'),
    points_redemption_enabled: bool(fd, 'points_redemption_enabled'),
    points_per_currency_redemption: optNumber(fd, 'points_per_currency_redemption'),
    currency_amount_redemption: optNumber(fd, 'currency_amount_redemption'),
    min_points_for_redemption: optNumber(fd, 'min_points_for_redemption'),
    max_points_per_redemption: nullNumber(fd, 'max_points_per_redemption'),
    tier_basis: text(fd, 'tier_basis') as CardBody['tier_basis'],
    tier_window: text(fd, 'tier_window') as CardBody['tier_window'],
    tier_downgrade: text(fd, 'tier_downgrade') as CardBody['tier_downgrade'],
    tier_time_zone: text(fd, 'tier_time_zone'),
  };
}

/**
 * An edit's PUT body: only the fields that changed. The design replaces the stored one as a
 * whole, so it starts from the stored design (the logo, background image and opacity the form
 * does not show, set through the API) and takes the colours from the form, a cleared one removed.
 */
export function editedCardBody(fd: FormData, card: FullCard): Partial<CardBody> {
  const body = cardBody(fd);
  const design: Record<string, unknown> = { ...(card.card_design as Record<string, unknown>) };
  for (const c of COLOURS) {
    const v = text(fd, `card_design.${c}`);
    if (v) design[c] = v;
    else delete design[c];
  }
  return changedFields({ ...body, card_design: design as CardBody['card_design'] }, card);
}

const str = (v: unknown) => (v === null || v === undefined ? '' : String(v));

export function CardForm({ form, card, onSubmit, submit }: { form: FormState; card?: FullCard; onSubmit: (fd: FormData, el: HTMLFormElement) => void; submit: string }) {
  const t = useT();
  const shops = useLoad(() => api.GET('/{locale}/partners/shops', { params: { query: { per_page: 100 } } }), []);
  const d = (card?.card_design ?? {}) as Record<string, string | undefined>;
  return (
    <Form form={form} onSubmit={onSubmit} label={submit}>
      <fieldset>
        <legend>{t('cards.texts')}</legend>
        <div class="grid">
          <Field name="title.en" label={t('cards.title_en')} defaultValue={card?.title.en} maxLength={255} />
          <Field name="title.lt" label={t('cards.title_lt')} defaultValue={card?.title.lt} maxLength={255} />
          <TextArea name="description.en" label={t('cards.description_en')} defaultValue={str((card?.description as Record<string, string>)?.en)} rows={2} />
          <TextArea name="description.lt" label={t('cards.description_lt')} defaultValue={str((card?.description as Record<string, string>)?.lt)} rows={2} />
          <TextArea name="terms_conditions.en" label={t('cards.terms_en')} defaultValue={str((card?.terms_conditions as Record<string, string>)?.en)} rows={2} />
          <TextArea name="terms_conditions.lt" label={t('cards.terms_lt')} defaultValue={str((card?.terms_conditions as Record<string, string>)?.lt)} rows={2} />
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('cards.design')}</legend>
        <div class="grid">
          {COLOURS.map((c) => (
            <Field key={c} name={`card_design.${c}`} label={t(`cards.${c}`)} hint={t('cards.colour_hint')} defaultValue={d[c] ?? ''} autoComplete="off" />
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('cards.shops')}</legend>
        <p class="hint">{t('cards.shops_hint')}</p>
        <div class="checks">
          {(shops.data?.data ?? []).map((s) => (
            <label key={s.id} class="check">
              <input type="checkbox" name="shop_ids" value={String(s.id)} defaultChecked={card?.shop_ids.includes(s.id)} /> {s.name}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('cards.points')}</legend>
        <Checkbox name="is_active" label={t('cards.is_active')} checked={card?.is_active ?? true} />
        <Checkbox name="auto_assign" label={t('cards.auto_assign')} checked={card?.auto_assign ?? true} />
        <Checkbox name="points_enabled" label={t('cards.points_enabled')} checked={card?.points_enabled ?? true} />
        <Checkbox name="round_points_up" label={t('cards.round_points_up')} checked={card?.round_points_up ?? false} />
        <div class="grid">
          <Field name="points_per_currency" label={t('cards.points_per_currency')} inputMode="decimal" defaultValue={str(card?.points_per_currency ?? 1)} />
          <Field name="currency_amount" label={t('cards.currency_amount')} inputMode="decimal" defaultValue={str(card?.currency_amount ?? 1)} />
          <Field name="points_per_visit" label={t('cards.points_per_visit')} inputMode="numeric" defaultValue={str(card?.points_per_visit ?? 0)} />
          <Field name="initial_bonus_points" label={t('cards.initial_bonus_points')} inputMode="numeric" defaultValue={str(card?.initial_bonus_points ?? 0)} />
          <Field name="min_points_per_purchase" label={t('cards.min_points_per_purchase')} inputMode="numeric" defaultValue={str(card?.min_points_per_purchase ?? 0)} />
          <Field name="max_points_per_purchase" label={t('cards.max_points_per_purchase')} hint={t('cards.empty_no_limit')} inputMode="numeric" defaultValue={str(card?.max_points_per_purchase)} />
          <Field name="points_expiration_days" label={t('cards.points_expiration_days')} hint={t('cards.empty_never')} inputMode="numeric" defaultValue={str(card?.points_expiration_days)} />
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('cards.redemption')}</legend>
        <Checkbox name="points_redemption_enabled" label={t('cards.points_redemption_enabled')} checked={card?.points_redemption_enabled ?? false} />
        <div class="grid">
          <Field name="points_per_currency_redemption" label={t('cards.points_per_currency_redemption')} inputMode="decimal" defaultValue={str(card?.points_per_currency_redemption ?? 100)} />
          <Field name="currency_amount_redemption" label={t('cards.currency_amount_redemption')} inputMode="decimal" defaultValue={str(card?.currency_amount_redemption ?? 1)} />
          <Field name="min_points_for_redemption" label={t('cards.min_points_for_redemption')} inputMode="numeric" defaultValue={str(card?.min_points_for_redemption ?? 0)} />
          <Field name="max_points_per_redemption" label={t('cards.max_points_per_redemption')} hint={t('cards.empty_no_limit')} inputMode="numeric" defaultValue={str(card?.max_points_per_redemption)} />
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('tiers.settings')}</legend>
        <p class="hint">{t('tiers.settings_hint')}</p>
        <div class="grid">
          <Select name="tier_basis" label={t('tiers.basis')} defaultValue={card?.tier_basis ?? 'points_earned'} options={TIER_BASES.map((v) => ({ value: v, label: t(`tiers.basis_${v}`) }))} />
          <Select name="tier_window" label={t('tiers.window')} defaultValue={card?.tier_window ?? 'rolling_12_months'} options={TIER_WINDOWS.map((v) => ({ value: v, label: t(`tiers.window_${v}`) }))} />
          <Select
            name="tier_downgrade"
            label={t('tiers.downgrade')}
            defaultValue={card?.tier_downgrade ?? 'end_of_window'}
            options={TIER_DOWNGRADES.map((v) => ({ value: v, label: t(`tiers.downgrade_${v}`) }))}
          />
          <Field name="tier_time_zone" label={t('tiers.time_zone')} hint={t('tiers.time_zone_hint')} defaultValue={card?.tier_time_zone ?? 'Europe/Vilnius'} autoComplete="off" />
        </div>
      </fieldset>
      <Submit form={form}>{submit}</Submit>
    </Form>
  );
}
