// 64-bit campaign counters (DESIGN.md §12 "Counters that only grow … are 64-bit"; issue 30
// item 3): a campaign past 2^31 points keeps answering — the award, its GET and list, the
// preview and `ledger verify` — with exact figures. On the store the suite runs on (PGlite
// embedded, PostgreSQL with DATABASE_URL).
//
// Reaching 2^31 through the API takes 215 awards of the largest bonus, so the history is
// planted instead: the first award's campaign source rows and the campaign's counters (the
// card's shard for an unlimited campaign, the row for a limited one) are both raised by the
// same 2,140,000,000 — a ledger that verifies clean, as if the campaign had given that much
// before — and the next real award takes both campaigns past 2^31.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { CAMPAIGN_COUNTER_SHARDS } from '../src/modules/campaigns/campaigns.tables.js';
import { verifyLedger } from '../src/cli/ledger-verify.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { award, createCustomer, createProgramme, createShop, joinProgramme } from './helpers/loyalty.js';

const PLANTED = 2_140_000_000;
const TWO_31 = 2 ** 31;

describe('campaign counters past 2^31', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let shop: number;

  before(async () => {
    t = await startTestApp();
    p = await createPartner(t);
    shop = await createShop(t, p.id);
  });
  after(() => t.close());

  const db = () => t.app.context.database.db;
  async function campaign(programme: number, body: Record<string, unknown>) {
    const res = await request(t.url, 'POST', '/en/partners/campaigns', { headers: bearer(p.token), json: { partner_card_id: programme, name: 'C', ...body } });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: number };
  }
  const getCampaign = (id: number) => request(t.url, 'GET', `/en/partners/campaigns/${id}`, { headers: bearer(p.token) });
  const campaignPoints = (breakdown: Array<{ campaign_id: number | null; points: number }>, id: number) =>
    breakdown.filter((r) => r.campaign_id === id).reduce((s, r) => s + r.points, 0);

  it('an unlimited and a limited bonus campaign past 2^31 points: award, GET, list, preview and verify answer with exact figures', async () => {
    const programme = await createProgramme(t, p.id, { pointsPerCurrency: '1', currencyAmount: '1' });
    // Both move the card's counter shard; the limited one takes its uses from its limit shards.
    const unlimited = await campaign(programme, { name: 'Unlimited', effect: { type: 'bonus', value: 5_000_000 } });
    const limited = await campaign(programme, { name: 'Limited', effect: { type: 'bonus', value: 4_000_000 }, limits: { uses: 1000 } });
    const card = (await joinProgramme(t, await createCustomer(t), programme)).id;

    const first = await award(t, p, { card_id: card, shop_id: shop, amount: 1 });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body.data.points, 9_000_001);

    // The planted history (see the header): sources and counters raised alike.
    const tx = first.body.data.id as number;
    await db().execute(sql`update points_transaction_sources set points = points + ${PLANTED} where transaction_id = ${tx} and source = 'campaign'`);
    await db().execute(sql`update campaign_counters set points = points + ${PLANTED} where campaign_id = ${unlimited.id} and shard = ${card % CAMPAIGN_COUNTER_SHARDS}`);
    await db().execute(sql`update campaigns set points_awarded = points_awarded + ${PLANTED} where id = ${limited.id}`);
    const before = [PLANTED + 5_000_000, PLANTED + 4_000_000];
    assert.ok(before.every((v) => v < TWO_31));

    // The next award takes both past 2^31 (the shard and the row pass it themselves).
    const second = await award(t, p, { card_id: card, shop_id: shop, amount: 1 });
    assert.equal(second.status, 201, second.text);
    assert.equal(campaignPoints(second.body.data.breakdown, unlimited.id), 5_000_000);
    assert.equal(campaignPoints(second.body.data.breakdown, limited.id), 4_000_000);
    const expected = new Map([
      [unlimited.id, PLANTED + 10_000_000],
      [limited.id, PLANTED + 8_000_000],
    ]);
    for (const v of expected.values()) assert.ok(v > TWO_31);

    for (const [id, points] of expected) {
      const res = await getCampaign(id);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual([res.body.data.points_awarded, res.body.data.uses_count, res.body.data.status], [points, 2, 'running']);
    }
    const list = await request(t.url, 'GET', `/en/partners/campaigns?partner_card_id=${programme}&status=running`, { headers: bearer(p.token) });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.data.map((c: { id: number; points_awarded: number }) => [c.id, c.points_awarded]),
      [...expected].map(([id, points]) => [id, points]),
    );

    const preview = await request(t.url, 'POST', '/en/shop/transactions/preview', { headers: apiHeaders(p.apiKey), json: { card_id: card, shop_id: shop, amount: 1 } });
    assert.equal(preview.status, 200, preview.text);
    assert.equal(preview.body.data.points, 9_000_001);
    assert.deepEqual(preview.body.data.campaigns_skipped, []);

    // A third award still applies both (the limited one has 998 uses left) and counts exactly.
    const third = await award(t, p, { card_id: card, shop_id: shop, amount: 1 });
    assert.equal(third.status, 201, third.text);
    assert.equal(third.body.data.points, 9_000_001);
    assert.equal((await getCampaign(unlimited.id)).body.data.points_awarded, PLANTED + 15_000_000);
    assert.equal((await getCampaign(limited.id)).body.data.points_awarded, PLANTED + 12_000_000);

    // `ledger verify` sums past 2^31 on both sides and finds nothing…
    assert.deepEqual((await verifyLedger(db(), 100)).differences, []);
    // …and reports a counter moved past 2^31 with its exact figures.
    await db().execute(sql`update campaigns set points_awarded = points_awarded + 1 where id = ${limited.id}`);
    assert.deepEqual((await verifyLedger(db(), 100)).differences, [
      { check: 'campaign_points', campaign_id: limited.id, expected: PLANTED + 12_000_000, actual: PLANTED + 12_000_001 },
    ]);
    await db().execute(sql`update campaigns set points_awarded = points_awarded - 1 where id = ${limited.id}`);
    // Its limit shards hold the 997 uses left; shards that promise more than the limit leaves are reported.
    await db().execute(sql`update campaign_limit_shards set uses_left = uses_left + 5 where campaign_id = ${limited.id} and shard = 0`);
    assert.deepEqual((await verifyLedger(db(), 100)).differences, [{ check: 'campaign_uses_left', campaign_id: limited.id, expected: 997, actual: 1002 }]);
    await db().execute(sql`update campaign_limit_shards set uses_left = uses_left - 5 where campaign_id = ${limited.id} and shard = 0`);
    assert.deepEqual((await verifyLedger(db(), 100)).differences, []);
  });
});
