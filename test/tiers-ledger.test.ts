// Tiers in the ledger (DESIGN.md §13), on the store the suite runs on: the qualifying value
// moving with every earning, return and reversal, the upgrade at the crossing award (which
// itself earns at the tier held before it), the multiplier as a `tier` row of the breakdown,
// each basis and window (keep_until on a test clock, never by sleeping), the window-end
// sweep and `never`, a return that drops the value below a threshold, campaigns' tier_ids,
// and the background re-evaluation after thresholds change. Concurrency:
// test/tiers-concurrency.pg.test.ts. The API and the card views: test/tiers-api.test.ts.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { loyaltyCards } from '../src/modules/loyalty-cards/loyalty-cards.tables.js';
import { partnerCards } from '../src/modules/partner-cards/partner-cards.tables.js';
import { cardTierHistory, tiers } from '../src/modules/tiers/tiers.tables.js';
import { tiersRepository } from '../src/modules/tiers/tiers.repository.js';
import { pointsRepository } from '../src/modules/points/points.repository.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { assertLedgerConsistent, award, createCustomer, createProgramme, createShop, deduct, joinProgramme, TestClock } from './helpers/loyalty.js';

describe('tiers in the ledger', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let shop: number;
  let programme: number;
  let silver: number;
  let gold: number;
  const clock = new TestClock(Date.parse('2026-11-25T10:00:00Z'));
  const setClock = (iso: string) => clock.advanceMs(Date.parse(iso) - clock.now().getTime());
  const db = () => t.app.context.database.db;
  const ledger = () => t.app.context.services.ledger;

  async function addTier(partnerCardId: number, name: string, threshold: number, earnMultiplier = '1') {
    const [row] = await db()
      .insert(tiers)
      .values({ partnerId: p.id, partnerCardId, name: { en: name, lt: name }, threshold, earnMultiplier })
      .returning({ id: tiers.id });
    return row!.id;
  }
  async function freshProgramme(settings: Partial<typeof partnerCards.$inferInsert> = {}) {
    programme = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1', ...settings });
    silver = await addTier(programme, 'Silver', 100, '1.5');
    gold = await addTier(programme, 'Gold', 300, '2');
    return programme;
  }
  const newCard = async () => (await joinProgramme(t, await createCustomer(t), programme)).id;
  let receipt = 0;
  const buy = async (card: number, amount: number | string) => {
    const res = await award(t, p, { card_id: card, shop_id: shop, amount, receipt_number: `R-${++receipt}` });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: number; points: number; breakdown: Array<{ source: string; points: number }> };
  };
  const state = async (card: number) => {
    const [row] = await db()
      .select({ tierId: loyaltyCards.tierId, value: loyaltyCards.tierValue, keepUntil: loyaltyCards.tierKeepUntil, balance: loyaltyCards.pointsBalance })
      .from(loyaltyCards)
      .where(eq(loyaltyCards.id, card));
    return { tierId: row!.tierId, value: Number(row!.value), keepUntil: row!.keepUntil?.toISOString() ?? null, balance: row!.balance };
  };
  const history = async (card: number) =>
    (await db().select().from(cardTierHistory).where(eq(cardTierHistory.cardId, card)).orderBy(cardTierHistory.id)).map((h) => [h.fromTierId, h.toTierId, h.reason]);
  const sources = (b: Array<{ source: string; points: number }>) => b.map((r) => [r.source, r.points]);
  const returnAmount = (id: number, amount: number | string) =>
    request(t.url, 'POST', `/en/shop/transactions/${id}/return`, { headers: apiHeaders(p.apiKey), json: { amount } });
  const reverse = (id: number) => request(t.url, 'POST', `/en/shop/transactions/${id}/reverse`, { headers: apiHeaders(p.apiKey), json: {} });

  before(async () => {
    t = await startTestApp({}, undefined, { clock, workers: false });
    p = await createPartner(t, 'Tiers shop');
    shop = await createShop(t, p.id);
  });
  after(() => t.close());
  beforeEach(async () => {
    setClock('2026-11-25T10:00:00Z');
    await freshProgramme();
  });

  it('upgrades in the award that crosses the threshold; that award earns at the old tier, the next one with the multiplier row', async () => {
    const card = await newCard();
    assert.deepEqual(sources((await buy(card, 60)).breakdown), [['base', 60]]);
    assert.deepEqual(await state(card), { tierId: null, value: 60, keepUntil: null, balance: 60 });
    const crossing = await buy(card, 50);
    assert.deepEqual(sources(crossing.breakdown), [['base', 50]], 'the crossing award earns at the tier held before it');
    const after1 = await state(card);
    assert.equal(after1.tierId, silver);
    assert.equal(after1.value, 110);
    assert.equal(after1.keepUntil, '2027-11-25T10:00:00.000Z', 'rolling_12_months keeps a tier 12 months from when it was reached');
    const next = await buy(card, 11);
    assert.deepEqual(sources(next.breakdown), [['base', 11], ['tier', 5]], '11 × (1.5 − 1) = 5.5, rounded down');
    assert.equal(next.points, 16);
    assert.equal((await state(card)).value, 126, 'points earned count every source, the tier row too');
    // Straight past Gold: one move, from Silver to Gold.
    await buy(card, 200);
    assert.equal((await state(card)).tierId, gold);
    assert.deepEqual(await history(card), [
      [null, silver, 'earned'],
      [silver, gold, 'earned'],
    ]);
    const read = await request(t.url, 'GET', `/en/partners/transactions/${next.id}`, { headers: bearer(p.token) });
    assert.deepEqual(sources(read.body.data.breakdown), [['base', 11], ['tier', 5]]);
    await assertLedgerConsistent(t);
  });

  it('the multiplier rounds up with round_points_up and is shared over the basket lines', async () => {
    await db().update(partnerCards).set({ roundPointsUp: true }).where(eq(partnerCards.id, programme));
    const card = await newCard();
    await buy(card, 100);
    const res = await award(t, p, {
      card_id: card,
      shop_id: shop,
      receipt_number: `R-${++receipt}`,
      items: [
        { line_id: 'a', quantity: 1, amount: 7 },
        { line_id: 'b', quantity: 1, amount: 4 },
      ],
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(sources(res.body.data.breakdown), [['base', 11], ['tier', 6]]);
    assert.deepEqual(
      res.body.data.items.map((i: { line_id: string; points: number }) => [i.line_id, i.points]),
      [
        ['a', 11],
        ['b', 6],
      ],
    );
    // Returning a line takes its tier points back with it.
    const back = await request(t.url, 'POST', `/en/shop/transactions/${res.body.data.id}/return`, {
      headers: apiHeaders(p.apiKey),
      json: { items: [{ line_id: 'b', quantity: 1 }] },
    });
    assert.equal(back.status, 201, back.text);
    assert.equal(back.body.data.points, -6);
    await assertLedgerConsistent(t);
  });

  it('amount_spent counts the amounts of purchases net of returns, not bonuses or points', async () => {
    await db().update(partnerCards).set({ tierBasis: 'amount_spent', initialBonusPoints: 500 }).where(eq(partnerCards.id, programme));
    const card = await newCard();
    assert.deepEqual(await state(card), { tierId: null, value: 0, keepUntil: null, balance: 500 }, 'a welcome bonus is not spending');
    const a = await buy(card, '99.5');
    assert.equal((await state(card)).tierId, null);
    await buy(card, '0.5');
    assert.equal((await state(card)).tierId, silver, 'exactly at the threshold: 100 EUR');
    const back = await returnAmount(a.id, '0.25');
    assert.equal(back.status, 201, back.text);
    const s = await state(card);
    assert.equal(s.value, 99.75);
    assert.equal(s.tierId, null, 'a return below the threshold recomputes the tier at once');
    assert.deepEqual((await history(card)).at(-1), [silver, null, 'returned']);
  });

  it('points_earned counts bonuses and game wins; a reversal takes its earning out', async () => {
    await db().update(partnerCards).set({ initialBonusPoints: 40 }).where(eq(partnerCards.id, programme));
    const card = await newCard();
    assert.equal((await state(card)).value, 40);
    const a = await buy(card, 70);
    assert.equal((await state(card)).tierId, silver);
    const r = await reverse(a.id);
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(await state(card), { tierId: null, value: 40, keepUntil: null, balance: 40 });
    assert.deepEqual((await history(card)).at(-1), [silver, null, 'returned']);
    // A manual adjustment is not an earning.
    const adjust = await request(t.url, 'POST', '/en/shop/points', { headers: apiHeaders(p.apiKey), json: { card_id: card, points: 500, reason: 'goodwill' } });
    assert.equal(adjust.status, 201, adjust.text);
    assert.deepEqual(await state(card), { tierId: null, value: 40, keepUntil: null, balance: 540 });
    await assertLedgerConsistent(t);
  });

  it('a tier with threshold 0 is the card’s from the start', async () => {
    const basic = await addTier(programme, 'Basic', 0);
    const card = await newCard();
    assert.equal((await state(card)).tierId, basic);
    assert.deepEqual(await history(card), [[null, basic, 'earned']]);
  });

  it('a new card with a threshold-0 tier and a welcome bonus is locked once: tier, bonus and value in the card it answers', async () => {
    await db().update(partnerCards).set({ initialBonusPoints: 40, tierBasis: 'points_earned' }).where(eq(partnerCards.id, programme));
    const basic = await addTier(programme, 'Basic', 0);
    const real = pointsRepository.lockCard;
    let locks = 0;
    pointsRepository.lockCard = (...args) => {
      if (args[3] !== false) locks++;
      return real.apply(pointsRepository, args);
    };
    let card: Awaited<ReturnType<typeof joinProgramme>> & { tier?: { id: number } | null };
    try {
      card = await joinProgramme(t, await createCustomer(t), programme);
    } finally {
      pointsRepository.lockCard = real;
    }
    assert.equal(locks, 1, 'row locks taken to issue the card');
    assert.equal(card.points_balance, 40);
    assert.equal(card.tier?.id, basic);
    assert.deepEqual(await state(card.id), { tierId: basic, value: 40, keepUntil: '2027-11-25T10:00:00.000Z', balance: 40 });
    assert.deepEqual(await history(card.id), [[null, basic, 'earned']]);
  });

  describe('windows', () => {
    it('lifetime: no keep_until, and the value never drops by time', async () => {
      await freshProgramme({ tierWindow: 'lifetime' });
      const card = await newCard();
      await buy(card, 120);
      assert.deepEqual(await state(card), { tierId: silver, value: 120, keepUntil: null, balance: 120 });
      setClock('2031-06-01T10:00:00Z');
      await ledger().sweepTiers();
      assert.deepEqual((await state(card)).tierId, silver);
      assert.equal((await state(card)).value, 120);
    });

    it('calendar_year: kept to the end of the next year in the programme’s zone; the new year counts from 0', async () => {
      await freshProgramme({ tierWindow: 'calendar_year' });
      const card = await newCard();
      await buy(card, 120);
      // 1 January 2028, 00:00 in Vilnius (UTC+2 in winter).
      assert.equal((await state(card)).keepUntil, '2027-12-31T22:00:00.000Z');
      setClock('2027-01-01T00:00:00Z'); // still 2027-01-01 02:00 in Vilnius: a new year there
      await ledger().sweepTiers();
      assert.deepEqual(await state(card), { tierId: silver, value: 0, keepUntil: '2027-12-31T22:00:00.000Z', balance: 120 });
      // Returning the 2026 purchase in 2027 changes nothing: it no longer counts, and the tier is kept from 2026.
      setClock('2027-03-01T10:00:00Z');
      const old = (await db().execute(sql`select id from points_transactions where card_id = ${card} and type = 'purchase'`)) as unknown as { rows: Array<{ id: number }> };
      assert.equal((await returnAmount(old.rows[0]!.id, 120)).status, 201);
      assert.deepEqual(await state(card), { tierId: silver, value: 0, keepUntil: '2027-12-31T22:00:00.000Z', balance: 0 });
      // Qualifying again in 2027 keeps it to the end of 2028.
      await buy(card, 100); // 100 + 50 at Silver's 1.5
      assert.equal((await state(card)).keepUntil, '2028-12-31T22:00:00.000Z');
      // The end of 2028: the 2029 value (0) gives no tier.
      setClock('2028-12-31T22:00:00Z');
      await ledger().sweepTiers();
      assert.deepEqual(await state(card), { tierId: null, value: 0, keepUntil: null, balance: 150 });
      assert.deepEqual((await history(card)).at(-1), [silver, null, 'window_ended']);
    });

    it('rolling_12_months: the value loses what is older than 12 months; the tier falls at keep_until to what the value gives', async () => {
      const card = await newCard();
      await buy(card, 320); // Gold on 2026-11-25
      setClock('2027-06-01T10:00:00Z');
      await buy(card, 150); // 150 + 150 at Gold's ×2: value 620, Gold kept again from now
      assert.equal((await state(card)).keepUntil, '2028-06-01T10:00:00.000Z');
      setClock('2027-11-25T10:00:01Z');
      await ledger().sweepTiers();
      assert.deepEqual(await state(card), { tierId: gold, value: 300, keepUntil: '2028-06-01T10:00:00.000Z', balance: 620 }, 'the first purchase left the window; Gold is kept');
      setClock('2028-06-01T10:00:00Z');
      await ledger().sweepTiers();
      const s = await state(card);
      assert.equal(s.value, 0);
      assert.equal(s.tierId, null);
      assert.deepEqual((await history(card)).at(-1), [gold, null, 'window_ended']);
    });

    it('a deduction reads the tiers only when tier work is due, and then the card falls as the sweep would have it', async () => {
      const card = await newCard();
      await buy(card, 320); // Gold on 2026-11-25, kept to 2027-11-25
      const real = pointsRepository.lockCard;
      const tiersSeen: number[] = [];
      pointsRepository.lockCard = async (...args) => {
        const locked = await real.apply(pointsRepository, args);
        if (locked) tiersSeen.push(locked.tiers.length);
        return locked;
      };
      try {
        assert.equal((await deduct(t, p, { card_id: card, shop_id: shop, points: 10 })).status, 201);
        assert.deepEqual(await state(card), { tierId: gold, value: 320, keepUntil: '2027-11-25T10:00:00.000Z', balance: 310 }, 'nothing due: Gold kept');
        setClock('2027-11-25T10:00:01Z');
        assert.equal((await deduct(t, p, { card_id: card, shop_id: shop, points: 10 })).status, 201);
      } finally {
        pointsRepository.lockCard = real;
      }
      assert.deepEqual(tiersSeen, [0, 2], 'tiers read by each deduction');
      const s = await state(card);
      assert.deepEqual([s.tierId, s.value, s.balance], [null, 0, 300], 'the purchase left the window: Gold ended');
      assert.deepEqual((await history(card)).at(-1), [gold, null, 'window_ended']);
    });

    it('calendar_year: at keep_until the card falls to the tier its value gives, or the year before reached', async () => {
      await freshProgramme({ tierWindow: 'calendar_year' });
      const card = await newCard();
      await buy(card, 320); // Gold in 2026, kept to the end of 2027
      setClock('2027-05-01T10:00:00Z');
      await buy(card, 70); // 70 + 70 at Gold's ×2: 2027 reaches Silver only, so Gold is not kept longer
      assert.equal((await state(card)).keepUntil, '2027-12-31T22:00:00.000Z');
      setClock('2027-12-31T22:00:00Z');
      await ledger().sweepTiers();
      const s = await state(card);
      assert.equal(s.tierId, silver, 'Silver, reached in 2027, is kept through 2028');
      assert.equal(s.value, 0);
      assert.equal(s.keepUntil, '2028-12-31T22:00:00.000Z');
      assert.deepEqual((await history(card)).at(-1), [gold, silver, 'window_ended']);
    });

    it('never: no fall by time, but a return still recomputes at once', async () => {
      await freshProgramme({ tierDowngrade: 'never' });
      const card = await newCard();
      const a = await buy(card, 320);
      setClock('2029-01-01T10:00:00Z');
      await ledger().sweepTiers();
      assert.equal((await state(card)).tierId, gold);
      assert.equal((await state(card)).value, 0);
      setClock('2026-12-01T10:00:00Z');
      // Back in the window of the purchase: a return drops the value and the tier with it.
      await freshProgramme({ tierDowngrade: 'never' });
      const card2 = await newCard();
      const b = await buy(card2, 320);
      assert.equal((await returnAmount(b.id, 100)).status, 201);
      assert.equal((await state(card2)).tierId, silver);
      assert.ok(a.id);
    });
  });

  it('campaigns with tier_ids apply only to cards of those tiers; preview tells the tier', async () => {
    const res = await request(t.url, 'POST', '/en/partners/campaigns', {
      headers: bearer(p.token),
      json: { partner_card_id: programme, name: 'Gold bonus', tier_ids: [gold], effect: { type: 'bonus', value: 7 } },
    });
    assert.equal(res.status, 201, res.text);
    const campaign = res.body.data.id as number;
    const card = await newCard();
    const first = await buy(card, 310); // reaches Gold in this award: earns at no tier
    assert.deepEqual(sources(first.breakdown), [['base', 310]]);
    const preview = await request(t.url, 'POST', '/en/shop/transactions/preview', {
      headers: apiHeaders(p.apiKey),
      json: { card_id: card, shop_id: shop, amount: 10 },
    });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(preview.body.data.tier, { id: gold, name: { en: 'Gold', lt: 'Gold' }, color: null });
    assert.deepEqual(
      preview.body.data.breakdown.map((r: { source: string; campaign_id: number | null; points: number }) => [r.source, r.campaign_id, r.points]),
      [
        ['base', null, 10],
        ['tier', null, 10],
        ['campaign', campaign, 7],
      ],
    );
    const second = await buy(card, 10);
    assert.equal(second.points, 27);
    const silverCard = await newCard();
    await buy(silverCard, 150);
    const p2 = await request(t.url, 'POST', '/en/shop/transactions/preview', {
      headers: apiHeaders(p.apiKey),
      json: { card_id: silverCard, shop_id: shop, amount: 10 },
    });
    assert.deepEqual(p2.body.data.campaigns_skipped, [{ campaign_id: campaign, name: 'Gold bonus', reason: 'tier' }]);
  });

  it('changed thresholds re-evaluate every card of the programme in the background, up or down, whatever the policy', async () => {
    await freshProgramme({ tierDowngrade: 'never' });
    const cards = [await newCard(), await newCard(), await newCard()];
    await buy(cards[0]!, 50);
    await buy(cards[1]!, 150);
    await buy(cards[2]!, 350);
    // Silver now from 40, Gold from 160: card 0 rises, card 1 stays, card 2 stays Gold.
    await db().update(tiers).set({ threshold: 40 }).where(eq(tiers.id, silver));
    await db().update(tiers).set({ threshold: 160 }).where(eq(tiers.id, gold));
    await tiersRepository.bumpVersion(db(), programme);
    while ((await ledger().reevaluateTiers(2)) > 0);
    assert.deepEqual(
      await Promise.all(cards.map(async (c) => (await state(c)).tierId)),
      [silver, silver, gold],
    );
    assert.deepEqual((await history(cards[0]!)).at(-1), [null, silver, 'tiers_changed']);
    // Gold deleted: its cards fall to what the rest give, though the policy is `never`.
    await db().delete(tiers).where(eq(tiers.id, gold));
    await tiersRepository.bumpVersion(db(), programme);
    while ((await ledger().reevaluateTiers(100)) > 0);
    assert.equal((await state(cards[2]!)).tierId, silver);
    assert.deepEqual((await history(cards[2]!)).at(-1), [null, silver, 'tiers_changed'], 'the deleted tier’s id is gone from the history');
    const [last] = await db().select({ fromName: cardTierHistory.fromName }).from(cardTierHistory).where(eq(cardTierHistory.cardId, cards[2]!)).orderBy(sql`id desc`).limit(1);
    assert.deepEqual(last!.fromName, { en: 'Gold', lt: 'Gold' }, 'but its name stays');
    const [pc] = await db().select({ v: partnerCards.tiersVersion, e: partnerCards.tiersEvaluatedVersion }).from(partnerCards).where(eq(partnerCards.id, programme));
    assert.equal(pc!.e, pc!.v, 'the programme is marked evaluated once no card is behind');
  });

  it('programmes without tiers still keep the value (the fast award path moves it too)', async () => {
    // A partner of its own: one seen running campaigns a moment ago skips the one-statement award.
    const q = await createPartner(t, 'No tiers');
    const qShop = await createShop(t, q.id);
    const buy = async (card: number, amount: number | string) =>
      assert.equal((await award(t, q, { card_id: card, shop_id: qShop, amount, receipt_number: `Q-${++receipt}` })).status, 201);
    const plain = await createProgramme(t, q.id, { pointsPerCurrency: '1', currencyAmount: '1', tierWindow: 'lifetime' });
    const card = (await joinProgramme(t, await createCustomer(t), plain)).id;
    await buy(card, 30);
    await buy(card, 12);
    assert.equal((await state(card)).value, 42);
    const amount = await createProgramme(t, q.id, { pointsPerCurrency: '1', currencyAmount: '1', tierBasis: 'amount_spent' });
    const card2 = (await joinProgramme(t, await createCustomer(t), amount)).id;
    await buy(card2, '30.25'); // the first award sets when the value leaves its window (the engine)
    await buy(card2, '12.5'); // then the one-statement award adds to it
    assert.equal((await state(card2)).value, 42.75);
    // A year on, both purchases have left the window: the sweep counts the value again (the
    // first award set when that is due; without it the value would stay 42.75 for ever).
    setClock('2027-11-25T10:00:00Z');
    await ledger().sweepTiers();
    assert.equal((await state(card2)).value, 0);
  });
});
