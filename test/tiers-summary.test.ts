// The console's tier endpoints (partner JWT): GET partners/tiers/summary — cards per tier of
// each programme that has tiers, for the Overview chart (every tier with its count, 0 where no
// card holds it, the cards without a tier first; programmes without tiers and deleted ones
// left out; another partner's cards never counted) — and GET
// partners/loyalty-cards/{id}/tier-history, the shop route's history for the console's
// credential (own cards only; another partner's card is 404).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { partnerCards } from '../src/modules/partner-cards/partner-cards.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { award, createCustomer, createProgramme, createShop, joinProgramme } from './helpers/loyalty.js';

const en = (name: string) => ({ en: name, lt: `${name} LT` });
const TITLE = { en: 'Card', lt: 'Kortelė' };

describe('tiers summary and the console tier history', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let other: PartnerFixture;
  let programme: number;
  let bronze: { id: number };
  let silver: { id: number };
  let gold: { id: number };
  let otherProgramme: number;
  let otherTier: { id: number };
  let silverCard: number;
  let otherCard: number;
  let receipt = 0;

  const summary = (who: PartnerFixture | null = p) => request(t.url, 'GET', '/en/partners/tiers/summary', { headers: who ? bearer(who.token) : {} });
  const consoleHistory = (cardId: number, who: PartnerFixture = p) => request(t.url, 'GET', `/en/partners/loyalty-cards/${cardId}/tier-history`, { headers: bearer(who.token) });
  const tier = async (who: PartnerFixture, prog: number, name: string, threshold: number, color: string | null = null) => {
    const res = await request(t.url, 'POST', `/en/partners/cards/${prog}/tiers`, { headers: bearer(who.token), json: { name: en(name), threshold, color } });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: number };
  };
  const cardWith = async (who: PartnerFixture, prog: number, shop: number, amount: number) => {
    const card = (await joinProgramme(t, await createCustomer(t), prog)).id;
    if (amount > 0) {
      const res = await award(t, who, { card_id: card, shop_id: shop, amount, receipt_number: `S-${++receipt}` });
      assert.equal(res.status, 201, res.text);
    }
    return card;
  };

  before(async () => {
    t = await startTestApp();
    p = await createPartner(t, 'Kavinė');
    other = await createPartner(t, 'Other');
    const rules = { pointsPerCurrency: '1', currencyAmount: '1' };
    programme = await createProgramme(t, p.id, rules);
    // Created out of order: the summary lists them by threshold.
    gold = await tier(p, programme, 'Gold', 500, '#D4AF37');
    bronze = await tier(p, programme, 'Bronze', 10);
    silver = await tier(p, programme, 'Silver', 100, '#C0C0C0');
    const shop = await createShop(t, p.id);
    await cardWith(p, programme, shop, 0);
    await cardWith(p, programme, shop, 20);
    await cardWith(p, programme, shop, 30);
    silverCard = await cardWith(p, programme, shop, 150);
    // Another partner's cards on the same store, in a tier of its own.
    otherProgramme = await createProgramme(t, other.id, rules);
    otherTier = await tier(other, otherProgramme, 'Other', 5);
    const otherShop = await createShop(t, other.id);
    otherCard = await cardWith(other, otherProgramme, otherShop, 50);
    await cardWith(other, otherProgramme, otherShop, 0);
  });
  after(() => t.close());

  describe('GET partners/tiers/summary', () => {
    it("counts the partner's cards per tier, lowest threshold first, with the cards without a tier first and 0 where none", async () => {
      // A programme without tiers is left out, cards or not.
      const plain = await createProgramme(t, p.id);
      await joinProgramme(t, await createCustomer(t), plain);
      const res = await summary();
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data, [
        {
          partner_card_id: programme,
          title: TITLE,
          tiers: [
            { tier_id: null, name: null, color: null, cards: 1 },
            { tier_id: bronze.id, name: en('Bronze'), color: null, cards: 2 },
            { tier_id: silver.id, name: en('Silver'), color: '#C0C0C0', cards: 1 },
            { tier_id: gold.id, name: en('Gold'), color: '#D4AF37', cards: 0 },
          ],
        },
      ]);
    });

    it("each partner sees only its own programmes and cards", async () => {
      const res = await summary(other);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data, [
        {
          partner_card_id: otherProgramme,
          title: TITLE,
          tiers: [
            { tier_id: null, name: null, color: null, cards: 1 },
            { tier_id: otherTier.id, name: en('Other'), color: null, cards: 1 },
          ],
        },
      ]);
      const fresh = await createPartner(t, 'Fresh');
      assert.deepEqual((await summary(fresh)).body.data, []);
    });

    it('a deleted programme is left out; a programme with tiers and no cards shows zeros', async () => {
      const empty = await createProgramme(t, p.id);
      const only = await tier(p, empty, 'Only', 0);
      const gone = await createProgramme(t, p.id);
      await tier(p, gone, 'Gone', 0);
      await t.app.context.database.db.update(partnerCards).set({ deletedAt: new Date() }).where(eq(partnerCards.id, gone));
      const res = await summary();
      assert.deepEqual(
        res.body.data.map((x: { partner_card_id: number }) => x.partner_card_id),
        [programme, empty],
      );
      assert.deepEqual(res.body.data[1].tiers, [
        { tier_id: null, name: null, color: null, cards: 0 },
        { tier_id: only.id, name: en('Only'), color: null, cards: 0 },
      ]);
    });

    it('takes only the partner JWT', async () => {
      assert.equal((await summary(null)).status, 401);
      const withKey = await request(t.url, 'GET', '/en/partners/tiers/summary', { headers: apiHeaders(p.apiKey) });
      assert.ok([401, 403].includes(withKey.status), withKey.text);
    });
  });

  describe('GET partners/loyalty-cards/{id}/tier-history', () => {
    it("answers the card's moves, newest first, with meta", async () => {
      const res = await consoleHistory(silverCard);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.meta, { current_page: 1, per_page: 20, total: 1, last_page: 1 });
      assert.equal(res.body.data.length, 1);
      assert.deepEqual({ ...res.body.data[0], at: 'x' }, { from: null, to: { id: silver.id, name: en('Silver') }, reason: 'earned', at: 'x' });
    });

    it("another partner's card is 404, as is an unknown one; other credentials are refused", async () => {
      for (const [label, res] of [
        ['another partner', await consoleHistory(otherCard)],
        ['the other way round', await consoleHistory(silverCard, other)],
        ['unknown card', await consoleHistory(2147483647)],
      ] as const) {
        assert.equal(res.status, 404, `${label}: ${res.text}`);
        assert.equal(res.body.code, 'RESOURCE_NOT_FOUND', label);
      }
      assert.equal((await consoleHistory(otherCard, other)).status, 200);
      assert.equal((await request(t.url, 'GET', `/en/partners/loyalty-cards/${silverCard}/tier-history`)).status, 401);
      const withKey = await request(t.url, 'GET', `/en/partners/loyalty-cards/${silverCard}/tier-history`, { headers: apiHeaders(p.apiKey) });
      assert.ok([401, 403].includes(withKey.status), withKey.text);
    });
  });
});
