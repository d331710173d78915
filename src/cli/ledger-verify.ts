// `loyalty ledger verify`: the ledger's invariants (points/ledger-verify.ts) and the engine's
// (awards/awards-verify.ts: campaign counters), composed here so that neither module imports
// the other's checks.
import type { Executor } from '../infra/db/index.js';
import { AWARD_CHECKS, type AwardCheck } from '../modules/awards/awards-verify.js';
import { ledgerChecks, runChecks, type LedgerCheck, type LedgerDifference } from '../modules/points/ledger-verify.js';

export type VerifyDifference = LedgerDifference<LedgerCheck | AwardCheck>;

/** Every balance recomputed from the ledger, and every campaign counter from its sources; each difference reported. */
export function verifyLedger(db: Executor, limitPerCheck = 100, now = new Date()): Promise<{ cards: number; transactions: number; differences: VerifyDifference[] }> {
  return runChecks<LedgerCheck | AwardCheck>(db, [...ledgerChecks(now), ...AWARD_CHECKS], limitPerCheck);
}
