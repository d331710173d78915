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

/** What became of one part handed to a remote carrier (the values of sms_handovers.outcome). */
export type PartOutcome =
  | { outcome: 'accepted'; carrierMessageId: string }
  /** The carrier answered with an error: nothing of this part is there. */
  | { outcome: 'refused'; permanent: boolean; error: string }
  /** The part was never written to the carrier (session lost before it, closing). */
  | { outcome: 'not_sent'; error: string }
  /** Written, and no answer came back: the carrier may hold it. */
  | { outcome: 'unknown'; error: string };

/** One part of a message, ready for the wire (opaque to the dispatcher). */
export interface PreparedPart {
  partNo: number;
  pdu: Record<string, unknown>;
}

export type PreparedMessage = { ok: true; parts: PreparedPart[] } | { ok: false; error: string };

export interface CarrierReceipt {
  carrierMessageId: string;
  state: 'delivered' | 'failed' | 'expired';
  error?: string;
  /** The handset the receipt names, when it names one (see smpp-carrier.ts `receiptHandset`). */
  destination?: string;
}

/** Records one receipt, or several at once (in one statement). */
export type ReceiptSink = (receipts: CarrierReceipt | readonly CarrierReceipt[], tx?: Tx) => Promise<void>;

interface CarrierBase {
  readonly name: 'simulator' | 'smpp';
  /**
   * Connect, and report every delivery receipt through `onReceipt`, which records it durably
   * (in `tx` when given). Acknowledge a receipt to the network only after it resolves.
   */
  start(onReceipt: ReceiptSink): Promise<void>;
  close(): Promise<void>;
}

/**
 * A carrier whose `submit` writes only inside the given transaction (the simulator): the
 * hand-over commits or rolls back with the message's own status change, so it happens exactly
 * once.
 */
export interface TransactionalCarrier extends CarrierBase {
  readonly transactional: true;
  /** Hands over a batch; one result per message, in order. */
  submit(messages: readonly CarrierSubmission[], tx: Tx): Promise<SubmitResult[]>;
}

/**
 * A carrier across the network (SMPP), fed part by part: the dispatcher asks how many parts
 * may leave now (`room`), records their hand-over, and only then writes them (`writePart`).
 * A crash between that record and the carrier's answer leaves the part in doubt
 * (sms_handovers, dispatcher.ts).
 */
export interface RemoteCarrier extends CarrierBase {
  readonly transactional: false;
  /** The parts of a message as they will be written, or why it cannot be sent at all (permanent). */
  prepare(message: CarrierSubmission): PreparedMessage;
  /**
   * How many parts may be handed over now and will be written at once: 0 unless a session is
   * bound; never more than the free window; only parts whose throughput slot has come (none
   * recorded ahead of it, so a crash leaves in doubt only parts actually written).
   */
  room(): number;
  /** Writes one part (or reports why not); never rejects. */
  writePart(part: PreparedPart): Promise<PartOutcome>;
  /** `listener` runs whenever `room()` may have grown. */
  onRoom(listener: () => void): void;
}

export type Carrier = TransactionalCarrier | RemoteCarrier;
