// Both error shapes of the API become the one Failure the forms show field by field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureOf } from './client.js';

const response = (status: number) => new Response(null, { status });

describe('failureOf', () => {
  it('reads Shape A: field → messages', () => {
    const f = failureOf(response(422), { code: 422, message: 'Validation failed', errors: { 'title.lt': ['Required'], lat: ['Must be at most 90'] } }, 'x');
    assert.deepEqual(f, { status: 422, code: 422, message: 'Validation failed', fields: { 'title.lt': ['Required'], lat: ['Must be at most 90'] } });
  });
  it('reads Shape B: a list of {field, message, code}, several per field', () => {
    const f = failureOf(
      response(409),
      {
        code: 'COMMISSION_LOCKED',
        message: 'Month locked',
        errors: [
          { field: 'valid_from', message: '2026-01 is locked', code: 'COMMISSION_LOCKED' },
          { field: 'valid_from', message: 'and 2026-02', code: 'COMMISSION_LOCKED' },
        ],
      },
      'x',
    );
    assert.deepEqual(f, { status: 409, code: 'COMMISSION_LOCKED', message: 'Month locked', fields: { valid_from: ['2026-01 is locked', 'and 2026-02'] } });
  });
  it('falls back to the given message for a body that is no envelope', () => {
    assert.deepEqual(failureOf(response(502), undefined, 'The request failed.'), { status: 502, code: undefined, message: 'The request failed.', fields: {} });
  });
});
