// The programme's arithmetic (DESIGN.md §6), exact: amounts and rates are decimals with 4
// places, carried as bigint ten-thousandths (src/shared/money.ts), never binary floats.
// (The award from a purchase is computed in SQL, in the statement that writes it:
// awards/award-statement.ts.)
//
//   value  = points / points_per_currency_redemption × currency_amount_redemption (EUR,
//            rounded down to 4 places: a redemption is never worth more than its points)
import { parseAmount } from '../../shared/money.js';

const SCALE = 10_000n;

export interface RedemptionRules {
  pointsRedemptionEnabled: boolean;
  pointsPerCurrencyRedemption: string;
  currencyAmountRedemption: string;
  minPointsForRedemption: number;
  maxPointsPerRedemption: number | null;
}

const units = (decimal: string): bigint => {
  const v = parseAmount(decimal);
  if (v === undefined || v <= 0n) throw new Error(`programme rate is not a positive decimal: ${decimal}`);
  return v;
};

/** EUR value (ten-thousandths) of redeeming `points`. */
export function redemptionValue(points: number, rules: RedemptionRules): bigint {
  return (BigInt(points) * units(rules.currencyAmountRedemption) * SCALE) / units(rules.pointsPerCurrencyRedemption);
}

/** Points per euro spent and euros per point redeemed, as integrators display them. */
export function displayRates(
  rules: Pick<RedemptionRules, 'pointsPerCurrencyRedemption' | 'currencyAmountRedemption'> & { pointsPerCurrency: string; currencyAmount: string },
): { points_per_euro: number; euro_per_point: number } {
  const perEuro = Number(rules.pointsPerCurrency) / Number(rules.currencyAmount);
  const euroPerPoint = Number(rules.currencyAmountRedemption) / Number(rules.pointsPerCurrencyRedemption);
  return { points_per_euro: Number(perEuro.toFixed(4)), euro_per_point: Number(euroPerPoint.toFixed(4)) };
}
