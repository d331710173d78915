// The two background tier jobs (DESIGN.md §13) side by side on two app nodes of one
// PostgreSQL database, on the same cards, while a third transaction holds one of them — a
// till's award in progress, or the other node mid-card. Each guard is proved on its own:
//   - the tier sweep's `tryLockCard` (points.repository.ts, FOR UPDATE SKIP LOCKED) and the
//     re-evaluation's `claimBehind` (tiers.repository.ts, FOR UPDATE SKIP LOCKED) pass over a
//     held card instead of queueing behind it: neither job is ever seen blocked by the
//     holder — PostgreSQL itself says who waits on whom (pg_blocking_pids), so no timing
//     decides the outcome, and without SKIP LOCKED the job blocks until the holder ends;
//   - `markEvaluated`'s "no card behind" condition keeps the programme due while the held card
//     is behind the tiers version, so it is re-evaluated once free;
//   - and together the jobs move every card exactly once (one history row), to the right tier.
// PostgreSQL only: PGlite runs one transaction at a time.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { eq, inArray } from 'drizzle-orm';
import pg from 'pg';
import { loyaltyCards } from '../src/modules/loyalty-cards/loyalty-cards.tables.js';
import { partnerCards } from '../src/modules/partner-cards/partner-cards.tables.js';
import { cardTierHistory, tiers } from '../src/modules/tiers/tiers.tables.js';
import { tiersRepository } from '../src/modules/tiers/tiers.repository.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { assertLedgerConsistent, award, createCustomer, createProgramme, createShop, joinProgramme, TestClock } from './helpers/loyalty.js';

describe('tier sweep and re-evaluation on two nodes, with a card held', () => {
  const clock = new TestClock(Date.parse('2026-11-25T10:00:00Z'));
  let a: TestApp;
  let b: TestApp;
  let p: PartnerFixture;
  let holder: pg.Client;
  let observer: pg.Client;
  let holderPid: number;

  before(async () => {
    // No background workers: the jobs run only when this test calls them.
    a = await startTestApp({ DATABASE_POOL_MAX: '10' }, undefined, { clock, workers: false });
    b = await startTestApp({ DATABASE_POOL_MAX: '10' }, a.db, { clock, workers: false });
    p = await createPartner(a);
    holder = new pg.Client({ connectionString: a.db.url });
    observer = new pg.Client({ connectionString: a.db.url });
    await holder.connect();
    await observer.connect();
    holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  });
  after(async () => {
    await holder?.end();
    await observer?.end();
    await b?.close();
    await a?.close();
  });

  /**
   * The jobs' results once they have all finished — or a failure the moment PostgreSQL shows a
   * connection blocked by the holder (a job queued behind the held card instead of skipping
   * it), naming the statement that waits. Polls until one of the two is true; nothing depends
   * on how long the jobs take.
   */
  async function withoutWaitingOnHolder<T extends unknown[]>(...jobs: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
    let settled: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    const all = Promise.all(jobs) as Promise<T>;
    all.then(
      (value) => (settled = { ok: true, value }),
      (error) => (settled = { ok: false, error }),
    );
    for (;;) {
      if (settled) {
        if (!settled.ok) throw settled.error;
        return settled.value;
      }
      const { rows } = await observer.query<{ query: string }>(
        'select query from pg_stat_activity where datname = current_database() and $1::int = any(pg_blocking_pids(pid))',
        [holderPid],
      );
      if (rows.length > 0) {
        // Let the jobs go on (and finish), then fail with what waited.
        await holder.query('rollback').catch(() => undefined);
        await all.catch(() => undefined);
        const statement = rows[0]!.query.replace(/\s+/g, ' ');
        const who = /tier_version/.test(statement) ? "the re-evaluation's claimBehind" : /for update/.test(statement) ? "the tier sweep's tryLockCard" : 'a statement';
        assert.fail(`${who} waited on the card another transaction holds instead of skipping it: ${statement}`);
      }
      await delay(5);
    }
  }

  it('skip the held card without waiting, leave the programme due, and move every card exactly once', async () => {
    const db = a.app.context.database.db;
    const shop = await createShop(a, p.id);
    const programme = await createProgramme(a, p.id, { pointsPerCurrency: '1', currencyAmount: '1' });
    await db.insert(tiers).values({ partnerId: p.id, partnerCardId: programme, name: { en: 'Silver', lt: 'Sidabras' }, threshold: 100 });
    const [gold] = await db.insert(tiers).values({ partnerId: p.id, partnerCardId: programme, name: { en: 'Gold', lt: 'Auksas' }, threshold: 300 }).returning();
    const cards: number[] = [];
    for (let i = 0; i < 8; i++) {
      const card = (await joinProgramme(a, await createCustomer(a), programme)).id;
      const res = await award(i % 2 === 0 ? a : b, p, { card_id: card, shop_id: shop, amount: 320, receipt_number: `SK-${i}` });
      assert.equal(res.status, 201, res.text);
      cards.push(card);
    }
    const history = async (card: number) => (await db.select().from(cardTierHistory).where(eq(cardTierHistory.cardId, card))).map((h) => [h.fromTierId, h.toTierId]);
    for (const card of cards) assert.deepEqual(await history(card), [[null, gold!.id]]);

    // A year on, every card is due for both jobs: its purchase left the rolling window and
    // Gold's keep_until has passed (the sweep), and Gold's threshold changed (the re-evaluation).
    clock.advanceMs(Date.parse('2027-11-25T10:00:01Z') - clock.now().getTime());
    await db.update(tiers).set({ threshold: 250 }).where(eq(tiers.id, gold!.id));
    await tiersRepository.bumpVersion(db, programme);
    const version = async () =>
      (await db.select({ v: partnerCards.tiersVersion, e: partnerCards.tiersEvaluatedVersion }).from(partnerCards).where(eq(partnerCards.id, programme)))[0]!;
    const { v } = await version();

    // The held card sits in the middle of the id order both jobs walk.
    const held = cards[3]!;
    await holder.query('begin');
    await holder.query('select id from loyalty_cards where id = $1 for update', [held]);

    const [swept, reevaluated] = await withoutWaitingOnHolder(
      a.app.context.services.ledger.sweepTiers(100),
      b.app.context.services.ledger.reevaluateTiers(100),
    );
    assert.ok(swept + reevaluated >= cards.length - 1, `${swept} swept + ${reevaluated} re-evaluated`);
    const rows = await db.select().from(loyaltyCards).where(inArray(loyaltyCards.id, cards));
    for (const row of rows) {
      if (row.id === held) {
        assert.equal(row.tierId, gold!.id, 'the held card is left as it was');
        assert.ok(row.tierVersion < v, 'the held card is still behind the tiers version');
        assert.deepEqual(await history(row.id), [[null, gold!.id]]);
      } else {
        assert.equal(row.tierId, null, `card ${row.id} fell from Gold`);
        assert.deepEqual(await history(row.id), [[null, gold!.id], [gold!.id, null]], `card ${row.id} moved once`);
      }
    }
    // A card is behind: the programme is not marked evaluated (markEvaluated's condition).
    assert.ok((await version()).e < v, 'the programme stays due while a card is behind');

    // The holder ends: the next runs take the card, once, and the programme is done.
    await holder.query('commit');
    await withoutWaitingOnHolder(b.app.context.services.ledger.sweepTiers(100), a.app.context.services.ledger.reevaluateTiers(100));
    while ((await a.app.context.services.ledger.reevaluateTiers(100)) > 0);
    const [after] = await db.select().from(loyaltyCards).where(eq(loyaltyCards.id, held));
    assert.equal(after!.tierId, null);
    assert.equal(after!.tierVersion, v);
    assert.deepEqual(await history(held), [[null, gold!.id], [gold!.id, null]]);
    assert.equal((await version()).e, v, 'marked evaluated once no card is behind');
    for (const card of cards) assert.equal((await history(card)).length, 2, `card ${card}: one move in all`);
    await assertLedgerConsistent(a);
  });
});
