// Reading the ledger: transaction lists, summaries, balances and the streamed CSV export.
// (Writing is ledger.service.ts.)
import type { Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import { csvField } from '../../shared/csv.js';
import { amountToJson } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import type { CardOwner } from '../loyalty-cards/loyalty-cards.repository.js';
import type { LoyaltyCardsService } from '../loyalty-cards/loyalty-cards.service.js';
import { transactionView, type PointsLedger, type TransactionView } from './ledger.service.js';
import { pointsRepository as repo, type TransactionFilter, type TransactionScope } from './points.repository.js';
import type { TransactionDetails } from './points.schemas.js';

const EXPORT_COLUMNS = [
  'id',
  'created_at',
  'type',
  'points',
  'amount',
  'balance_after',
  'card_id',
  'user_id',
  'shop_id',
  'receipt_number',
  'reason',
  'reverses_id',
  // Added after the others (issue 30) so that a consumer reading columns by position keeps working.
  'returns_id',
] as const;

export type TransactionDetailsView = Static<typeof TransactionDetails>;

/**
 * A purchase's basket lines and where its points came from. The engine (src/modules/awards/)
 * wrote them and reads them; the composition root (src/context.ts) hands its reader over, so
 * the ledger shows a purchase's details without importing the engine.
 */
export type PurchaseDetails = (db: Executor, purchase: { id: number; points: number }) => Promise<Pick<TransactionDetailsView, 'items' | 'breakdown'>>;

export class PointsService {
  constructor(
    private readonly deps: {
      db: Db;
      ledger: PointsLedger;
      cards: LoyaltyCardsService;
      purchaseDetails: PurchaseDetails;
    },
  ) {}

  async list(scope: TransactionScope, filter: TransactionFilter, page: PageWindow): Promise<{ items: TransactionView[]; total: number }> {
    const { rows, total } = await repo.listTransactions(this.deps.db, scope, filter, page.perPage, page.offset);
    return { items: rows.map(transactionView), total };
  }

  /** One transaction with its basket lines, the breakdown of its points and its returns (DESIGN.md §12). */
  async get(scope: TransactionScope, id: number): Promise<TransactionDetailsView | undefined> {
    const row = await repo.findTransaction(this.deps.db, scope, id);
    if (!row) return undefined;
    const view = transactionView(row);
    const returns = (await repo.returnsOf(this.deps.db, row.id)).map(transactionView);
    if (row.type !== 'purchase') return { ...view, items: [], breakdown: [], returns };
    const { items, breakdown } = await this.deps.purchaseDetails(this.deps.db, row);
    return { ...view, items, breakdown, returns };
  }

  async summary(scope: TransactionScope, filter: TransactionFilter) {
    // Totals include the current balances: lots past their expiry are expired first.
    await this.deps.ledger.refreshDue(scope);
    const s = await repo.summary(this.deps.db, scope, filter);
    const owner: CardOwner = { partnerId: scope.partnerId, customerId: scope.customerId };
    let totals = { cards: 0, points: 0 };
    if (filter.cardId !== undefined) {
      const card = await this.deps.cards.get(owner, { cardId: filter.cardId });
      if (card) totals = { cards: 1, points: card.points_balance };
    } else {
      totals = await this.deps.cards.totals(owner, filter.customerId !== undefined ? { customerId: filter.customerId } : {});
    }
    return {
      transactions: Number(s.transactions),
      points_earned: Number(s.earned),
      points_spent: Number(s.spent),
      points_expired: Number(s.expired),
      points_reversed: Number(s.reversed),
      purchases: Number(s.purchases),
      // A sum may exceed one amount's range; JSON shows it with at most 4 decimals.
      purchase_amount: Number(Number(s.purchaseAmount).toFixed(4)),
      cards: totals.cards,
      points_balance: totals.points,
    };
  }

  /** The transactions as CSV, oldest first, read in pages so that memory stays flat. */
  async *exportCsv(scope: TransactionScope, filter: TransactionFilter): AsyncGenerator<string> {
    yield `${EXPORT_COLUMNS.join(',')}\r\n`;
    let after = 0;
    for (;;) {
      const rows = await repo.transactionsAfter(this.deps.db, scope, filter, after, 1000);
      if (rows.length === 0) return;
      let chunk = '';
      for (const r of rows) {
        const v = transactionView(r);
        chunk += `${[
          csvField(v.id),
          csvField(v.created_at),
          csvField(v.type),
          csvField(v.points),
          csvField(r.amount === null ? null : String(amountToJson(r.amount))),
          csvField(v.balance_after),
          csvField(v.card_id),
          csvField(v.user_id),
          csvField(v.shop_id),
          csvField(v.receipt_number, true),
          csvField(v.reason, true),
          csvField(v.reverses_id),
          csvField(v.returns_id),
        ].join(',')}\r\n`;
      }
      yield chunk;
      after = rows[rows.length - 1]!.id;
    }
  }
}
