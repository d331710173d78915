// A tiny SMSC for tests and local development, on the server side of the npm `smpp` package
// (the same package the SMPP carrier uses as a client). It speaks real SMPP over TCP:
// accepts bind_transceiver (checking system_id and password), answers enquire_link and
// unbind, gives every submit_sm a message id (upper-case hex, 8 digits, incrementing) and
// records it decoded, can refuse submit_sm for a destination, and sends delivery receipts
// (deliver_sm) to the bound session.
import type { AddressInfo } from 'node:net';
import smpp from 'smpp';

export interface SmscSubmit {
  messageId: string;
  /** 1 for the first session that bound, 2 for the next, … */
  sessionNo: number;
  receivedAt: number;
  source: string;
  sourceTon: number;
  sourceNpi: number;
  destination: string;
  destTon: number;
  destNpi: number;
  dataCoding: number;
  esmClass: number;
  registeredDelivery: number;
  /** validity_period as the package decodes it (a Date for an absolute time), null when empty. */
  validity: Date | string | null;
  /** The whole user data header (length octet first), or null. */
  udh: Buffer | null;
  /** short_message decoded by data_coding: 0 → GSM 03.38, 8 → UCS-2, 3 → Latin-1. */
  text: string;
}

export interface ReceiptOptions {
  /** How the id is written in the receipt: as submit_sm_resp gave it, or in decimal (10 digits, zero-padded). */
  idFormat?: 'hex' | 'decimal';
  /** Carry id and state in the receipted_message_id / message_state TLVs, with an empty short_message. */
  viaTlv?: boolean;
  /** Digits of submit/done dates in the text: 10 (YYMMDDhhmm) or 12 (with seconds). */
  dateDigits?: 10 | 12;
  err?: string;
}

export type SmscFailure = number | 'no-response';

export interface TestSmsc {
  readonly port: number;
  readonly systemId: string;
  readonly password: string;
  /** smpp://system_id:password@127.0.0.1:port (credentials overridable). */
  url(systemId?: string, password?: string): string;
  readonly submits: SmscSubmit[];
  readonly stats: {
    /** Every submit_sm received, refused or not. */
    submitSm: number;
    binds: number;
    bindFailures: number;
    enquireLinks: number;
    unbinds: number;
    /** Most submit_sm received and not yet answered at one time. */
    maxOutstanding: number;
  };
  /**
   * Answer submit_sm to this destination (digits, no '+') with an error status, or not at all;
   * `after` parts first succeed; `times` failures, then it is accepted again (default: always).
   */
  failDestination(destination: string, failure: SmscFailure, opts?: { after?: number; times?: number }): void;
  /**
   * While on, submit_sm are received (and recorded in `submits`) but not answered; turning it
   * off answers them all (on sessions still open).
   */
  holdResponses(hold: boolean): void;
  /** submit_sm received and not answered yet. */
  readonly outstanding: number;
  /** While on, every bind_transceiver is refused (ESME_RBINDFAIL), as an SMSC down for maintenance. */
  refuseBinds(refuse: boolean): void;
  /** Sends a delivery receipt for a message id to the bound session; resolves with the deliver_sm_resp status. */
  deliverReceipt(messageId: string, stat: string, opts?: ReceiptOptions): Promise<number>;
  /** Sends any deliver_sm (parameters and TLVs as the package names them); resolves with the response status. */
  deliver(params: Record<string, unknown>): Promise<number>;
  /** Stop (or resume) answering enquire_link, as a dead link would. */
  silenceEnquireLink(silent: boolean): void;
  /** Sends enquire_link to the bound session; resolves with the response status. */
  enquireLink(): Promise<number>;
  /** Writes a deliver_sm the package cannot parse (a TLV cut short) to every session. */
  sendMalformedPdu(): void;
  /** Cuts every open connection, as a network failure would. */
  dropConnection(): void;
  readonly openSessions: number;
  close(): Promise<void>;
}

/** How long the SMSC waits for the service's answer to a PDU it sends (generous: busy test machines). */
const RESPONSE_TIMEOUT_MS = 10_000;

function decodeShortMessage(value: unknown): { udh: Buffer | null; text: string } {
  if (Buffer.isBuffer(value)) return { udh: null, text: value.toString('latin1') };
  if (typeof value === 'string') return { udh: null, text: value };
  const v = (value ?? {}) as { udh?: Buffer[]; message?: unknown };
  const ies = v.udh ?? [];
  const header = ies.length > 0 ? Buffer.concat([Buffer.from([ies.reduce((n, ie) => n + ie.length, 0)]), ...ies]) : null;
  const message = v.message;
  return { udh: header, text: typeof message === 'string' ? message : Buffer.isBuffer(message) ? message.toString('latin1') : '' };
}

function smppDate(d: Date, digits: 10 | 12): string {
  const two = (n: number) => String(n).padStart(2, '0');
  const s = `${two(d.getUTCFullYear() % 100)}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}`;
  return s.slice(0, digits);
}

export async function createTestSmsc(opts: {
  port?: number;
  systemId?: string;
  password?: string;
  /** Delay before each submit_sm_resp (window tests). */
  responseDelayMs?: number;
  firstMessageId?: number;
} = {}): Promise<TestSmsc> {
  const systemId = opts.systemId ?? 'loyalty';
  const password = opts.password ?? 'secret';
  const submits: SmscSubmit[] = [];
  const stats = { submitSm: 0, binds: 0, bindFailures: 0, enquireLinks: 0, unbinds: 0, maxOutstanding: 0 };
  const failures = new Map<string, { failure: SmscFailure; after: number; seen: number; times: number }>();
  let holding = false;
  let refusingBinds = false;
  const heldResponses: Array<() => void> = [];
  const bound = new Set<smpp.Session>();
  let nextId = opts.firstMessageId ?? 0x0abc0001;
  let outstanding = 0;
  let enquireLinkSilent = false;

  const send = (session: smpp.Session, name: string, params: Record<string, unknown>) =>
    new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no response to ${name}`)), RESPONSE_TIMEOUT_MS);
      const ok = session.send(new smpp.PDU(name, params), (resp) => {
        clearTimeout(timer);
        resolve(resp.command_status);
      });
      if (!ok) {
        clearTimeout(timer);
        reject(new Error('session not writable'));
      }
    });
  const deliver = (params: Record<string, unknown>) => send(boundSession(), 'deliver_sm', { data_coding: 0, ...params });
  const boundSession = () => {
    const session = [...bound].at(-1);
    if (!session) throw new Error('no bound session');
    return session;
  };

  const server = smpp.createServer((session) => {
    let sessionNo = 0;
    session.on('error', () => session.destroy());
    session.on('close', () => bound.delete(session));
    session.on('bind_transceiver', (pdu: smpp.PDU) => {
      if (refusingBinds) {
        stats.bindFailures++;
        session.send(pdu.response({ command_status: smpp.errors.ESME_RBINDFAIL }), () => session.close());
        return;
      }
      if (pdu.system_id !== systemId || pdu.password !== password) {
        stats.bindFailures++;
        const status = pdu.system_id !== systemId ? smpp.errors.ESME_RINVSYSID : smpp.errors.ESME_RINVPASWD;
        session.send(pdu.response({ command_status: status }), () => session.close());
        return;
      }
      sessionNo = ++stats.binds;
      bound.add(session);
      session.send(pdu.response({ system_id: 'TESTSMSC' }));
    });
    session.on('enquire_link', (pdu: smpp.PDU) => {
      stats.enquireLinks++;
      if (!enquireLinkSilent) session.send(pdu.response());
    });
    session.on('unbind', (pdu: smpp.PDU) => {
      stats.unbinds++;
      bound.delete(session);
      session.send(pdu.response(), () => session.close());
    });
    session.on('submit_sm', (pdu: smpp.PDU) => {
      stats.submitSm++;
      if (!bound.has(session)) {
        session.send(pdu.response({ command_status: smpp.errors.ESME_RINVBNDSTS }));
        return;
      }
      const destination = String(pdu.destination_addr);
      const rule = failures.get(destination);
      if (rule && rule.seen++ >= rule.after && rule.times > 0) {
        rule.times--;
        if (rule.failure !== 'no-response') session.send(pdu.response({ command_status: rule.failure }));
        return;
      }
      const messageId = nextId.toString(16).toUpperCase().padStart(8, '0');
      nextId++;
      const { udh, text } = decodeShortMessage(pdu.short_message);
      submits.push({
        messageId,
        sessionNo,
        receivedAt: Date.now(),
        source: String(pdu.source_addr),
        sourceTon: pdu.source_addr_ton as number,
        sourceNpi: pdu.source_addr_npi as number,
        destination,
        destTon: pdu.dest_addr_ton as number,
        destNpi: pdu.dest_addr_npi as number,
        dataCoding: pdu.data_coding as number,
        esmClass: pdu.esm_class as number,
        registeredDelivery: pdu.registered_delivery as number,
        validity: (pdu.validity_period as Date | string | undefined) || null,
        udh,
        text,
      });
      outstanding++;
      stats.maxOutstanding = Math.max(stats.maxOutstanding, outstanding);
      const respond = () => {
        outstanding--;
        if (!session.socket.destroyed) session.send(pdu.response({ message_id: messageId }));
      };
      if (holding) heldResponses.push(respond);
      else if (opts.responseDelayMs) setTimeout(respond, opts.responseDelayMs);
      else respond();
    });
    session.on('unknown', (pdu: smpp.PDU) => session.send(pdu.response()));
  });

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    systemId,
    password,
    url: (id = systemId, pw = password) => `smpp://${encodeURIComponent(id)}:${encodeURIComponent(pw)}@127.0.0.1:${port}`,
    submits,
    stats,
    failDestination(destination, failure, o = {}) {
      failures.set(destination.replace(/^\+/, ''), { failure, after: o.after ?? 0, seen: 0, times: o.times ?? Infinity });
    },
    holdResponses(hold) {
      holding = hold;
      if (!hold) for (const respond of heldResponses.splice(0)) respond();
    },
    get outstanding() {
      return outstanding;
    },
    refuseBinds(refuse) {
      refusingBinds = refuse;
    },
    deliverReceipt(messageId, stat, o = {}) {
      const submit = submits.find((s) => s.messageId === messageId);
      const id = o.idFormat === 'decimal' ? BigInt(`0x${messageId}`).toString(10).padStart(10, '0') : messageId;
      const date = smppDate(new Date(), o.dateDigits ?? 10);
      const delivered = stat === 'DELIVRD' ? '001' : '000';
      const text = `id:${id} sub:001 dlvrd:${delivered} submit date:${date} done date:${date} stat:${stat} err:${o.err ?? '000'} text:${(submit?.text ?? '').slice(0, 20)}`;
      const states: Record<string, number> = { ENROUTE: 1, DELIVRD: 2, EXPIRED: 3, DELETED: 4, UNDELIV: 5, ACCEPTD: 6, UNKNOWN: 7, REJECTD: 8 };
      return deliver({
        source_addr_ton: 1,
        source_addr_npi: 1,
        source_addr: submit?.destination ?? '',
        dest_addr_ton: submit?.sourceTon ?? 5,
        dest_addr_npi: submit?.sourceNpi ?? 0,
        destination_addr: submit?.source ?? '',
        esm_class: 0x04,
        data_coding: 0,
        ...(o.viaTlv
          ? { short_message: Buffer.alloc(0), receipted_message_id: id, message_state: states[stat] ?? 7 }
          : { short_message: Buffer.from(text, 'ascii') }),
      });
    },
    deliver,
    silenceEnquireLink(silent) {
      enquireLinkSilent = silent;
    },
    enquireLink() {
      return send(boundSession(), 'enquire_link', {});
    },
    sendMalformedPdu() {
      // deliver_sm header, empty mandatory parameters, then a message_state TLV whose value is missing.
      const body = Buffer.concat([Buffer.alloc(17), Buffer.from([0x04, 0x27, 0x00, 0x01])]);
      const head = Buffer.alloc(16);
      head.writeUInt32BE(16 + body.length, 0);
      head.writeUInt32BE(0x00000005, 4);
      head.writeUInt32BE(0, 8);
      head.writeUInt32BE(0x7000_0001, 12);
      for (const s of server.sessions) s.socket.write(Buffer.concat([head, body]));
    },
    dropConnection() {
      for (const s of [...server.sessions]) s.socket.destroy();
      bound.clear();
    },
    get openSessions() {
      return server.sessions.length;
    },
    async close() {
      for (const s of [...server.sessions]) s.socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls until `check` returns true (or a truthy value), failing after `timeoutMs`. */
export async function waitFor<T>(check: () => T, timeoutMs = 3000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
