// Billing (DESIGN.md §4, issue 3 "Done when"): a send charges parts × price atomically with
// queuing; when the balance is short the send is 422 QUOTA_EXCEEDED (Shape B, meta {balance,
// required}) and nothing is charged; under concurrency the balance never goes negative and
// the charges sum exactly to parts × price of the accepted messages. An expired message is
// refunded exactly once. Runs in both modes (PGlite, and PostgreSQL with DATABASE_URL).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, type AdminFixture } from './helpers/fixtures.js';
import type { Response } from './helpers/http.js';
import {
  account,
  createSmsPartner,
  LT_FAILS,
  LT_OK,
  LT_SILENT,
  messages,
  messageTotal,
  send,
  sendBody,
  topUp,
  UUID,
  waitForStatus,
} from './helpers/sms.js';

const units = (eur: number) => Math.round(eur * 10_000);
const LT = 290;
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

let t: TestApp;
let admin: AdminFixture;

before(async () => {
  t = await startTestApp({ SMS_SIMULATOR_DELAY_MS: '200', SMS_DISPATCH_POLL_MS: '50' });
  admin = await createAdmin(t);
});
after(() => t.close());

function assertQuotaExceeded(res: Response) {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, 'QUOTA_EXCEEDED');
  assert.match(res.body.request_id, UUID);
  assert.ok(Array.isArray(res.body.errors), 'Shape B');
  assert.equal(res.body.errors.length, 1);
  const [e] = res.body.errors;
  assert.equal(e.code, 'QUOTA_EXCEEDED');
  assert.equal(typeof e.field, 'string');
  assert.equal(typeof e.message, 'string');
  assert.deepEqual(Object.keys(e.meta).sort(), ['balance', 'required']);
  assert.equal(typeof e.meta.balance, 'number');
  assert.equal(typeof e.meta.required, 'number');
  assert.ok(e.meta.balance < e.meta.required, res.text);
  assert.ok(e.meta.balance >= 0, res.text);
  return e.meta as { balance: number; required: number };
}

async function ledgerSum(partnerId: number): Promise<number> {
  const r = (await t.app.context.database.db.execute(
    sql`select coalesce(sum(amount), 0)::text as total from sms_account_ledger where partner_id = ${partnerId}`,
  )) as unknown as { rows: Array<{ total: string }> };
  return units(Number(r.rows[0]!.total));
}

/** Every ledger line's balance_after is the one before it plus its amount (sends charged together included). */
async function assertLedgerChain(partnerId: number): Promise<void> {
  const r = (await t.app.context.database.db.execute(
    sql`select amount::text as amount, balance_after::text as after from sms_account_ledger where partner_id = ${partnerId} order by id`,
  )) as unknown as { rows: Array<{ amount: string; after: string }> };
  let balance = 0;
  for (const [i, line] of r.rows.entries()) {
    balance += units(Number(line.amount));
    assert.equal(units(Number(line.after)), balance, `ledger line ${i}: ${JSON.stringify(r.rows)}`);
  }
}

describe('SMS billing', () => {
  it('50 concurrent sends against a balance for 10: exactly 10 accepted, the rest QUOTA_EXCEEDED, balance 0', async () => {
    const partner = await createSmsPartner(t, admin, { balance: '0.29' });
    assert.equal((await account(t, partner)).balance, 0.29);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => send(t, partner, sendBody({ message: `Message ${i}` }))));

    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    assert.equal(ok.length, 10, results.map((r) => r.status).join(','));
    for (const r of ok) assert.deepEqual(r.body.data.cost, { amount: 0.029, currency: 'EUR', parts_charged: 1 });
    assert.equal(new Set(ok.map((r) => r.body.data.message_id)).size, 10);
    for (const r of refused) {
      const meta = assertQuotaExceeded(r);
      assert.deepEqual(meta, { balance: 0, required: 0.029 });
    }
    const after = await account(t, partner);
    assert.equal(after.balance, 0);
    assert.equal(ok.length * LT, units(0.29) - units(after.balance), 'accepted × price = balance spent');
    assert.equal(await messageTotal(t, partner), 10);
    // The history holds exactly the accepted messages, each charged what its answer said.
    const listed = (await messages(t, partner, '?per_page=100')).body.data as Array<{ message_id: string; cost: { amount: number } }>;
    assert.deepEqual(listed.map((m) => m.message_id).sort(), ok.map((r) => r.body.data.message_id).sort());
    for (const m of listed) assert.equal(units(m.cost.amount), LT);
    assert.equal(await ledgerSum(partner.id), 0, 'the ledger agrees with the balance');
    await assertLedgerChain(partner.id);
  });

  it('concurrent sends the balance covers: every one accepted, each ledger line one charge after the other', async () => {
    const partner = await createSmsPartner(t, admin, { balance: '10' });
    const sizes = [1, 150, 300, 450];
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => send(t, partner, sendBody({ message: 'y'.repeat(sizes[i % 4]!) }))));
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set([200]), results.map((r) => r.text).join('\n'));
    const charged = results.reduce((n, r) => n + units(r.body.data.cost.amount), 0);
    assert.equal(units(10) - units((await account(t, partner)).balance), charged);
    assert.equal(await messageTotal(t, partner), 40);
    await assertLedgerChain(partner.id);
  });

  it('concurrent sends of different sizes: the charges sum exactly to parts × price of those accepted', async () => {
    const partner = await createSmsPartner(t, admin, { balance: '1' });
    // 1, 2, 3 and 4 parts at 0.029 each; together far more than 1 EUR.
    const sizes = [1, 150, 300, 450, 160, 161, 306, 307, 459, 460];
    const bodies = Array.from({ length: 50 }, (_, i) => sendBody({ message: 'x'.repeat(sizes[i % sizes.length]!) }));
    const results = await Promise.all(bodies.map((b) => send(t, partner, b)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    assert.ok(ok.length > 0 && refused.length > 0, `${ok.length} accepted`);

    let charged = 0;
    for (const r of ok) {
      const { parts, cost } = r.body.data;
      assert.equal(units(cost.amount), parts * LT, r.text);
      assert.equal(cost.parts_charged, parts);
      charged += units(cost.amount);
    }
    for (const r of refused) {
      const meta = assertQuotaExceeded(r);
      assert.equal(units(meta.required) % LT, 0);
    }
    const after = await account(t, partner);
    assert.ok(after.balance >= 0);
    assert.equal(units(1) - units(after.balance), charged, 'balance spent = sum of parts × price');
    assert.ok(units(after.balance) < 4 * LT, 'refusals happened only once the balance could not pay for some message');
    assert.equal(await messageTotal(t, partner), ok.length);
    const listed = (await messages(t, partner, '?per_page=100')).body.data as Array<{ message_id: string; cost: { amount: number } }>;
    assert.deepEqual(listed.map((m) => m.message_id).sort(), ok.map((r) => r.body.data.message_id).sort());
    assert.equal(
      listed.reduce((n, m) => n + units(m.cost.amount), 0),
      charged,
    );
    assert.equal(await ledgerSum(partner.id), units(after.balance));
    await assertLedgerChain(partner.id);
  });

  it('refuses a message the balance cannot pay for at all, naming balance and required; nothing changes', async () => {
    const partner = await createSmsPartner(t, admin, { balance: '0.05' });
    const res = await send(t, partner, sendBody({ message: 'y'.repeat(200) }));
    assert.deepEqual(assertQuotaExceeded(res), { balance: 0.05, required: 0.058 });
    const lt = await send(t, partner, sendBody({ message: 'y'.repeat(200) }), { locale: 'lt' });
    assert.equal(lt.body.code, 'QUOTA_EXCEEDED');
    assert.notEqual(lt.body.errors[0].message, res.body.errors[0].message);
    assert.equal((await account(t, partner)).balance, 0.05);
    assert.equal(await messageTotal(t, partner), 0);
    // The exact amount left is enough.
    assert.equal((await send(t, partner, sendBody({ message: 'one part' }))).status, 200);
    assert.equal((await topUp(t, admin, partner.id, '0.0080')).status, 200);
    assert.equal((await account(t, partner)).balance, 0.029);
    assert.equal((await send(t, partner, sendBody({ message: 'last one' }))).status, 200);
    assert.equal((await account(t, partner)).balance, 0);
    assertQuotaExceeded(await send(t, partner, sendBody({ message: 'no more' })));
  });

  it('a partner with no SMS balance is refused with QUOTA_EXCEEDED', async () => {
    const partner = await createSmsPartner(t, admin, { balance: null });
    const meta = assertQuotaExceeded(await send(t, partner, sendBody()));
    assert.deepEqual(meta, { balance: 0, required: 0.029 });
    assert.equal(await messageTotal(t, partner), 0);
  });

  it('refunds expired messages exactly once; delivered and failed ones stay charged', async () => {
    const partner = await createSmsPartner(t, admin, { balance: '1' });
    const validity = inMs(2500);
    const expiring = await Promise.all(
      [1, 2, 3].map((i) => send(t, partner, sendBody({ destination: LT_SILENT, validity, message: 'z'.repeat(i * 100) }))),
    );
    const delivered = await Promise.all([1, 2].map((i) => send(t, partner, sendBody({ destination: LT_OK, message: 'd'.repeat(i * 100) }))));
    const failed = await send(t, partner, sendBody({ destination: LT_FAILS, message: 'f'.repeat(200) }));
    for (const r of [...expiring, ...delivered, failed]) assert.equal(r.status, 200, r.text);
    const cost = (r: Response) => units(r.body.data.cost.amount);
    const all = [...expiring, ...delivered, failed].reduce((n, r) => n + cost(r), 0);
    const kept = [...delivered, failed].reduce((n, r) => n + cost(r), 0);
    assert.equal(units((await account(t, partner)).balance), units(1) - all);

    for (const r of expiring) await waitForStatus(t, partner.apiKey, r.body.data.message_id, 'expired', 6000);
    for (const r of delivered) await waitForStatus(t, partner.apiKey, r.body.data.message_id, 'delivered', 6000);
    await waitForStatus(t, partner.apiKey, failed.body.data.message_id, 'failed', 6000);
    assert.equal(units((await account(t, partner)).balance), units(1) - kept);

    // More dispatcher passes (every sweep included) change nothing.
    await t.app.context.workers.smsDispatcher.tick();
    await t.app.context.workers.smsDispatcher.tick();
    assert.equal(units((await account(t, partner)).balance), units(1) - kept);
    const refunds = (await t.app.context.database.db.execute(
      sql`select message_id, count(*)::int as n from sms_account_ledger where partner_id = ${partner.id} and kind = 'refund' group by message_id`,
    )) as unknown as { rows: Array<{ message_id: string; n: number }> };
    assert.deepEqual(
      refunds.rows.map((r) => [r.message_id, Number(r.n)]).sort(),
      expiring.map((r) => [r.body.data.message_id, 1]).sort(),
    );
    assert.equal(await ledgerSum(partner.id), units(1) - kept);
  });
});
