// One interface for every carrier: the built-in simulator and SMPP 3.4.
import type { Tx } from '../../../infra/db/index.js';
import type { SmsEncoding } from '../sms-text.js';

export interface CarrierSubmission {
  messageId: string;
  source: string;
  /** E.164 with '+'. */
  destination: string;
  text: string;
  encoding: SmsEncoding;
  /** The segments of `text` as laid out by sms-text.ts `layout()`; one carrier part each. */
  segments: string[];
  validityAt: Date | null;
}

export interface SubmittedPart {
  partNo: number;
  /** The carrier's id of this part, as it will appear in delivery receipts. */
  carrierMessageId: string;
}

export type SubmitResult =
  | { ok: true; parts: SubmittedPart[] }
  /**
   * permanent: the carrier refused the message (it fails); otherwise retry later — unless
   * inDoubt: the carrier may already hold (part of) it, so it must not be submitted again.
   */
  | { ok: false; permanent: boolean; error: string; inDoubt?: boolean };

export interface CarrierReceipt {
  carrierMessageId: string;
  state: 'delivered' | 'failed' | 'expired';
  error?: string;
}

export type ReceiptSink = (receipt: CarrierReceipt, tx?: Tx) => Promise<void>;

export interface Carrier {
  readonly name: 'simulator' | 'smpp';
  /**
   * True when `submit` writes only inside the given transaction (the simulator): the hand-over
   * commits or rolls back with the message's own status change, so it happens exactly once.
   * False for a remote carrier, where a crash between hand-over and commit leaves the message
   * in doubt (see sms_messages.submitting_at).
   */
  readonly transactional: boolean;
  /**
   * Connect, and report every delivery receipt through `onReceipt`, which records it durably
   * (in `tx` when given). Acknowledge a receipt to the network only after it resolves.
   */
  start(onReceipt: ReceiptSink): Promise<void>;
  submit(message: CarrierSubmission, tx: Tx): Promise<SubmitResult>;
  close(): Promise<void>;
}
