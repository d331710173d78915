import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addDays, addMonths, daysBetween, monthDays, monthOf, utcDay } from './calendar.js';

describe('calendar', () => {
  it('works in UTC days', () => {
    assert.equal(utcDay(new Date('2024-03-31T23:59:59.999Z')), '2024-03-31');
    assert.equal(addDays('2024-02-28', 1), '2024-02-29');
    assert.equal(addDays('2024-03-01', -1), '2024-02-29');
    assert.equal(addDays('2023-12-31', 1), '2024-01-01');
    assert.equal(daysBetween('2024-01-01', '2024-12-31'), 365);
    assert.equal(daysBetween('2024-03-05', '2024-03-01'), -4);
  });

  it('works in months', () => {
    assert.equal(monthOf(new Date('2024-01-31T23:00:00Z')), '2024-01');
    assert.equal(addMonths('2024-01', -1), '2023-12');
    assert.equal(addMonths('2023-12', 1), '2024-01');
    assert.equal(addMonths('2024-05', 14), '2025-07');
    assert.deepEqual(monthDays('2024-02'), { first: '2024-02-01', next: '2024-03-01' });
    assert.deepEqual(monthDays('2024-12'), { first: '2024-12-01', next: '2025-01-01' });
  });
});
