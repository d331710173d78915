// The `err` serializer keeps an error's kind and place and drops the values it carried
// (the real failed query, through the app's logger, is in test/log-secrets.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorLogSerializer } from './log-errors.js';

const PATH = '/en/shop/auth/qr-login/poll/FemRxZutalHwfcCJVRew_w';

describe('errorLogSerializer', () => {
  it("a Fastify error that names the raw URL is logged by its code", () => {
    const err = Object.assign(new Error(`Reply was already sent, did you forget to "return reply" in "${PATH}" (POST)?`), { code: 'FST_ERR_REP_ALREADY_SENT', statusCode: 500 });
    const out = errorLogSerializer(err);
    assert.equal(out.message, 'FST_ERR_REP_ALREADY_SENT');
    assert.equal(out.code, 'FST_ERR_REP_ALREADY_SENT');
    assert.equal(out.statusCode, 500);
    assert.ok(!JSON.stringify(out).includes('FemRxZutalHwfcCJVRew_w'));
    assert.match(out.stack, /^Error: FST_ERR_REP_ALREADY_SENT\n {4}at /);
  });

  it('a database error keeps its code and constraint, not the quoted value nor its detail', () => {
    const pg = Object.assign(new Error('duplicate key value violates unique constraint "customers_phone_key"'), {
      code: '23505',
      severity: 'ERROR',
      constraint: 'customers_phone_key',
      table: 'customers',
      detail: 'Key (phone)=(+37061234567) already exists.',
    });
    const failed = Object.assign(new Error('Failed query: insert into customers (phone) values ($1)\nparams: +37061234567'), {
      query: 'insert into customers (phone) values ($1)',
      params: ['+37061234567'],
      cause: pg,
    });
    const out = errorLogSerializer(failed);
    const text = JSON.stringify(out);
    assert.ok(!text.includes('37061234567'), text);
    assert.equal(out.message, 'Failed query: insert into customers (phone) values ($1)');
    const cause = out.cause as { type: string; message: string; code: string; constraint: string; table: string };
    assert.deepEqual([cause.type, cause.message, cause.code, cause.constraint, cause.table], [
      'DatabaseError',
      'duplicate key value violates unique constraint "…"',
      '23505',
      'customers_phone_key',
      'customers',
    ]);
  });

  it('other errors keep their message; plain objects pass as they are; a non-error cause is named by its type', () => {
    assert.equal(errorLogSerializer(new TypeError('boom')).message, 'boom');
    assert.equal(errorLogSerializer(new TypeError('boom')).type, 'TypeError');
    const plain = { message: 'redis down', code: 'ECONNREFUSED' };
    assert.equal(errorLogSerializer(plain as unknown as Error), plain);
    const withCause = new Error('outer', { cause: '+37061234567' });
    assert.deepEqual(errorLogSerializer(withCause).cause, { type: 'string' });
  });
});
