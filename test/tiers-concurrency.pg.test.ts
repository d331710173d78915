// Tier upgrades under concurrency (DESIGN.md §13 "exact under concurrency"), on PostgreSQL
// with real parallel connections: 20 awards at once on one card, split over two app nodes on
// one database (one node alone would batch a card's awards in turn, in process), cross a
// threshold — the card ends in the right tier with exactly one history row, and its value
// is the sum of what was earned. PostgreSQL only: PGlite runs one transaction at a time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { loyaltyCards } from '../src/modules/loyalty-cards/loyalty-cards.tables.js';
import { cardTierHistory, tiers } from '../src/modules/tiers/tiers.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { assertLedgerConsistent, award, createCustomer, createProgramme, createShop, joinProgramme } from './helpers/loyalty.js';

describe('tier upgrades under concurrency', () => {
  let t: TestApp;
  let second: TestApp;
  let p: PartnerFixture;
  let shop: number;

  before(async () => {
    t = await startTestApp({ DATABASE_POOL_MAX: '20' });
    second = await startTestApp({ DATABASE_POOL_MAX: '20' }, t.db);
    p = await createPartner(t);
    shop = await createShop(t, p.id);
  });
  after(async () => {
    await second.close();
    await t.close();
  });

  it('20 parallel awards on one card crossing Silver and Gold: the right tier, one history row per move, the exact value', async () => {
    const db = t.app.context.database.db;
    const programme = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1' });
    const [silver] = await db.insert(tiers).values({ partnerId: p.id, partnerCardId: programme, name: { en: 'Silver', lt: 'Sidabras' }, threshold: 100 }).returning();
    const [gold] = await db.insert(tiers).values({ partnerId: p.id, partnerCardId: programme, name: { en: 'Gold', lt: 'Auksas' }, threshold: 190 }).returning();
    const card = (await joinProgramme(t, await createCustomer(t), programme)).id;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => award(i % 2 === 0 ? t : second, p, { card_id: card, shop_id: shop, amount: 10, receipt_number: `TC-${i}` })),
    );
    for (const r of results) assert.equal(r.status, 201, r.text);
    const [row] = await db.select().from(loyaltyCards).where(eq(loyaltyCards.id, card));
    assert.equal(Number(row!.tierValue), 200);
    assert.equal(row!.pointsBalance, 200);
    assert.equal(row!.tierId, gold!.id);
    const history = await db.select().from(cardTierHistory).where(eq(cardTierHistory.cardId, card)).orderBy(cardTierHistory.id);
    assert.deepEqual(
      history.map((h) => [h.fromTierId, h.toTierId, h.reason]),
      [
        [null, silver!.id, 'earned'],
        [silver!.id, gold!.id, 'earned'],
      ],
    );
    await assertLedgerConsistent(t);
  });
});
