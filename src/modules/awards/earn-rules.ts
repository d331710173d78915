// Amount-only awards on programmes with campaigns, in one statement (issue 31 Deliver 2; STYLE.md
// "The engine"). A node keeps each partner's earning rules and campaigns in memory (a copy,
// versioned by the database: partner_cards.earn_version, migration 0026) and evaluates an
// amount-only purchase with the pure evaluator BEFORE the statement — once for each fact of
// the card the campaigns depend on (the tier it holds, whether this is its first purchase),
// which the node cannot know until the card's row is locked. The statement (award-statement.ts)
// picks the variant the locked card matches, and only if the version it was computed
// from is still the programme's: a change on any node, or in SQL, sends the award to the
// engine, and the copy is read again.
//
// Only programmes whose campaigns have no limit at all are served so (no `uses`, budget or
// per-customer limit: those are taken under locks, basket-award.ts); the rest keep the engine.
import type { Executor } from '../../infra/db/index.js';
import type { CampaignVariants } from './award-statement.js';
import { basketRepository, type EarnRulesRow } from './basket.repository.js';
import { evaluate, type AppliedCampaign, type BasketLine } from './evaluate.js';

/** A programme with more variants than this keeps the engine (a statement's arrays stay small). */
const MAX_VARIANTS = 32;
/** A copy is read again after this long even if nothing changed (ends, starts: the evaluator reads the time, but a bound keeps memory honest). */
const COPY_TTL_MS = 60_000;
/** Partners whose copies a node keeps (the oldest half dropped past it). */
const MAX_PARTNERS = 10_000;

/** The tier fact of a variant: any tier (the campaigns do not look at it), none held, or a tier id. */
export const ANY_TIER = -1;
export const NO_TIER = 0;

export interface EarnVariant {
  programmeId: number;
  version: number;
  /** ANY_TIER, NO_TIER or the held tier's id. */
  tier: number;
  /** Whether the card has no earlier purchase; null: the campaigns do not look at it. */
  first: boolean | null;
  /** The base points the evaluation used (the statement checks it computes the same). */
  base: number;
  /** The campaigns that apply, in the evaluator's order. */
  campaigns: AppliedCampaign[];
}

const unlimited = (p: EarnRulesRow) =>
  p.campaigns.every((c) => c.limitUses === null && c.pointsBudget === null && c.limitPerCustomer === null && c.limitPerCustomerPerDay === null);

/**
 * Whether no amount-only award of the partner can be one statement: every programme it runs
 * has a limited campaign. Only then may a partner's awards skip the statement altogether; a
 * partner with any other programme keeps trying it (a card's programme is known only once the
 * statement has locked it).
 */
export function noneServed(programmes: readonly EarnRulesRow[]): boolean {
  return programmes.length > 0 && programmes.every((p) => p.campaigns.length > 0 && !unlimited(p));
}

/**
 * The evaluations of an amount-only purchase of `amountUnits` at `shopId`, at `now`, for every
 * programme this copy can serve and every card fact its campaigns depend on. Pure.
 */
export function earnVariants(programmes: readonly EarnRulesRow[], shopId: number, amountUnits: bigint, now: Date): EarnVariant[] {
  const lines: BasketLine[] = [{ position: 0, lineId: '', amountUnits, quantityMilli: 1000n, sku: null, product: null }];
  const out: EarnVariant[] = [];
  for (const p of programmes) {
    if (p.campaigns.length === 0 || !unlimited(p)) continue;
    const tiers = p.campaigns.some((c) => c.tierIds.length > 0) ? [NO_TIER, ...p.tierIds] : [ANY_TIER];
    const firsts = p.campaigns.some((c) => c.firstPurchaseOnly) ? [true, false] : [null];
    if (out.length + tiers.length * firsts.length > MAX_VARIANTS) continue;
    for (const tier of tiers) {
      for (const first of firsts) {
        const e = evaluate({
          lines,
          base: p.base,
          campaigns: p.campaigns,
          // The tier's multiplier is the statement's (it knows the held tier); campaigns do not read it.
          card: { tierId: tier > 0 ? tier : null, tierMultiplierHundredths: 100n, firstPurchase: first ?? false, hasCard: true },
          shopId,
          now,
        });
        out.push({ programmeId: p.id, version: p.version, tier, first, base: e.base.points, campaigns: e.campaigns });
      }
    }
  }
  return out;
}

/** The variants as the statement's arrays, for a card of counter shard `shard`. */
export function statementVariants(variants: readonly EarnVariant[], shard: number): CampaignVariants {
  const apps: CampaignVariants['apps'] = { variant: [], campaign: [], points: [], day: [], ordinal: [] };
  variants.forEach((v, i) =>
    v.campaigns.forEach((c, k) => {
      apps.variant.push(i + 1);
      apps.campaign.push(c.campaignId);
      apps.points.push(c.points);
      apps.day.push(c.day);
      // basket-award.ts sourcesOf: base 0, tier 1, the campaigns from 2 in order.
      apps.ordinal.push(2 + k);
    }),
  );
  return {
    programme: variants.map((v) => v.programmeId),
    version: variants.map((v) => v.version),
    tier: variants.map((v) => v.tier),
    first: variants.map((v) => v.first),
    base: variants.map((v) => v.base),
    campaignPoints: variants.map((v) => v.campaigns.reduce((s, c) => s + c.points, 0)),
    apps,
    needFirst: variants.some((v) => v.first !== null),
    shard,
  };
}

/** Each partner's copy of its programmes' earning rules and campaigns, on this node. */
export class EarnRules {
  private readonly copies = new Map<number, { at: number; programmes: EarnRulesRow[] }>();
  private readonly loading = new Map<number, Promise<void>>();

  constructor(
    private readonly db: Executor,
    private readonly now: () => Date,
    private readonly monotonic: () => number = () => performance.now(),
  ) {}

  /** The partner's copy, if this node has a fresh one. */
  get(partnerId: number): EarnRulesRow[] | undefined {
    const copy = this.copies.get(partnerId);
    if (!copy) return undefined;
    if (this.monotonic() - copy.at > COPY_TTL_MS) {
      this.copies.delete(partnerId);
      return undefined;
    }
    return copy.programmes;
  }

  /**
   * Read the partner's copy again (at most one read per partner at a time). The award that
   * found it missing or stale has gone to the engine meanwhile; a failed read is dropped.
   */
  refresh(partnerId: number): Promise<void> {
    const running = this.loading.get(partnerId);
    if (running) return running;
    this.copies.delete(partnerId);
    const load = basketRepository
      .earnRules(this.db, partnerId, this.now())
      .then((programmes) => {
        if (this.copies.size >= MAX_PARTNERS) {
          let drop = Math.ceil(MAX_PARTNERS / 2);
          for (const k of this.copies.keys()) {
            if (drop-- <= 0) break;
            this.copies.delete(k);
          }
        }
        this.copies.set(partnerId, { at: this.monotonic(), programmes });
      })
      .catch(() => undefined)
      .finally(() => this.loading.delete(partnerId));
    this.loading.set(partnerId, load);
    return load;
  }
}
