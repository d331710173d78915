// The SMPP 3.4 carrier (issue 3 item 6, reference/sms.md §3), on the npm `smpp` package.
//
// One transceiver session: bind_transceiver, enquire_link every `enquireLinkMs` (a missing
// answer drops the session), and on any close or error a reconnect with exponential backoff
// (1 s doubling to 30 s, ±20 % jitter) and a fresh bind.
//
// Submitting: one submit_sm per segment of sms-text.ts `layout()`, with registered_delivery 1
// and an explicit data_coding — 0x00 (GSM 03.38 default alphabet, one septet per octet) or
// 0x08 (UCS-2) — and the bytes encoded here, so the package never picks an encoding itself
// (it would choose LATIN1 0x03 for some texts). Multi-part messages carry a concatenation
// UDH (05 00 03 ref total seq, the ref derived from the message id) and esm_class 0x40. At
// most `windowSize` submit_sm are unanswered at once, and they leave at most
// `throughputPerSecond` a second, evenly spaced. The dispatcher feeds it part by part: `room()`
// says whether a part's send slot has come, the dispatcher records its hand-over, then
// `writePart()` writes it at once and reports what became of it (dispatcher.ts). A
// submit_sm_resp that does not come within `pduTimeoutMs` drops the session and nothing more is
// written until a new bind is answered: a hung SMSC gets at most the window.
//
// Receipts: every deliver_sm (and data_sm) is answered. A delivery receipt (esm_class & 0x04,
// or a receipted_message_id TLV) is parsed defensively: the TLVs receipted_message_id and
// message_state first, else the short_message text "id:… stat:… err:…" — read from the octets
// as received, as ASCII whatever the data_coding, and cut at "text:" before anything parses or
// logs it (`redactReceipt`). Final states (ACCEPTD included) go to
// `onReceipt` with the id exactly as the receipt spells it; the receipt is acknowledged
// (ESME_ROK) only once `onReceipt` has resolved, and answered with ESME_RX_T_APPN (so the
// SMSC delivers it again later) when it fails or hangs. Receipts are correlated by id, not by
// session: a receipt for a part submitted in an earlier session or process is handled the
// same way.
//
// Receipt ids: the carrier's submit_sm_resp ids are stored as given. Some SMSCs write the
// same id in decimal in the receipt text while submit_sm_resp had it in hex (jsmpp #56), or
// the other way round. That is a property of the carrier, so it is a setting
// (SMPP_RECEIPT_ID_FORMAT, `receiptLookupIds`): the dispatcher looks a receipt up under that
// one spelling only — never under several, as "272" and hex "110" are two messages' ids.
// A receipt's source_addr (the handset) is passed on: a part to another number never matches.
import { createHash } from 'node:crypto';
import smpp from 'smpp';
import type { Tx } from '../../../infra/db/index.js';
import { isGsm7 } from '../sms-text.js';
import type {
  CarrierReceipt,
  CarrierSubmission,
  PartOutcome,
  PreparedMessage,
  PreparedPart,
  ReceiptSink,
  RemoteCarrier,
  SubmitResult,
  SubmittedPart,
} from './carrier.js';

export interface SmppLog {
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error?(obj: object, msg?: string): void;
}

export interface SmppCarrierOptions {
  /** smpp://system_id:password@host:port (ssmpp:// for TLS); port defaults to 2775 (3550). */
  url: string;
  systemType?: string;
  /** Period of enquire_link on a bound session (default 30000). */
  enquireLinkMs?: number;
  /** Most submit_sm sent and not yet answered (default 10). */
  windowSize?: number;
  /** Most submit_sm sent per second, evenly spaced (default 50). */
  throughputPerSecond?: number;
  /** How long to wait for any response PDU, and for connect + bind (default 10000). */
  pduTimeoutMs?: number;
  /** Reconnect backoff: first delay, doubled after each failed attempt up to the max (1000 / 30000). */
  reconnect?: { initialMs?: number; maxMs?: number };
  log?: SmppLog;
}

type Pdu = smpp.PDU;
type Session = smpp.Session;

const ESME_ROK = 0x00;
const ESME_RINVBNDSTS = 0x04;
const ESME_RMSGQFUL = 0x14;
const ESME_RTHROTTLED = 0x58;
const ESME_RX_T_APPN = 0x64;
/** Statuses after which the same submit_sm can be tried again later. */
const TRANSIENT_STATUSES = new Set([ESME_RINVBNDSTS, ESME_RMSGQFUL, ESME_RTHROTTLED, ESME_RX_T_APPN]);

const DATA_CODING_GSM = 0x00;
const DATA_CODING_UCS2 = 0x08;
const ESM_CLASS_UDHI = 0x40;
const ESM_CLASS_RECEIPT = 0x04;

const statusNames = new Map<number, string>();
for (const [name, code] of Object.entries(smpp.errors)) if (!statusNames.has(code)) statusNames.set(code, name);

/** "SMPP error 0x0000000B (ESME_RINVDSTADR)". */
export function smppStatusText(status: number): string {
  const hex = status.toString(16).toUpperCase().padStart(8, '0');
  return `SMPP error 0x${hex} (${statusNames.get(status) ?? 'unknown status'})`;
}

export interface SmppEndpoint {
  host: string;
  port: number;
  tls: boolean;
  systemId: string;
  password: string;
}

/** Parses smpp://system_id:password@host:port (or ssmpp:// for TLS); throws on anything else. */
export function parseSmppUrl(url: string): SmppEndpoint {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error('SMPP URL is not a URL');
  }
  if (u.protocol !== 'smpp:' && u.protocol !== 'ssmpp:') throw new Error('SMPP URL must start with smpp:// or ssmpp://');
  if (!u.hostname) throw new Error('SMPP URL has no host');
  if (!u.username || !u.password) throw new Error('SMPP URL must carry system_id and password (smpp://id:password@host:port)');
  const tls = u.protocol === 'ssmpp:';
  return {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: u.port ? Number(u.port) : tls ? 3550 : 2775,
    tls,
    systemId: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  };
}

/** SMPP absolute time "YYMMDDhhmmsstnnp", in UTC (nn = 00, p = '+'). */
export function smppAbsoluteTime(d: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    two(d.getUTCFullYear() % 100) +
    two(d.getUTCMonth() + 1) +
    two(d.getUTCDate()) +
    two(d.getUTCHours()) +
    two(d.getUTCMinutes()) +
    two(d.getUTCSeconds()) +
    String(Math.floor(d.getUTCMilliseconds() / 100)) +
    '00+'
  );
}

/** The submit_sm parameters of each part of a message, or why it cannot be sent at all. */
export function buildSubmitSm(
  message: CarrierSubmission,
  options: { ref: number; now?: Date },
): { ok: true; pdus: Array<Record<string, unknown>> } | { ok: false; error: string } {
  const segments = message.segments;
  if (segments.length === 0) return { ok: false, error: 'message has no parts' };
  if (segments.length > 255) return { ok: false, error: `message has ${segments.length} parts; at most 255 can be concatenated` };

  const source = message.source.trim();
  let sourceTon: number;
  let sourceNpi: number;
  let sourceAddr: string;
  if (/[A-Za-z]/.test(source)) {
    if (!/^[\x20-\x7e]+$/.test(source)) return { ok: false, error: `source "${source}" has characters SMPP cannot carry` };
    [sourceTon, sourceNpi, sourceAddr] = [5, 0, source]; // alphanumeric
  } else {
    sourceAddr = source.replace(/[\s+]/g, '');
    if (!/^\d{1,20}$/.test(sourceAddr)) return { ok: false, error: `source "${source}" is neither alphanumeric nor a number` };
    [sourceTon, sourceNpi] = [1, 1]; // international, E.164
  }
  const destination = message.destination.replace(/^\+/, '');
  if (!/^\d{1,20}$/.test(destination)) return { ok: false, error: `destination "${message.destination}" is not an E.164 number` };

  let validityPeriod = '';
  if (message.validityAt) {
    if (message.validityAt.getTime() <= (options.now ?? new Date()).getTime()) {
      return { ok: false, error: 'validity period has already passed' };
    }
    validityPeriod = smppAbsoluteTime(message.validityAt);
  }

  const multi = segments.length > 1;
  const gsm = message.encoding === 'GSM-7';
  const maxOctets = gsm ? (multi ? 153 : 160) : multi ? 134 : 140;
  const pdus: Array<Record<string, unknown>> = [];
  for (const [i, segment] of segments.entries()) {
    if (gsm && !isGsm7(segment)) return { ok: false, error: `part ${i + 1} is not GSM-7 text` };
    // GSM: one septet per octet (SMPP data_coding 0 is unpacked); an extension character is ESC + char.
    const body = gsm ? smpp.gsmCoder.encode(segment, 0x00) : Buffer.from(segment, 'utf16le').swap16();
    if (body.length > maxOctets) return { ok: false, error: `part ${i + 1} does not fit in one SMS` };
    const udh = multi ? Buffer.from([0x05, 0x00, 0x03, options.ref & 0xff, segments.length, i + 1]) : undefined;
    pdus.push({
      service_type: '',
      source_addr_ton: sourceTon,
      source_addr_npi: sourceNpi,
      source_addr: sourceAddr,
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      destination_addr: destination,
      esm_class: multi ? ESM_CLASS_UDHI : 0x00,
      protocol_id: 0,
      priority_flag: 0,
      schedule_delivery_time: '',
      validity_period: validityPeriod,
      registered_delivery: 1,
      replace_if_present_flag: 0,
      // Always explicit, and short_message is a Buffer: the package must not choose an encoding.
      data_coding: gsm ? DATA_CODING_GSM : DATA_CODING_UCS2,
      sm_default_msg_id: 0,
      short_message: udh ? Buffer.concat([udh, body]) : body,
    });
  }
  return { ok: true, pdus };
}

// ---------------------------------------------------------------------------------------
// Receipts

/** How a carrier writes a part's id in its receipts, relative to its submit_sm_resp (SMPP_RECEIPT_ID_FORMAT). */
export type ReceiptIdFormat = 'same' | 'hex' | 'decimal';

/**
 * The ids a part's submit_sm_resp may have given, for a receipt that writes `id`, under the
 * carrier's `format`: `same` — the id as given, only; `decimal` — the receipt writes in decimal
 * (zero-padded or not) what submit_sm_resp gave in hex: its hex spellings (either letter case,
 * 8 digits or unpadded); `hex` — the other way round: its decimal value. Never the id as given
 * under another format, nor a guess: "272" may be one message's id and hex "110" another's.
 * Empty when `id` cannot be written in that format.
 */
export function receiptLookupIds(id: string, format: ReceiptIdFormat): string[] {
  const given = id.trim();
  if (!given) return [];
  if (format === 'same') return [given];
  const out = new Set<string>();
  if (format === 'decimal') {
    if (!/^\d{1,30}$/.test(given)) return [];
    const hex = BigInt(given).toString(16);
    for (const h of [hex.toLowerCase(), hex.toUpperCase()]) {
      out.add(h);
      if (h.length < 8) out.add(h.padStart(8, '0'));
    }
    return [...out];
  }
  if (!/^[0-9a-f]{1,24}$/i.test(given)) return [];
  const decimal = BigInt(`0x${given}`).toString(10);
  out.add(decimal);
  if (decimal.length < 10) out.add(decimal.padStart(10, '0'));
  return [...out];
}

/**
 * The handset a receipt names (its source_addr, SMPP 3.4 App. B): `+` and digits when the
 * SMSC gave an international number, else its digits as written (national or unknown form);
 * undefined when it gave none that reads as a phone number.
 */
export function receiptHandset(addr: unknown, ton: unknown): string | undefined {
  const s = typeof addr === 'string' ? addr.trim() : Buffer.isBuffer(addr) ? addr.toString('latin1').trim() : '';
  const m = /^(\+?)(\d{6,15})$/.exec(s);
  if (!m) return undefined;
  return m[1] === '+' || ton === 1 ? `+${m[2]}` : m[2];
}

export interface ReceiptTextFields {
  id?: string;
  sub?: string;
  dlvrd?: string;
  submitDate?: string;
  doneDate?: string;
  stat?: string;
  err?: string;
  text?: string;
}

/**
 * Reads `id:… sub:… dlvrd:… submit date:… done date:… stat:… err:… text:…` (SMPP 3.4 App. B)
 * field by field, in any order, each optional; dates may have 10 or 12 digits. Never throws.
 */
export function parseReceiptText(text: string): ReceiptTextFields {
  const out: ReceiptTextFields = {};
  // Everything after "text:" is the start of the original message and may look like fields.
  const textAt = text.search(/(?:^|\s)text:/i);
  const head = textAt >= 0 ? text.slice(0, textAt) : text;
  if (textAt >= 0) out.text = text.slice(textAt).replace(/^\s*text:/i, '');
  const field = (name: string, value = '([^\\s]+)') => new RegExp(`(?:^|\\s)${name}:\\s*${value}`, 'i').exec(head)?.[1];
  out.id = field('id');
  out.sub = field('sub');
  out.dlvrd = field('dlvrd');
  out.submitDate = field('submit[ _]date', '(\\d{12}|\\d{10})(?!\\d)');
  out.doneDate = field('done[ _]date', '(\\d{12}|\\d{10})(?!\\d)');
  out.stat = field('stat');
  out.err = field('err');
  for (const key of Object.keys(out) as Array<keyof ReceiptTextFields>) if (out[key] === undefined) delete out[key];
  return out;
}

/** message_state TLV values (SMPP 3.4 §5.3.2.35, SKIPPED from 5.0) as receipt "stat" words. */
const MESSAGE_STATES = ['SCHEDULED', 'ENROUTE', 'DELIVRD', 'EXPIRED', 'DELETED', 'UNDELIV', 'ACCEPTD', 'UNKNOWN', 'REJECTD', 'SKIPPED'];

const STAT_ALIASES: Record<string, string> = {
  DELIVRD: 'DELIVRD',
  DELIVERED: 'DELIVRD',
  EXPIRED: 'EXPIRED',
  DELETED: 'DELETED',
  UNDELIV: 'UNDELIV',
  UNDELIVERABLE: 'UNDELIV',
  UNDELIVERED: 'UNDELIV',
  ACCEPTD: 'ACCEPTD',
  ACCEPTED: 'ACCEPTD',
  UNKNOWN: 'UNKNOWN',
  REJECTD: 'REJECTD',
  REJECTED: 'REJECTD',
  ENROUTE: 'ENROUTE',
  SCHEDULED: 'SCHEDULED',
  SKIPPED: 'SKIPPED',
};

const FINAL_STATES: Record<string, CarrierReceipt['state']> = {
  DELIVRD: 'delivered',
  // Final (SMPP 3.4 §5.2.28): read or accepted on the subscriber's behalf (DESIGN.md §4).
  ACCEPTD: 'delivered',
  EXPIRED: 'expired',
  UNDELIV: 'failed',
  REJECTD: 'failed',
  DELETED: 'failed',
  UNKNOWN: 'failed',
  SKIPPED: 'failed',
};

export type DeliverSmParse =
  | { kind: 'final'; receipt: CarrierReceipt }
  /** ENROUTE, SCHEDULED: the message is not final yet. */
  | { kind: 'interim'; carrierMessageId: string; stat: string }
  /** A mobile-originated message, not a receipt. */
  | { kind: 'not-a-receipt' }
  /** `receipt`: the receipt's head, redacted (never the text: field), or undefined when it is not printable text. */
  | { kind: 'unparseable'; reason: string; receipt?: string };

/** A printable id: the leading run of visible ASCII (a TLV without its NUL reads on into garbage). */
function cleanId(value: unknown): string | undefined {
  const s = Buffer.isBuffer(value) ? value.toString('latin1') : typeof value === 'string' ? value : undefined;
  const id = s === undefined ? undefined : /^\s*([\x21-\x7e]{1,65})/.exec(s)?.[1];
  return id || undefined;
}

/** The user data of a deliver_sm / data_sm exactly as received, before the package decoded it. */
export interface RawUserData {
  shortMessage?: Buffer;
  messagePayload?: Buffer;
}

/**
 * The text of a decoded short_message, back to the octets it came from where that is exact
 * (only when the raw PDU was not kept: unit tests hand decoded PDUs in).
 */
function messageOctets(value: unknown, dataCoding: number): Buffer | undefined {
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'string') {
    // Decoded as UCS-2 by the package: the octets are the UTF-16BE code units.
    if ((dataCoding & 0x0f) === DATA_CODING_UCS2 && /[\u0100-\uffff]/.test(value)) return Buffer.from(value, 'utf16le').swap16();
    return Buffer.from(value, 'latin1');
  }
  if (value && typeof value === 'object' && 'message' in value) return messageOctets((value as { message: unknown }).message, dataCoding);
  return undefined;
}

/**
 * A receipt as text: its octets read one to a character (the receipt format is ASCII whatever
 * the data_coding says — an SMSC may copy 0x08 from the submit), cut at "text:" (the start of
 * the customer's message, often a one-time code) and with anything unprintable blanked. This
 * is the only form in which a receipt is parsed or logged.
 */
export function redactReceipt(octets: Buffer): string {
  const latin1 = octets.toString('latin1');
  const textAt = latin1.search(/(?:^|\s)text:/i);
  const head = textAt >= 0 ? latin1.slice(0, textAt) : latin1;
  return head.replace(/[^\x20-\x7e]/g, ' ');
}

/**
 * Classifies a deliver_sm or data_sm. Prefers the TLVs receipted_message_id and message_state
 * over the text; the text is read from `raw` (the octets as received) when given. Never throws.
 */
export function parseDeliverSm(pdu: Record<string, unknown>, raw?: RawUserData): DeliverSmParse {
  let head = '';
  try {
    const esmClass = typeof pdu.esm_class === 'number' ? pdu.esm_class : 0;
    const dataCoding = typeof pdu.data_coding === 'number' ? pdu.data_coding : 0;
    const hasTlvId = pdu.receipted_message_id !== undefined && pdu.receipted_message_id !== null;
    if ((esmClass & ESM_CLASS_RECEIPT) === 0 && !hasTlvId) return { kind: 'not-a-receipt' };

    let octets = raw ? raw.shortMessage : messageOctets(pdu.short_message, dataCoding);
    if (!octets || octets.length === 0) octets = raw ? raw.messagePayload : messageOctets(pdu.message_payload, dataCoding);
    head = octets ? redactReceipt(octets) : '';
    const fields = parseReceiptText(head);
    const id = cleanId(pdu.receipted_message_id) ?? cleanId(fields.id);
    if (!id) return unparseable('no message id', head);

    const tlvState = typeof pdu.message_state === 'number' ? MESSAGE_STATES[pdu.message_state] : undefined;
    const textStat = fields.stat === undefined ? undefined : STAT_ALIASES[fields.stat.toUpperCase()];
    const stat = tlvState ?? textStat;
    if (!stat) return unparseable(`no recognisable state (stat ${JSON.stringify(fields.stat ?? null)})`, head);

    const state = FINAL_STATES[stat];
    if (!state) return { kind: 'interim', carrierMessageId: id, stat };
    const receipt: CarrierReceipt = { carrierMessageId: id, state };
    const handset = receiptHandset(pdu.source_addr, pdu.source_addr_ton);
    if (handset) receipt.destination = handset;
    if (state === 'failed') {
      const details: string[] = [];
      if (fields.err !== undefined && /^[0-9A-Za-z]{1,10}$/.test(fields.err)) details.push(`err ${fields.err}`);
      const network = pdu.network_error_code;
      if (Buffer.isBuffer(network) && network.length >= 3) {
        details.push(`network error type ${network.readUInt8(0)} code ${network.readUInt16BE(1)}`);
      }
      receipt.error = details.length > 0 ? `${stat} (${details.join(', ')})` : stat;
    }
    return { kind: 'final', receipt };
  } catch (err) {
    return unparseable(String(err), head);
  }
}

/** Only a head that reads as a receipt is kept for the log; anything else is not shown at all. */
function unparseable(reason: string, head: string): DeliverSmParse {
  const shown = /\b(?:id|stat):/i.test(head) ? head.trim().slice(0, 200) : undefined;
  return shown ? { kind: 'unparseable', reason, receipt: shown } : { kind: 'unparseable', reason };
}

/** Reads a C-octet string at `at`; returns the offset after its NUL. */
function skipCString(body: Buffer, at: number): number {
  const end = body.indexOf(0, at);
  if (end < 0) throw new Error('C-octet string without its NUL');
  return end + 1;
}

/**
 * The short_message and message_payload octets of a deliver_sm / data_sm body (the PDU after
 * its command_length), read by the SMPP 3.4 layout (§4.6.1, §4.7.1). Undefined when the body
 * does not have that shape.
 */
export function rawUserData(body: Buffer): RawUserData | undefined {
  try {
    const commandId = body.readUInt32BE(0);
    let at = 12;
    at = skipCString(body, at); // service_type
    at += 2;
    at = skipCString(body, at); // source_addr
    at += 2;
    at = skipCString(body, at); // destination_addr
    const out: RawUserData = {};
    if (commandId === 0x00000005) {
      at += 3; // esm_class, protocol_id, priority_flag
      at = skipCString(body, at); // schedule_delivery_time
      at = skipCString(body, at); // validity_period
      at += 4; // registered_delivery, replace_if_present_flag, data_coding, sm_default_msg_id
      const length = body.readUInt8(at);
      at += 1;
      if (at + length > body.length) return undefined;
      out.shortMessage = body.subarray(at, at + length);
      at += length;
    } else if (commandId === 0x00000103) {
      at += 3; // esm_class, registered_delivery, data_coding
    } else {
      return undefined;
    }
    while (at + 4 <= body.length) {
      const tag = body.readUInt16BE(at);
      const length = body.readUInt16BE(at + 2);
      at += 4;
      if (tag === 0x0424) out.messagePayload = body.subarray(at, Math.min(body.length, at + length));
      at += length;
    }
    return out;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------
// The carrier

interface PartJob {
  params: Record<string, unknown>;
  settled: boolean;
  resolve(outcome: PartOutcome): void;
  /** Set while the part is on the wire: fails it at once (connection lost). */
  abort?: (error: string) => void;
}

const noopLog: SmppLog = { info: () => {}, warn: () => {} };

/**
 * The concatenation reference of a message's parts: derived from its id, so parts written in
 * another session or by another process after a restart join the ones already delivered.
 */
export function concatenationRef(messageId: string): number {
  return createHash('sha256').update(messageId).digest()[0]!;
}

export class SmppCarrier implements RemoteCarrier {
  readonly name = 'smpp' as const;
  readonly transactional = false;

  private readonly endpoint: SmppEndpoint;
  private readonly systemType: string;
  private readonly enquireLinkMs: number;
  private readonly windowSize: number;
  private readonly sendIntervalMs: number;
  private readonly pduTimeoutMs: number;
  private readonly backoffInitialMs: number;
  private readonly backoffMaxMs: number;
  private readonly log: SmppLog;

  private onReceipt: ReceiptSink | undefined;
  private session: Session | undefined;
  /** Bumped on every new connection and every disconnect: callbacks of older sessions are ignored. */
  private generation = 0;
  private bound = false;
  /** A submit_sm_resp did not come in time: nothing more is written until a new session binds. */
  private hung = false;
  private stopped = true;
  private failedAttempts = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private enquireTimer: NodeJS.Timeout | undefined;
  private pumpTimer: NodeJS.Timeout | undefined;
  private firstAttemptDone: (() => void) | undefined;
  private roomListener: (() => void) | undefined;
  private roomTimer: NodeJS.Timeout | undefined;
  private roomTimerAt = 0;

  private readonly queue: PartJob[] = [];
  private readonly inFlight = new Set<PartJob>();
  private nextSendAt = 0;

  constructor(options: SmppCarrierOptions) {
    this.endpoint = parseSmppUrl(options.url);
    this.systemType = options.systemType ?? '';
    this.enquireLinkMs = options.enquireLinkMs ?? 30_000;
    this.windowSize = Math.max(1, options.windowSize ?? 10);
    this.sendIntervalMs = 1000 / Math.max(1, options.throughputPerSecond ?? 50);
    this.pduTimeoutMs = options.pduTimeoutMs ?? 10_000;
    this.backoffInitialMs = options.reconnect?.initialMs ?? 1000;
    this.backoffMaxMs = options.reconnect?.maxMs ?? 30_000;
    this.log = options.log ?? noopLog;
  }

  /** True while a session is bound (submits are accepted). */
  get isBound(): boolean {
    return this.bound;
  }

  /**
   * Connects and binds. Resolves once the first attempt has ended, bound or not: an SMSC that
   * is down at start is retried in the background (submits fail as transient meanwhile).
   */
  async start(onReceipt: ReceiptSink): Promise<void> {
    this.onReceipt = onReceipt;
    if (!this.stopped) return;
    this.stopped = false;
    const first = new Promise<void>((resolve) => (this.firstAttemptDone = resolve));
    this.connect();
    await first;
  }

  prepare(message: CarrierSubmission): PreparedMessage {
    const built = buildSubmitSm(message, { ref: concatenationRef(message.messageId) });
    if (!built.ok) return { ok: false, error: `Not sent: ${built.error}` };
    return { ok: true, parts: built.pdus.map((pdu, i) => ({ partNo: i + 1, pdu })) };
  }

  /**
   * Parts whose send slot has come: a free window slot, nothing queued ahead, and the
   * throughput's next slot not in the future — one part (evenly spaced) — so a part the
   * dispatcher records as handed over is written at once, never some milliseconds later (a
   * kill -9 in between would leave in doubt a part that never left). 0 while a submit_sm_resp
   * is overdue: the session is being dropped.
   */
  room(): number {
    if (!this.bound || !this.session || this.stopped || this.hung) return 0;
    const free = this.windowSize - this.inFlight.size - this.queue.length;
    if (free <= 0 || this.queue.length > 0) return 0;
    const now = Date.now();
    if (now < this.nextSendAt) {
      this.roomAt(this.nextSendAt);
      return 0;
    }
    return 1;
  }

  writePart(part: PreparedPart): Promise<PartOutcome> {
    if (!this.bound || !this.session || this.stopped) {
      return Promise.resolve({ outcome: 'not_sent', error: 'SMPP session not bound' });
    }
    return new Promise<PartOutcome>((resolve) => {
      this.queue.push({ params: part.pdu, settled: false, resolve });
      this.pump();
    });
  }

  onRoom(listener: () => void): void {
    this.roomListener = listener;
  }

  private roomChanged(): void {
    try {
      this.roomListener?.();
    } catch (err) {
      this.log.warn({ err }, 'SMPP room listener failed');
    }
  }

  /** Tell the listener at `at` (throughput-limited room opens then). */
  private roomAt(at: number): void {
    if (this.roomTimer && this.roomTimerAt <= at) return;
    clearTimeout(this.roomTimer);
    this.roomTimerAt = at;
    this.roomTimer = setTimeout(() => {
      this.roomTimer = undefined;
      this.roomChanged();
    }, Math.max(0, Math.ceil(at - Date.now())));
    this.roomTimer.unref();
  }

  /**
   * Sends a whole message, its parts in order; after a part fails the unsent rest is withdrawn.
   * (The dispatcher feeds parts itself through room/writePart; this is the one-call form.)
   */
  async submit(message: CarrierSubmission, _tx?: Tx): Promise<SubmitResult> {
    const prepared = this.prepare(message);
    if (!prepared.ok) return { ok: false, permanent: true, error: prepared.error };
    if (!this.bound) return { ok: false, permanent: false, error: 'SMPP session not bound' };

    const cancelled = new Set<PartJob>();
    const jobs = prepared.parts.map((part) => {
      let resolve!: (o: PartOutcome) => void;
      const done = new Promise<PartOutcome>((r) => (resolve = r));
      const job: PartJob = {
        params: part.pdu,
        settled: false,
        resolve: (o) => {
          resolve(o);
          // At once, before the window slot it frees lets the next part go.
          if (o.outcome !== 'accepted') withdrawRest();
        },
      };
      return { job, done };
    });
    const withdrawRest = () => {
      for (const other of jobs) {
        if (other.job.abort || other.job.settled) continue;
        cancelled.add(other.job);
        this.cancel(other.job);
      }
    };
    for (const { job } of jobs) this.queue.push(job);
    this.pump();
    const outcomes = await Promise.all(jobs.map((j) => j.done));

    const parts: SubmittedPart[] = [];
    outcomes.forEach((o, i) => o.outcome === 'accepted' && parts.push({ partNo: i + 1, carrierMessageId: o.carrierMessageId }));
    if (parts.length === outcomes.length) return { ok: true, parts };

    // The first permanent failure decides; else the first other one.
    const failed = outcomes
      .map((o, i) => ({ o, partNo: i + 1, job: jobs[i]!.job }))
      .filter((f): f is { o: Exclude<PartOutcome, { outcome: 'accepted' }>; partNo: number; job: PartJob } => f.o.outcome !== 'accepted' && !cancelled.has(f.job));
    const first = failed.find((f) => f.o.outcome === 'refused' && f.o.permanent) ?? failed[0];
    const total = outcomes.length;
    const where = first && total > 1 ? ` (part ${first.partNo} of ${total})` : '';
    const accepted =
      parts.length > 0 ? `; already accepted by the SMSC: ${parts.map((p) => `part ${p.partNo} as ${p.carrierMessageId}`).join(', ')}` : '';
    const inDoubt = parts.length > 0 || failed.some((f) => f.o.outcome === 'unknown');
    return {
      ok: false,
      permanent: first?.o.outcome === 'refused' && first.o.permanent,
      error: `${first?.o.error ?? 'not sent'}${where}${accepted}`,
      ...(inDoubt ? { inDoubt: true } : {}),
    };
  }

  /** Unbinds and closes after the parts on the wire are answered; no more reconnects. */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.pumpTimer);
    clearTimeout(this.roomTimer);
    this.roomTimer = undefined;
    for (const job of this.queue.splice(0)) this.settle(job, { outcome: 'not_sent', error: 'SMPP carrier closing' });
    this.firstAttemptDone?.();

    const deadline = Date.now() + this.pduTimeoutMs;
    while (this.inFlight.size > 0 && Date.now() < deadline) await sleep(20);

    const session = this.session;
    if (!session) return;
    if (this.bound) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(this.pduTimeoutMs, 2000));
        const sent = session.send(new smpp.PDU('unbind'), () => {
          clearTimeout(timer);
          resolve();
        });
        if (!sent) {
          clearTimeout(timer);
          resolve();
        }
      });
    }
    await new Promise<void>((resolve) => {
      if (session.socket.destroyed) return resolve();
      const timer = setTimeout(() => session.destroy(), 1000);
      session.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      session.close();
    });
  }

  // -- connection ------------------------------------------------------------------------

  private connect(): void {
    if (this.stopped) return;
    const gen = ++this.generation;
    const { host, port, tls, systemId, password } = this.endpoint;
    let session: Session;
    try {
      session = smpp.connect({ host, port, tls });
    } catch (err) {
      this.log.warn({ err, host, port }, 'SMPP connect failed');
      this.disconnected(gen);
      return;
    }
    this.session = session;
    const current = () => gen === this.generation;
    // The package decodes short_message by data_coding before we see it; a receipt is read
    // from the octets as received (redactReceipt), so each PDU body read is kept until its
    // event has run (the package emits it synchronously after the read).
    let lastBody: Buffer | undefined;
    const socketRead = session.socket.read.bind(session.socket);
    session.socket.read = (size?: number) => {
      const chunk: unknown = socketRead(size);
      if (Buffer.isBuffer(chunk)) lastBody = chunk;
      return chunk;
    };
    const rawOf = (pdu: Pdu): RawUserData | undefined => {
      const body = lastBody;
      lastBody = undefined;
      if (!body || body.length < 12 || body.readUInt32BE(0) !== pdu.command_id || body.readUInt32BE(8) !== pdu.sequence_number) return undefined;
      return rawUserData(body);
    };

    // Connect and bind must finish within the PDU timeout.
    const bindTimer = setTimeout(() => {
      if (current() && !this.bound) {
        this.log.warn({ host, port }, 'SMPP connect/bind timed out');
        session.destroy();
      }
    }, this.pduTimeoutMs);
    bindTimer.unref();

    session.on(tls ? 'secureConnect' : 'connect', () => {
      if (!current()) return;
      const bind = new smpp.PDU('bind_transceiver', {
        system_id: systemId,
        password,
        system_type: this.systemType,
        interface_version: 0x34,
        addr_ton: 0,
        addr_npi: 0,
        address_range: '',
      });
      session.send(bind, (resp) => {
        clearTimeout(bindTimer);
        if (!current()) return;
        if (resp.command_status !== ESME_ROK) {
          this.log.warn({ host, port, systemId, status: smppStatusText(resp.command_status) }, 'SMPP bind refused');
          session.destroy();
          return;
        }
        this.bound = true;
        this.hung = false;
        this.failedAttempts = 0;
        this.log.info({ host, port, systemId }, 'SMPP bound (transceiver)');
        this.enquireTimer = setInterval(() => this.enquireLink(session, gen), this.enquireLinkMs);
        this.enquireTimer.unref();
        this.firstAttemptDone?.();
        this.firstAttemptDone = undefined;
        this.pump();
        this.roomChanged();
      });
    });
    session.on('error', (err: Error) => {
      // A socket error is followed by 'close'; a PDU the package cannot parse leaves the
      // session stuck, so it is dropped either way.
      if (current()) this.log.warn({ err: err.message, host, port }, 'SMPP session error');
      session.destroy();
    });
    session.on('close', () => {
      clearTimeout(bindTimer);
      if (current()) this.disconnected(gen);
    });
    session.on('deliver_sm', (pdu: Pdu) => void this.onDeliver(session, pdu, rawOf(pdu)));
    session.on('data_sm', (pdu: Pdu) => void this.onDeliver(session, pdu, rawOf(pdu)));
    session.on('enquire_link', (pdu: Pdu) => session.send(pdu.response()));
    session.on('unbind', (pdu: Pdu) => {
      this.log.warn({ host, port }, 'SMPP unbind from the SMSC');
      session.send(pdu.response(), () => session.close());
    });
    session.on('unknown', (pdu: Pdu) => session.send(pdu.response())); // generic_nack
  }

  /** The current session ended: fail what is pending and reconnect with backoff. */
  private disconnected(gen: number): void {
    if (gen !== this.generation) return;
    const wasBound = this.bound;
    this.generation++;
    this.bound = false;
    this.session = undefined;
    clearInterval(this.enquireTimer);
    clearTimeout(this.pumpTimer);
    for (const job of [...this.inFlight]) job.abort?.('SMPP connection lost before submit_sm_resp (the part may have been accepted)');
    for (const job of this.queue.splice(0)) this.settle(job, { outcome: 'not_sent', error: 'SMPP connection lost' });
    if (wasBound) this.log.warn({ host: this.endpoint.host, port: this.endpoint.port }, 'SMPP session closed');
    this.firstAttemptDone?.();
    this.firstAttemptDone = undefined;
    if (this.stopped) return;
    const base = Math.min(this.backoffMaxMs, this.backoffInitialMs * 2 ** Math.min(this.failedAttempts, 30));
    const delay = Math.min(this.backoffMaxMs, Math.round(base * (0.8 + Math.random() * 0.4)));
    this.failedAttempts++;
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
    this.reconnectTimer.unref();
  }

  private dropSession(session: Session, reason: string): void {
    this.log.warn({ host: this.endpoint.host, port: this.endpoint.port, reason }, 'SMPP session dropped');
    session.destroy();
  }

  private enquireLink(session: Session, gen: number): void {
    if (gen !== this.generation || !this.bound) return;
    const timer = setTimeout(() => {
      if (gen === this.generation) this.dropSession(session, 'no enquire_link_resp');
    }, this.pduTimeoutMs);
    timer.unref();
    if (!session.send(new smpp.PDU('enquire_link'), () => clearTimeout(timer))) clearTimeout(timer);
  }

  // -- submitting --------------------------------------------------------------------------

  private settle(job: PartJob, outcome: PartOutcome): void {
    if (job.settled) return;
    job.settled = true;
    job.resolve(outcome);
  }

  private cancel(job: PartJob): void {
    const i = this.queue.indexOf(job);
    if (i >= 0) this.queue.splice(i, 1);
    this.settle(job, { outcome: 'not_sent', error: 'cancelled' });
  }

  /** Sends queued parts while the window has room, no faster than the throughput allows. */
  private pump(): void {
    clearTimeout(this.pumpTimer);
    this.pumpTimer = undefined;
    while (this.bound && !this.hung && this.session && this.queue.length > 0 && this.inFlight.size < this.windowSize) {
      const now = Date.now();
      if (now < this.nextSendAt) {
        this.pumpTimer = setTimeout(() => this.pump(), Math.ceil(this.nextSendAt - now));
        this.pumpTimer.unref();
        return;
      }
      this.nextSendAt = Math.max(now, this.nextSendAt) + this.sendIntervalMs;
      this.sendPart(this.session, this.queue.shift()!);
    }
  }

  private sendPart(session: Session, job: PartJob): void {
    const gen = this.generation;
    let pdu: Pdu;
    try {
      pdu = new smpp.PDU('submit_sm', job.params);
    } catch (err) {
      this.log.warn({ err }, 'SMPP submit_sm could not be built');
      this.settle(job, { outcome: 'not_sent', error: `submit_sm could not be built: ${String(err)}` });
      return;
    }
    this.inFlight.add(job);
    const finish = (outcome: PartOutcome) => {
      if (job.settled) return;
      clearTimeout(timer);
      this.inFlight.delete(job);
      job.abort = undefined;
      this.settle(job, outcome);
      if (gen === this.generation) this.pump();
      this.roomChanged();
    };
    job.abort = (error) => finish({ outcome: 'unknown', error });
    const timer = setTimeout(() => {
      // Forget the pending callback; a late submit_sm_resp is ignored.
      const callbacks = session._callbacks as Record<number, unknown> | undefined;
      if (callbacks) delete callbacks[pdu.sequence_number];
      // The SMSC has stopped answering (a hung process keeps its TCP connection open): its slot
      // is not freed for another write. Stop writing at once, drop the session and bind again;
      // the parts still on the wire stay unanswered (in doubt), what is not written waits for
      // an SMSC that answers a bind.
      const current = gen === this.generation;
      if (current) this.hung = true;
      finish({ outcome: 'unknown', error: `no submit_sm_resp within ${this.pduTimeoutMs} ms (the part may have been accepted)` });
      if (current) this.dropSession(session, 'no submit_sm_resp in time');
    }, this.pduTimeoutMs);
    timer.unref();

    let sent: boolean;
    try {
      sent = session.send(pdu, (resp) => {
        const status = resp.command_status;
        if (status === ESME_ROK) {
          const id = cleanId(resp.message_id);
          if (id) finish({ outcome: 'accepted', carrierMessageId: id });
          else finish({ outcome: 'refused', permanent: true, error: 'SMPP submit_sm_resp without a message_id: receipts cannot be matched' });
          return;
        }
        if (status === ESME_RTHROTTLED || status === ESME_RMSGQFUL) {
          // The SMSC asks us to slow down: pause sending for a second.
          this.nextSendAt = Math.max(this.nextSendAt, Date.now() + 1000);
        }
        if (status === ESME_RINVBNDSTS && gen === this.generation) this.dropSession(session, 'SMSC reports the session is not bound');
        finish({ outcome: 'refused', permanent: !TRANSIENT_STATUSES.has(status), error: smppStatusText(status) });
      });
    } catch (err) {
      // Encoding failed before anything was written.
      this.log.warn({ err }, 'SMPP submit_sm could not be encoded');
      const callbacks = session._callbacks as Record<number, unknown> | undefined;
      if (callbacks) delete callbacks[pdu.sequence_number];
      finish({ outcome: 'not_sent', error: `submit_sm could not be encoded: ${String(err)}` });
      return;
    }
    if (!sent) finish({ outcome: 'not_sent', error: 'SMPP connection not writable' });
  }

  // -- receipts ----------------------------------------------------------------------------

  private async onDeliver(session: Session, pdu: Pdu, raw: RawUserData | undefined): Promise<void> {
    let status = ESME_ROK;
    try {
      const parsed = parseDeliverSm(pdu as unknown as Record<string, unknown>, raw);
      switch (parsed.kind) {
        case 'final':
          status = await this.handOver(parsed.receipt);
          break;
        case 'interim':
          this.log.debug?.({ carrierMessageId: parsed.carrierMessageId, stat: parsed.stat }, 'SMPP interim receipt ignored');
          break;
        case 'not-a-receipt':
          // Neither its sender's number nor its text is logged (personal data).
          this.log.info({ command: pdu.command }, 'SMPP mobile-originated message ignored');
          break;
        case 'unparseable':
          // Only the redacted head of something that reads as a receipt: never its "text:"
          // field (it quotes the message, often a one-time code), never undecodable octets.
          this.log.warn(
            parsed.receipt === undefined ? { reason: parsed.reason } : { reason: parsed.reason, receipt: parsed.receipt },
            'SMPP receipt not understood; acknowledged and dropped',
          );
          break;
      }
    } catch (err) {
      this.log.warn({ err }, 'SMPP deliver_sm handling failed');
    } finally {
      try {
        session.send(pdu.response(status === ESME_ROK ? {} : { command_status: status }));
      } catch (err) {
        this.log.warn({ err }, 'SMPP deliver_sm_resp could not be sent');
      }
    }
  }

  /** ESME_ROK once the receipt is recorded; ESME_RX_T_APPN (deliver again later) otherwise. */
  private async handOver(receipt: CarrierReceipt): Promise<number> {
    const sink = this.onReceipt;
    if (!sink) return ESME_RX_T_APPN;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), this.pduTimeoutMs)));
    try {
      const result = await Promise.race([sink(receipt).then(() => 'ok' as const), timeout]);
      if (result === 'ok') return ESME_ROK;
      this.log.warn({ carrierMessageId: receipt.carrierMessageId }, 'SMPP receipt not recorded in time; the SMSC will deliver it again');
      return ESME_RX_T_APPN;
    } catch (err) {
      this.log.warn({ err, carrierMessageId: receipt.carrierMessageId }, 'SMPP receipt not recorded; the SMSC will deliver it again');
      return ESME_RX_T_APPN;
    } finally {
      clearTimeout(timer);
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
