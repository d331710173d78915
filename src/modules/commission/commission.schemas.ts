// TypeBox schemas of the commission responses: their OpenAPI document and the service's view types.
import { Type } from 'typebox';
import { PERIOD_PATTERN } from '../../shared/calendar.js';
import { DateTime } from '../../shared/schemas.js';

export const Period = Type.String({ pattern: PERIOD_PATTERN, description: 'A calendar month (UTC), YYYY-MM (1970..2999)', 'x-message': 'commission.period_format' });

const Money = (description: string) => Type.Number({ description: `${description}; EUR, at most 4 decimals` });

const nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const RateVersion = Type.Object({
  id: Type.Integer(),
  rate_percent: Type.Number({ description: 'Percent of the purchase amount' }),
  valid_from: Type.String({ format: 'date', description: 'First UTC day the version is in force' }),
  created_at: DateTime,
});

export const Rates = Type.Object({
  current: Type.Union([Type.Object({ rate_percent: Type.Number(), valid_from: Type.String({ format: 'date' }) }), Type.Null()], {
    description: 'The version in force today; null before any version starts',
  }),
  history: Type.Array(RateVersion, { description: 'Every version ever added, the latest-starting first (append-only)' }),
});

export const PeriodFigures = Type.Object({
  period: Period,
  status: Type.Union([Type.Literal('open'), Type.Literal('locked')]),
  purchase_amount: Money('Σ purchase amounts created in the month'),
  reversed_amount: Money('Σ amounts of purchases reversed in the month (whenever the purchase was)'),
  returned_amount: Money("Σ amounts of purchases' goods returned in the month (whenever the purchase was)"),
  base_amount: Money('purchase_amount − reversed_amount − returned_amount'),
  commission_amount: Money("Σ amount × rate: a purchase at the rate in force on its day, a reversal or return at its purchase's; rounded half away from zero"),
  purchases_count: Type.Integer(),
  reversals_count: Type.Integer(),
  returns_count: Type.Integer({ description: "Returns of purchases' goods made in the month" }),
  stored: Type.Boolean({ description: 'true: as stored by the last force-sync or lock; false: computed for this answer only' }),
  computed_at: nullable(DateTime),
  locked_at: nullable(DateTime),
});

export const LockStatus = Type.Object({
  locked_periods: Type.Array(Period, { description: 'Locked months, oldest first' }),
  periods: Type.Array(
    Type.Object({ period: Period, locked_at: nullable(DateTime), base_amount: Type.Number(), commission_amount: Type.Number() }),
    { description: 'The figures frozen at lock time, per locked month' },
  ),
});
