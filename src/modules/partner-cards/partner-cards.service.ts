// Partner card programmes. This issue needs only creation (for the demo seed); the
// partner-interface issue adds the API, validation and the rest of the lifecycle.
import { and, asc, eq } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import { partnerCards, partnerCardShops, type CardDesign, type LocalizedText } from './partner-cards.tables.js';

export interface NewPartnerCard {
  title: { en: string; lt: string };
  description: LocalizedText;
  termsConditions: LocalizedText;
  cardDesign: CardDesign;
  shopIds?: number[];
  initialBonusPoints?: number;
  pointsPerCurrency?: string;
  currencyAmount?: string;
  pointsRedemptionEnabled?: boolean;
}

export class PartnerCardsService {
  /** Insert a card programme; `shopIds` must already be checked to be the partner's own. */
  async create(tx: Executor, partnerId: number, card: NewPartnerCard): Promise<{ id: number }> {
    const { shopIds = [], ...fields } = card;
    const [row] = await tx
      .insert(partnerCards)
      .values({ partnerId, ...fields })
      .returning({ id: partnerCards.id });
    if (shopIds.length > 0) {
      await tx.insert(partnerCardShops).values(shopIds.map((shopId) => ({ cardId: row!.id, shopId })));
    }
    return row!;
  }

  /** What issuing a loyalty card needs to know about a programme (any partner's: callers check the owner). */
  async programme(tx: Executor, id: number): Promise<ProgrammeForIssue | undefined> {
    const [row] = await tx.select(programmeColumns).from(partnerCards).where(eq(partnerCards.id, id));
    return row;
  }

  /** The partner's active programmes that assign a card to every new customer. */
  autoAssignProgrammes(tx: Executor, partnerId: number): Promise<ProgrammeForIssue[]> {
    return tx
      .select(programmeColumns)
      .from(partnerCards)
      .where(and(eq(partnerCards.partnerId, partnerId), eq(partnerCards.isActive, true), eq(partnerCards.autoAssign, true)))
      .orderBy(asc(partnerCards.id));
  }
}

const programmeColumns = {
  id: partnerCards.id,
  partnerId: partnerCards.partnerId,
  isActive: partnerCards.isActive,
  pointsEnabled: partnerCards.pointsEnabled,
  initialBonusPoints: partnerCards.initialBonusPoints,
  title: partnerCards.title,
  pointsPerCurrency: partnerCards.pointsPerCurrency,
  currencyAmount: partnerCards.currencyAmount,
  pointsRedemptionEnabled: partnerCards.pointsRedemptionEnabled,
  pointsPerCurrencyRedemption: partnerCards.pointsPerCurrencyRedemption,
  currencyAmountRedemption: partnerCards.currencyAmountRedemption,
  minPointsForRedemption: partnerCards.minPointsForRedemption,
  maxPointsPerRedemption: partnerCards.maxPointsPerRedemption,
};

export interface ProgrammeForIssue {
  id: number;
  partnerId: number;
  isActive: boolean;
  pointsEnabled: boolean;
  initialBonusPoints: number;
  title: { en: string; lt: string };
  pointsPerCurrency: string;
  currencyAmount: string;
  pointsRedemptionEnabled: boolean;
  pointsPerCurrencyRedemption: string;
  currencyAmountRedemption: string;
  minPointsForRedemption: number;
  maxPointsPerRedemption: number | null;
}
