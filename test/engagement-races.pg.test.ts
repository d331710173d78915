// Races only PostgreSQL can show (PGlite runs one transaction at a time): a claim held open
// at an exact point — after its points left the card, before its coupon exists, through the
// claim's test seam (OffersService.hooks.afterDebit) — while another request runs. Like
// Saleor's race injection, these decide the interleaving instead of hoping for it:
//   - the last unit: B claims and commits while A is held; A then finds the offer sold out
//     (the conditional UPDATE of claims_count, not the earlier read, decides);
//   - one customer's claims: B waits on the card's row lock until A commits, then counts
//     A's coupon and is refused (the lock, not luck, serialises them).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { request } from './helpers/http.js';
import { assertLedgerConsistent, balanceOf, createCustomer, createProgramme, joinProgramme } from './helpers/loyalty.js';
import { claim, createOffer } from './helpers/engagement.js';

/** A promise and its resolver. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('claim races on PostgreSQL', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let programme: number;

  const db = () => t.app.context.database.db;
  const count = async (query: ReturnType<typeof sql>) => Number(((await db().execute(query)) as unknown as { rows: Array<{ n: number }> }).rows[0]!.n);
  const member = async () => {
    const c = await createCustomer(t);
    const card = await joinProgramme(t, c, programme);
    await request(t.url, 'POST', '/en/shop/points', { headers: { 'x-api-key': p.apiKey.key, 'x-api-secret': p.apiKey.secret }, json: { card_id: card.id, points: 100, reason: 'test' } });
    return { c, card };
  };
  /** Resolves once another backend of this database waits on a row lock. */
  const someoneWaitsOnALock = async () => {
    for (;;) {
      const n = await count(sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
      if (n > 0) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  before(async () => {
    t = await startTestApp({ DATABASE_POOL_MAX: '10' });
    assert.equal(t.app.context.database.kind, 'postgres');
    p = await createPartner(t);
    programme = await createProgramme(t, p.id);
  });
  after(() => {
    delete t.app.context.services.offers.hooks.afterDebit;
    return t.close();
  });

  it('the last unit: a claim held after its debit loses to one that committed meanwhile, and gets its points back', async () => {
    const offer = await createOffer(t, p, { max_claims: 1, points_cost: 20, partner_card_id: programme });
    const a = await member();
    const b = await member();
    const held = gate();
    const reachedA = gate();
    let calls = 0;
    t.app.context.services.offers.hooks.afterDebit = async () => {
      if (++calls === 1) {
        reachedA.open();
        await held.opened;
      }
    };
    const claimA = claim(t, a.c, offer.id);
    await reachedA.opened;
    // A has read claims_count = 0 and taken its points; B now claims and commits.
    const resB = await claim(t, b.c, offer.id);
    assert.equal(resB.status, 201, resB.text);
    held.open();
    const resA = await claimA;
    assert.equal(resA.status, 409, resA.text);
    assert.deepEqual(resA.body.errors[0].meta, { reason: 'sold_out' });
    assert.equal(await count(sql`select count(*)::int as n from coupons where offer_id = ${offer.id}`), 1);
    assert.equal(await balanceOf(t, p, a.card.id), 100, "A's debit was rolled back with the claim");
    assert.equal(await balanceOf(t, p, b.card.id), 80);
    await assertLedgerConsistent(t);
  });

  it("one customer's second claim waits for the first on the card's lock, then counts it", async () => {
    const offer = await createOffer(t, p, { max_claims_per_customer: 1, points_cost: 10, partner_card_id: programme });
    const { c, card } = await member();
    const held = gate();
    const reachedFirst = gate();
    let calls = 0;
    t.app.context.services.offers.hooks.afterDebit = async () => {
      if (++calls === 1) {
        reachedFirst.open();
        await held.opened;
      }
    };
    const first = claim(t, c, offer.id);
    await reachedFirst.opened;
    const second = claim(t, c, offer.id);
    // Either the second claim queues behind the first's card lock (as it must), or — were the
    // lock missing — it completes on its own while the first is still held.
    const outcome = await Promise.race([someoneWaitsOnALock().then(() => 'waiting' as const), second.then(() => 'finished' as const)]);
    held.open();
    const [r1, r2] = await Promise.all([first, second]);
    assert.equal(outcome, 'waiting', `the second claim did not wait: ${r2.status} ${r2.text}`);
    assert.equal(r1.status, 201, r1.text);
    assert.equal(r2.status, 409, r2.text);
    assert.deepEqual(r2.body.errors[0].meta, { reason: 'claim_limit', limit: 1 });
    assert.equal(await balanceOf(t, p, card.id), 90);
  });
});

describe('setting a limit on PostgreSQL', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let programme: number;

  before(async () => {
    t = await startTestApp({ DATABASE_POOL_MAX: '10' });
    p = await createPartner(t);
    programme = await createProgramme(t, p.id);
  });
  after(() => {
    delete t.app.context.services.offers.hooks.afterDebit;
    return t.close();
  });

  it('a limit set while an unlimited offer is being claimed waits for the claim and counts it', async () => {
    const offer = await createOffer(t, p, { max_claims_per_customer: 5 });
    const members = [];
    for (let i = 0; i < 2; i++) {
      const c = await createCustomer(t);
      await joinProgramme(t, c, programme);
      members.push(c);
    }
    const held = gate();
    const reached = gate();
    let calls = 0;
    t.app.context.services.offers.hooks.afterDebit = async () => {
      if (++calls === 1) {
        reached.open();
        await held.opened;
      }
    };
    const inFlight = claim(t, members[0]!, offer.id);
    await reached.opened;
    const limit = request(t.url, 'PUT', `/en/partners/offers/${offer.id}`, { headers: { authorization: `Bearer ${p.token}` }, json: { max_claims: 1 } });
    const outcome = await Promise.race([
      (async () => {
        for (;;) {
          const n = Number(
            ((await t.app.context.database.db.execute(
              sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
            )) as unknown as { rows: Array<{ n: number }> }).rows[0]!.n,
          );
          if (n > 0) return 'waiting' as const;
          await new Promise((r) => setTimeout(r, 10));
        }
      })(),
      limit.then(() => 'finished' as const),
    ]);
    held.open();
    const [claimed, limited] = await Promise.all([inFlight, limit]);
    assert.equal(outcome, 'waiting', 'the limit waited for the claim in flight');
    assert.equal(claimed.status, 201, claimed.text);
    assert.equal(limited.status, 200, limited.text);
    assert.equal(limited.body.data.claims_count, 1, 'the claim in flight is counted');
    const next = await claim(t, members[1]!, offer.id);
    assert.equal(next.status, 409, next.text);
    assert.deepEqual(next.body.errors[0].meta, { reason: 'sold_out' });
  });
});
