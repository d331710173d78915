// QR card identification at a point of sale (DESIGN.md §5): the till shows a QR, the
// customer's app scans it and shares one of their cards; the till gets the card data (the
// balance and the redemption settings) on `qr-card.{session_id}` and from the status poll.
import { sha256Hex } from '../../shared/crypto.js';
import { missing, ok, type Result } from '../../shared/errors.js';
import { iso } from '../../shared/time.js';
import type { LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import { effectiveStatus, invalidState, openSession, publishQuietly, scanCodeOf, sessionNotFound, type GeneratedSession, type QrDeps } from './qr-login.service.js';
import { qrRepository as repo, type QrCardRow } from './qr.repository.js';

export class QrCardService {
  constructor(private readonly deps: QrDeps & { cards: LoyaltyCardsService }) {}

  generate(partnerId: number, input: { deviceName?: string; shopId?: number }): Promise<Result<GeneratedSession>> {
    return openSession(this.deps, 'qr-card', partnerId, input.shopId, (session) =>
      repo.insertCard(this.deps.db, { ...session, partnerId, shopId: input.shopId ?? null, deviceName: input.deviceName ?? null }),
    );
  }

  async status(partnerId: number, sessionId: string) {
    const row = sessionId.length <= 64 ? await repo.findCard(this.deps.db, partnerId, sessionId) : undefined;
    if (!row) return undefined;
    const status = effectiveStatus(row, ['pending'], this.deps.clock.now());
    return { session_id: row.id, status, expires_at: iso(row.expiresAt), card: status === 'scanned' ? await this.cardData(row) : null };
  }

  /** The app shares one of the customer's own cards in the session's partner's programmes. */
  async share(customerId: number, codeInput: string, cardId: number) {
    const { deps } = this;
    const codeHash = sha256Hex(scanCodeOf(codeInput));
    const session = await repo.findCardByCode(deps.db, codeHash);
    if (!session) return sessionNotFound('code');
    const card = await deps.cards.get({ customerId, partnerId: session.partnerId }, { cardId });
    if (!card) {
      return missing('resource.loyalty_card', 'card_id');
    }
    const row = await repo.shareCard(deps.db, codeHash, card.id, deps.clock.now());
    if (!row) {
      // Lost to a concurrent share, or expired: report the state as it is now.
      const current = (await repo.findCardByCode(deps.db, codeHash)) ?? session;
      return invalidState(effectiveStatus(current, ['pending'], deps.clock.now()));
    }
    const data = await this.cardData(row);
    await publishQuietly(deps, `qr-card.${row.id}`, { status: 'scanned', seq: row.seq, card: data });
    return ok({ status: 'scanned' as const, card_id: card.id });
  }

  async expireDue(limit: number): Promise<number> {
    const rows = await repo.expireCards(this.deps.db, this.deps.clock.now(), limit);
    for (const row of rows) await publishQuietly(this.deps, `qr-card.${row.id}`, { status: 'expired', seq: row.seq });
    return rows.length;
  }

  private async cardData(row: QrCardRow) {
    const info = await this.deps.cards.info(row.partnerId, { cardId: row.cardId! });
    return info ?? null;
  }
}
