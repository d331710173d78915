// The pure tier rules (DESIGN.md §13): zone midnights across offsets, windows, keep_until,
// and the state machine's edges the HTTP tests do not reach cheaply.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyChange, inWindow, keepUntilFor, leavesWindowAt, nextTier, reevaluate, tierForValue, tierPoints, UNITS, windowEnded, windowStart, zonedMidnight, type CardTierState, type TierDef, type TierSettings } from './tier-rules.js';

const tier = (id: number, threshold: number): TierDef => ({ id, threshold, name: { en: `T${id}`, lt: `T${id}` }, color: null, multiplierHundredths: 100n });
const tiers = [tier(1, 0), tier(2, 100), tier(3, 300)];
const s = (over: Partial<TierSettings> = {}): TierSettings => ({ basis: 'points_earned', window: 'rolling_12_months', downgrade: 'end_of_window', timeZone: 'Europe/Vilnius', ...over });
const none: CardTierState = { tierId: null, valueUnits: 0n, valueUntil: null, reachedAt: null, keepUntil: null };
const d = (iso: string) => new Date(iso);
const u = (n: number) => BigInt(n) * UNITS;

describe('tier rules', () => {
  it('zone midnights: winter and summer offsets, and zones west of UTC', () => {
    assert.equal(zonedMidnight(2027, 1, 1, 'Europe/Vilnius').toISOString(), '2026-12-31T22:00:00.000Z');
    assert.equal(zonedMidnight(2027, 7, 1, 'Europe/Vilnius').toISOString(), '2027-06-30T21:00:00.000Z');
    assert.equal(zonedMidnight(2027, 1, 1, 'America/New_York').toISOString(), '2027-01-01T05:00:00.000Z');
    assert.equal(zonedMidnight(2027, 1, 1, 'UTC').toISOString(), '2027-01-01T00:00:00.000Z');
  });

  it('windows: calendar years begin at the zone’s midnight; rolling windows exclude the instant a year back', () => {
    const cal = s({ window: 'calendar_year' });
    assert.equal(windowStart(cal, d('2026-12-31T22:30:00Z'))!.toISOString(), '2026-12-31T22:00:00.000Z', 'already 2027 in Vilnius');
    assert.equal(inWindow(cal, d('2026-12-31T21:59:59Z'), d('2027-03-01T00:00:00Z')), false);
    assert.equal(leavesWindowAt(cal, d('2026-05-01T00:00:00Z'))!.toISOString(), '2026-12-31T22:00:00.000Z');
    const roll = s();
    assert.equal(inWindow(roll, d('2026-03-01T10:00:00Z'), d('2027-03-01T09:59:59Z')), true);
    assert.equal(inWindow(roll, d('2026-03-01T10:00:00Z'), d('2027-03-01T10:00:00Z')), false);
    assert.equal(windowStart(s({ window: 'lifetime' }), d('2027-01-01T00:00:00Z')), null);
    assert.equal(keepUntilFor(s({ window: 'lifetime' }), d('2027-01-01T00:00:00Z')), null);
    assert.equal(keepUntilFor(cal, d('2026-06-01T00:00:00Z'))!.toISOString(), '2027-12-31T22:00:00.000Z');
  });

  it('the tier for a value, and the next one with what remains (4 decimals for amounts)', () => {
    assert.equal(tierForValue(tiers, u(99) + 9999n)?.id, 1);
    assert.equal(tierForValue(tiers, u(100))?.id, 2);
    assert.equal(tierForValue([tier(5, 10)], u(9)), undefined);
    assert.deepEqual(nextTier(tiers, u(99) + 5000n), { tier: tiers[1], remainingUnits: 5000n });
    assert.equal(nextTier(tiers, u(300)), null);
  });

  it('an upgrade jumps to the highest tier reached; an entry outside the window changes nothing', () => {
    const now = d('2026-11-25T10:00:00Z');
    const up = applyChange(tiers, s(), { ...none, tierId: 1 }, u(350), now, now);
    assert.deepEqual(up.move, { from: 1, to: 3, reason: 'earned' });
    assert.equal(up.state.keepUntil!.toISOString(), '2027-11-25T10:00:00.000Z');
    assert.equal(up.state.valueUntil!.toISOString(), '2027-11-25T10:00:00.000Z');
    const old = applyChange(tiers, s(), up.state, u(-300), d('2025-01-01T00:00:00Z'), now);
    assert.equal(old.state, up.state, 'a return of a purchase out of the window');
  });

  it('a drop keeps a tier reached in an earlier window until keep_until (calendar_year), and not otherwise', () => {
    const cal = s({ window: 'calendar_year' });
    const held: CardTierState = { tierId: 3, valueUnits: u(320), valueUntil: null, reachedAt: d('2026-11-25T10:00:00Z'), keepUntil: d('2027-12-31T22:00:00Z') };
    const thisYear = d('2027-02-01T00:00:00Z');
    assert.equal(applyChange(tiers, cal, { ...held, valueUnits: u(50) }, u(-20), thisYear, thisYear).move, null);
    const sameYear = applyChange(tiers, cal, { ...held, reachedAt: d('2027-01-15T00:00:00Z') }, u(-250), thisYear, thisYear);
    assert.deepEqual(sameYear.move, { from: 3, to: 1, reason: 'returned' });
  });

  it('window end: never does not fall; end_of_window falls to the value’s tier or the year before’s', () => {
    const ended: CardTierState = { tierId: 3, valueUnits: u(0), valueUntil: null, reachedAt: d('2026-01-01T00:00:00Z'), keepUntil: d('2027-01-01T00:00:00Z') };
    const at = d('2027-01-02T00:00:00Z');
    assert.equal(windowEnded(tiers, s({ downgrade: 'never' }), ended, at).move, null);
    assert.deepEqual(windowEnded(tiers, s(), ended, at).move, { from: 3, to: 1, reason: 'window_ended' });
    const cal = windowEnded(tiers, s({ window: 'calendar_year' }), ended, at, u(150));
    assert.deepEqual(cal.move, { from: 3, to: 2, reason: 'window_ended' });
    assert.equal(cal.state.keepUntil!.toISOString(), '2027-12-31T22:00:00.000Z');
  });

  it('re-evaluation moves down whatever the policy; the multiplier rounds once', () => {
    const gold: CardTierState = { tierId: 3, valueUnits: u(120), valueUntil: null, reachedAt: d('2026-01-01T00:00:00Z'), keepUntil: d('2030-01-01T00:00:00Z') };
    assert.deepEqual(reevaluate(tiers, s({ downgrade: 'never' }), gold, d('2026-06-01T00:00:00Z')).move, { from: 3, to: 2, reason: 'tiers_changed' });
    assert.equal(tierPoints(11n, 150n, false), 5n);
    assert.equal(tierPoints(11n, 150n, true), 6n);
    assert.equal(tierPoints(11n, 100n, true), 0n);
  });
});
