// Partner card programmes. This issue needs only creation (for the demo seed); the
// partner-interface issue adds the API, validation and the rest of the lifecycle.
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
}
