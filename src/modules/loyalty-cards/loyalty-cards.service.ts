// Loyalty cards: a customer's membership of one partner card programme, holding the points
// balance. Issued with a Luhn-checked number or attached to an existing (third-party)
// number; the programme's welcome bonus is credited in the same transaction.
import type { Static } from 'typebox';
import type { CustomerPrincipal } from '../../infra/auth.js';
import type { Db, Executor } from '../../infra/db/index.js';
import { fail, missing, ok, type Result } from '../../shared/errors.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import type { CustomersService } from '../customers/customers.service.js';
import type { PartnerCardsService, ProgrammeForIssue } from '../partner-cards/partner-cards.service.js';
import type { PointsLedger } from '../points/ledger.service.js';
import { displayRates } from '../points/points-rules.js';
import type { CardTierView, TiersService } from '../tiers/tiers.service.js';
import { issueCardNumber } from './card-number.js';
import { loyaltyCardsRepository as repo, loyaltyCardsTotals, type CardFilter, type CardOwner, type LoyaltyCardRow } from './loyalty-cards.repository.js';
import type { PartnerEventSink } from '../webhooks/webhooks.events.js';
import type { LoyaltyCard } from './loyalty-cards.schemas.js';

/** The cards a customer token may see: its own, and only its partner's when the token came from a partner's QR login. */
export function customerOwner(p: CustomerPrincipal): CardOwner {
  return { customerId: p.customerId, ...(p.partnerId !== undefined ? { partnerId: p.partnerId } : {}) };
}

export type LoyaltyCardView = Static<typeof LoyaltyCard>;

/** The card as every card view shows it; `tier` is its part from the tiers module (TiersService.cardViews). */
export function cardView(row: LoyaltyCardRow, tier: CardTierView): LoyaltyCardView {
  return {
    id: row.id,
    card_number: row.cardNumber,
    user_id: row.customerId,
    partner_card_id: row.partnerCardId,
    partner_id: row.partnerId,
    points_balance: row.pointsBalance,
    points_debt: row.pointsDebt,
    qr_content: row.cardNumber,
    source: row.source,
    tier: tier.tier,
    tier_progress: tier.tier_progress,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export interface CardLookup {
  cardId?: number;
  cardNumber?: string;
}

const programmeNotFound = () => missing('resource.partner_card', 'partner_card_id');

const alreadyMember = () =>
  fail<never>('DUPLICATE_VALUE', {
    message: 'cards.already_member',
    items: [{ field: 'partner_card_id', code: 'DUPLICATE_VALUE', key: 'cards.already_member' }],
  });

const numberTaken = () =>
  fail<never>('DUPLICATE_VALUE', {
    message: 'cards.number_taken',
    items: [{ field: 'card_number', code: 'DUPLICATE_VALUE', key: 'cards.number_taken' }],
  });

export class LoyaltyCardsService {
  constructor(
    private readonly deps: {
      db: Db;
      partnerCards: PartnerCardsService;
      customers: CustomersService;
      ledger: PointsLedger;
      tiers: TiersService;
      /** Partner events (DESIGN.md §14): card.created, and the welcome bonus's transaction.created. */
      events?: PartnerEventSink;
    },
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** Card views of rows, their tiers looked up in one statement. */
  /** A card of the partner as the API shows it, read in `tx` (card.tier_changed's data, DESIGN.md §14). */
  async viewIn(tx: Executor, partnerId: number, cardId: number): Promise<LoyaltyCardView | undefined> {
    const row = await repo.find(tx, { partnerId }, cardId);
    return row && (await this.views([row], tx))[0];
  }

  private async views(rows: LoyaltyCardRow[], db: Executor = this.db): Promise<LoyaltyCardView[]> {
    const tiers = await this.deps.tiers.cardViews(rows, db);
    return rows.map((row, i) => cardView(row, tiers[i]!));
  }

  /**
   * A card in a programme for the customer. `partnerScope` (the partner of a QR-login
   * customer token) limits which programmes exist for the caller.
   */
  async create(
    tx: Executor,
    customerId: number,
    input: { partnerCardId: number; cardNumber?: string; partnerScope?: number },
  ): Promise<Result<LoyaltyCardView>> {
    const programme = await this.deps.partnerCards.programme(tx, input.partnerCardId);
    if (!programme || (input.partnerScope !== undefined && programme.partnerId !== input.partnerScope)) return programmeNotFound();
    if (!programme.isActive) {
      return fail('INVALID_STATE', {
        message: 'cards.programme_inactive',
        items: [{ field: 'partner_card_id', code: 'INVALID_STATE', key: 'cards.programme_inactive', meta: { status: 'inactive' } }],
      });
    }
    if (await repo.findOne(tx, { customerId }, { partnerCardId: programme.id })) return alreadyMember();
    if (input.cardNumber !== undefined && (await repo.numberTaken(tx, programme.partnerId, input.cardNumber))) return numberTaken();
    const row = await this.issue(tx, customerId, programme, input.cardNumber);
    // Both were checked above: a conflict now means a concurrent request just won.
    if (!row) return input.cardNumber !== undefined && (await repo.numberTaken(tx, programme.partnerId, input.cardNumber)) ? numberTaken() : alreadyMember();
    return ok(await this.withBonus(tx, row, programme));
  }

  /**
   * auto_assign: the first time a customer meets a partner (QR login at its till), a card in
   * each of the partner's active auto-assigning programmes, with its welcome bonus.
   */
  async ensureMembership(tx: Executor, customerId: number, partnerId: number): Promise<LoyaltyCardView[]> {
    const created: LoyaltyCardView[] = [];
    for (const programme of await this.deps.partnerCards.autoAssignProgrammes(tx, partnerId)) {
      if (await repo.findOne(tx, { customerId }, { partnerCardId: programme.id })) continue;
      const row = await this.issue(tx, customerId, programme, undefined);
      if (row) created.push(await this.withBonus(tx, row, programme));
    }
    return created;
  }

  private async issue(tx: Executor, customerId: number, programme: ProgrammeForIssue, thirdPartyNumber: string | undefined) {
    // An issued number colliding with another is astronomically rare; a few tries settle it.
    for (let attempt = 0; attempt < (thirdPartyNumber === undefined ? 5 : 1); attempt++) {
      const row = await repo.insert(tx, {
        partnerId: programme.partnerId,
        partnerCardId: programme.id,
        customerId,
        cardNumber: thirdPartyNumber ?? issueCardNumber(),
        source: thirdPartyNumber === undefined ? 'issued' : 'third_party',
      });
      if (row) return row;
      if (await repo.findOne(tx, { customerId }, { partnerCardId: programme.id })) return undefined;
    }
    return undefined;
  }

  private async withBonus(tx: Executor, row: LoyaltyCardRow, programme: ProgrammeForIssue): Promise<LoyaltyCardView> {
    // The threshold-0 tier and the welcome bonus, under one lock of the new row.
    const { changed, bonus } = await this.deps.ledger.welcome(tx, row.id, programme.pointsEnabled ? programme.initialBonusPoints : 0);
    // The card as it is now (tier state and balance), read again only when that moved it.
    if (changed) row = (await repo.find(tx, { customerId: row.customerId }, row.id)) ?? row;
    const [view] = await this.views([row], tx);
    // The card first, then the bonus on it.
    await this.deps.events?.emit(tx, row.partnerId, 'card.created', view!);
    if (bonus) await this.deps.events?.emit(tx, row.partnerId, 'transaction.created', bonus);
    return view!;
  }

  /** One card of the owner, with due expiries applied first. */
  async get(owner: CardOwner, lookup: CardLookup): Promise<LoyaltyCardView | undefined> {
    const filter: CardFilter = lookup.cardNumber !== undefined ? { cardNumber: lookup.cardNumber } : {};
    let row = lookup.cardId !== undefined ? await repo.find(this.db, owner, lookup.cardId) : await repo.findOne(this.db, owner, filter);
    if (row && lookup.cardId !== undefined && lookup.cardNumber !== undefined && row.cardNumber !== lookup.cardNumber) return undefined;
    if (row && (await this.deps.ledger.refreshCard(row.id, row.nextExpiryAt))) row = await repo.find(this.db, owner, row.id);
    return row && (await this.views([row]))[0];
  }

  /** Whether the card is the owner's (no expiry refresh: for routes that only need to know). */
  async owns(owner: CardOwner, cardId: number): Promise<boolean> {
    return (await repo.find(this.db, owner, cardId)) !== undefined;
  }

  async list(owner: CardOwner, filter: CardFilter, page: PageWindow): Promise<{ items: LoyaltyCardView[]; total: number }> {
    let { rows, total } = await repo.list(this.db, owner, filter, page.perPage, page.offset);
    let refreshed = false;
    for (const row of rows) refreshed = (await this.deps.ledger.refreshCard(row.id, row.nextExpiryAt)) || refreshed;
    if (refreshed) ({ rows, total } = await repo.list(this.db, owner, filter, page.perPage, page.offset));
    return { items: await this.views(rows), total };
  }

  /** A card's balance after due expiries, and what will expire when. */
  async balance(owner: CardOwner, lookup: CardLookup) {
    const card = await this.get(owner, lookup);
    if (!card) return undefined;
    return {
      card_id: card.id,
      card_number: card.card_number,
      points_balance: card.points_balance,
      points_debt: card.points_debt,
      tier: card.tier,
      tier_progress: card.tier_progress,
      expiring: await this.deps.ledger.expiring(card.id),
    };
  }

  /** What a till shows after scanning a card: the card, its holder and the programme's rules. */
  async info(partnerId: number, lookup: CardLookup) {
    const card = await this.get({ partnerId }, lookup);
    if (!card) return undefined;
    const [customer, programme] = await Promise.all([
      this.deps.customers.get(card.user_id),
      // A card outlives its programme's deletion: its holder can still be shown and spend.
      this.deps.partnerCards.programme(this.db, card.partner_card_id, { includeDeleted: true }),
    ]);
    const rates = displayRates(programme!);
    return {
      card,
      user: { id: customer!.id, name: customer!.name, phone: customer!.phone, email: customer!.email },
      programme: {
        id: programme!.id,
        title: programme!.title,
        is_active: programme!.isActive,
        points_enabled: programme!.pointsEnabled,
          points_redemption_enabled: programme!.pointsRedemptionEnabled,
        ...rates,
        min_points_for_redemption: programme!.minPointsForRedemption,
        max_points_per_redemption: programme!.maxPointsPerRedemption,
      },
      expiring: await this.deps.ledger.expiring(card.id),
    };
  }

  /**
   * For coupons and games: the customer's card with the partner — in programme
   * `partnerCardId`, or (null) the oldest in any of the partner's programmes. `lock` takes its
   * row lock in the caller's transaction (the row every value-moving operation of the card
   * serialises on), always on the same card for the same customer, partner and programme.
   */
  async cardFor(tx: Executor, customerId: number, partnerId: number, partnerCardId: number | null, opts: { lock?: boolean } = {}) {
    const row = await repo.cardOf(tx, customerId, partnerId, partnerCardId, opts.lock ?? false);
    return row && { id: row.id, partnerCardId: row.partnerCardId };
  }

  /** The programme of a card, read in the caller's transaction. */
  async programmeOf(tx: Executor, partnerId: number, cardId: number): Promise<number | undefined> {
    return (await repo.find(tx, { partnerId }, cardId))?.partnerCardId;
  }

  /** The partners a customer holds a card of (what the app's own token sees). */
  partnerIdsOf(customerId: number): Promise<number[]> {
    return repo.partnerIdsOf(this.db, customerId);
  }

  totals(owner: CardOwner, filter: CardFilter = {}): Promise<{ cards: number; points: number }> {
    return loyaltyCardsTotals.totals(this.db, owner, filter);
  }

  /** The partner's cards of several customers at once (for customer lists). */
  async ofCustomers(partnerId: number, customerIds: number[]): Promise<Map<number, LoyaltyCardView[]>> {
    const out = new Map<number, LoyaltyCardView[]>();
    const rows = await repo.ofCustomers(this.db, partnerId, customerIds);
    const views = await this.views(rows);
    rows.forEach((row, i) => out.set(row.customerId, [...(out.get(row.customerId) ?? []), views[i]!]));
    return out;
  }
}
