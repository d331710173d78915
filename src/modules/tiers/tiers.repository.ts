// SQL of tiers (DESIGN.md §13): the programme's tiers, the card's tier state and history,
// the qualifying value counted from the ledger, and the cards the background jobs work on.
import { and, asc, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { loyaltyCards } from '../loyalty-cards/loyalty-cards.tables.js';
// The tier settings are programme columns: read and versioned here, edited by partner-cards.
import { partnerCards } from '../partner-cards/partner-cards.tables.js';
import type { CardTierState, TierDef, TierMove, TierSettings } from './tier-rules.js';
import { textToUnits } from './tier-rules.js';
import { cardTierHistory, tiers, type TierHistoryReason } from './tiers.tables.js';

export type TierRow = typeof tiers.$inferSelect;
export type TierHistoryRow = typeof cardTierHistory.$inferSelect;

export const tierDef = (r: Pick<TierRow, 'id' | 'threshold' | 'name' | 'color' | 'earnMultiplier'>): TierDef => ({
  id: r.id,
  threshold: r.threshold,
  name: r.name,
  color: r.color,
  multiplierHundredths: textToUnits(r.earnMultiplier) / 100n,
});

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;
const ts = (d: Date | null) => (d === null ? null : d.toISOString());

/** `, tier_id = …, …`: the card's tier state, for the ledger's own card update (one statement per entry). */
export function tierColumns(st: CardTierState): SQL {
  return sql`, tier_id = ${st.tierId}::int, tier_value = ${unitsText(st.valueUnits)}::numeric,
    tier_value_until = ${ts(st.valueUntil)}::timestamptz, tier_reached_at = ${ts(st.reachedAt)}::timestamptz,
    tier_keep_until = ${ts(st.keepUntil)}::timestamptz`;
}

export const tiersRepository = {
  /** The tiers of programmes, lowest threshold first. */
  async ofProgrammes(db: Executor, partnerCardIds: number[]): Promise<TierRow[]> {
    if (partnerCardIds.length === 0) return [];
    return db.select().from(tiers).where(inArray(tiers.partnerCardId, partnerCardIds)).orderBy(asc(tiers.threshold));
  },

  async settings(db: Executor, partnerCardId: number): Promise<(TierSettings & { version: number }) | undefined> {
    const [row] = await db
      .select({
        basis: partnerCards.tierBasis,
        window: partnerCards.tierWindow,
        downgrade: partnerCards.tierDowngrade,
        timeZone: partnerCards.tierTimeZone,
        version: partnerCards.tiersVersion,
      })
      .from(partnerCards)
      .where(eq(partnerCards.id, partnerCardId));
    return row;
  },

  /** Tiers or tier settings changed: every card of the programme is re-evaluated in the background. */
  async bumpVersion(db: Executor, partnerCardId: number): Promise<void> {
    await db.update(partnerCards).set({ tiersVersion: sql`${partnerCards.tiersVersion} + 1` }).where(eq(partnerCards.id, partnerCardId));
  },

  /**
   * The card's qualifying value counted from the ledger: every earning entry (purchase,
   * bonus, game) in the window that was not reversed, net of its returns; for amount_spent,
   * purchases' amounts net of returns. Also the earliest such entry (when the value changes
   * next by time).
   */
  async count(db: Executor, cardId: number, s: TierSettings, start: Date | null, end: Date | null = null): Promise<{ valueUnits: bigint; first: Date | null }> {
    const value =
      s.basis === 'points_earned'
        ? sql`e.points + coalesce((select sum(r.points) from points_transactions r where r.returns_id = e.id), 0)`
        : sql`case when e.type = 'purchase' then coalesce(e.amount, 0) + coalesce((select sum(r.amount) from points_transactions r where r.returns_id = e.id), 0) else 0 end`;
    const after = start === null ? sql`true` : s.window === 'rolling_12_months' ? sql`e.created_at > ${ts(start)}::timestamptz` : sql`e.created_at >= ${ts(start)}::timestamptz`;
    const [row] = rowsOf<{ value: string; first_ms: number | null }>(
      await db.execute(sql`
        select coalesce(sum(v), 0)::text as value, (extract(epoch from min(at)) * 1000)::float8 as first_ms
        from (
          select e.created_at as at, ${value} as v
          from points_transactions e
          where e.card_id = ${cardId} and e.type in ('purchase', 'bonus', 'game') and ${after}
            and (${ts(end)}::timestamptz is null or e.created_at < ${ts(end)}::timestamptz)
            and not exists (select 1 from points_transactions x where x.reverses_id = e.id)
        ) s
        where v <> 0`),
    );
    return { valueUnits: textToUnits(row!.value), first: row!.first_ms === null ? null : new Date(Number(row!.first_ms)) };
  },

  /** The card's tier state changed without a ledger entry (time's work, re-evaluation, a new card's tier). */
  async writeState(db: Executor, cardId: number, st: CardTierState, version?: number): Promise<void> {
    await db.execute(sql`
      update loyalty_cards set tier_version = ${version === undefined ? sql`tier_version` : sql`${version}::int`} ${tierColumns(st)},
        -- A tier move by time or re-evaluation changes the card as its holder sees it (wallet passes follow updated_at).
        updated_at = case when tier_id is distinct from ${st.tierId}::int then greatest(now(), updated_at + interval '1 millisecond') else updated_at end
      where id = ${cardId}`);
  },

  async recordMove(db: Executor, cardId: number, move: TierMove, names: Map<number, { en: string; lt: string }>, at: Date): Promise<void> {
    // A move away from a deleted tier: its id is gone, its name is the one the history last gave it.
    const fromKnown = move.from !== null && names.has(move.from);
    let fromName = fromKnown ? names.get(move.from!)! : null;
    if (move.from !== null && !fromKnown) {
      const [last] = await db.select({ name: cardTierHistory.toName }).from(cardTierHistory).where(eq(cardTierHistory.cardId, cardId)).orderBy(desc(cardTierHistory.id)).limit(1);
      fromName = last?.name ?? null;
    }
    await db.insert(cardTierHistory).values({
      cardId,
      fromTierId: fromKnown ? move.from : null,
      fromName,
      toTierId: move.to,
      toName: move.to === null ? null : (names.get(move.to) ?? null),
      reason: move.reason as TierHistoryReason,
      at,
    });
  },

  async history(db: Executor, cardId: number, limit: number, offset: number): Promise<{ rows: TierHistoryRow[]; total: number }> {
    const rows = await db
      .select()
      .from(cardTierHistory)
      .where(eq(cardTierHistory.cardId, cardId))
      .orderBy(desc(cardTierHistory.at), desc(cardTierHistory.id))
      .limit(limit)
      .offset(offset);
    const [c] = await db.select({ n: sql<number>`count(*)::int` }).from(cardTierHistory).where(eq(cardTierHistory.cardId, cardId));
    return { rows, total: Number(c!.n) };
  },

  /** Cards whose value left its window or whose kept tier ran out (end_of_window), soonest first. */
  async dueCards(db: Executor, now: Date, limit: number): Promise<number[]> {
    const rows = rowsOf<{ id: number }>(
      await db.execute(sql`
        (select c.id from loyalty_cards c where c.tier_value_until <= ${ts(now)}::timestamptz order by c.tier_value_until limit ${limit})
        union
        (select c.id from loyalty_cards c join partner_cards pc on pc.id = c.partner_card_id
          where c.tier_keep_until <= ${ts(now)}::timestamptz and pc.tier_downgrade = 'end_of_window' order by c.tier_keep_until limit ${limit})`),
    );
    return rows.map((r) => Number(r.id));
  },

  /** A programme whose tiers changed after its cards were last evaluated, with that version. */
  async changedProgramme(db: Executor): Promise<{ id: number; version: number } | undefined> {
    const [row] = await db
      .select({ id: partnerCards.id, version: partnerCards.tiersVersion })
      .from(partnerCards)
      .where(sql`${partnerCards.tiersVersion} > ${partnerCards.tiersEvaluatedVersion}`)
      .orderBy(asc(partnerCards.id))
      .limit(1);
    return row;
  },

  /** Cards of the programme not yet evaluated at `version`, claimed with SKIP LOCKED. */
  async claimBehind(db: Executor, partnerCardId: number, version: number, limit: number): Promise<number[]> {
    const rows = await db
      .select({ id: loyaltyCards.id })
      .from(loyaltyCards)
      .where(and(eq(loyaltyCards.partnerCardId, partnerCardId), sql`${loyaltyCards.tierVersion} < ${version}`))
      .orderBy(asc(loyaltyCards.id))
      .limit(limit)
      .for('update', { skipLocked: true });
    return rows.map((r) => r.id);
  },

  /** Marks the programme evaluated at `version` once no card is behind it (and nobody bumped it since). */
  async markEvaluated(db: Executor, partnerCardId: number, version: number): Promise<boolean> {
    const rows = rowsOf<{ id: number }>(
      await db.execute(sql`
        update partner_cards set tiers_evaluated_version = ${version}
        where id = ${partnerCardId} and tiers_version = ${version}
          and not exists (select 1 from loyalty_cards c where c.partner_card_id = ${partnerCardId} and c.tier_version < ${version})
        returning id`),
    );
    return rows.length > 0;
  },

  /** Cards per tier of the partner's programmes (the Overview chart); tier null = no tier. */
  async cardsPerTier(db: Executor, partnerId: number): Promise<Array<{ partnerCardId: number; tierId: number | null; cards: number }>> {
    const rows = rowsOf<{ partner_card_id: number; tier_id: number | null; cards: number }>(
      await db.execute(sql`
        select c.partner_card_id, t.id as tier_id, count(*)::int as cards
        from loyalty_cards c left join tiers t on t.id = c.tier_id
        where c.partner_id = ${partnerId}
        group by c.partner_card_id, t.id`),
    );
    return rows.map((r) => ({ partnerCardId: Number(r.partner_card_id), tierId: r.tier_id === null ? null : Number(r.tier_id), cards: Number(r.cards) }));
  },
};

function unitsText(units: bigint): string {
  const neg = units < 0n;
  const abs = neg ? -units : units;
  return `${neg ? '-' : ''}${abs / 10_000n}.${(abs % 10_000n).toString().padStart(4, '0')}`;
}
