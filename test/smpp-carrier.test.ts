// The SMPP 3.4 carrier against a real SMSC over TCP on 127.0.0.1 (test/helpers/smsc.ts, the
// server side of the same `smpp` package): bind, submit_sm encoding and concatenation,
// delivery receipts in their several spellings, refusals, reconnects, window and throttle.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CarrierReceipt, CarrierSubmission, SubmitResult } from '../src/modules/sms/carriers/carrier.js';
import {
  buildSubmitSm,
  concatenationRef,
  parseDeliverSm,
  type RawUserData,
  parseReceiptText,
  parseSmppUrl,
  receiptHandset,
  receiptLookupIds,
  SmppCarrier,
  smppAbsoluteTime,
  smppStatusText,
  type SmppCarrierOptions,
} from '../src/modules/sms/carriers/smpp-carrier.js';
import { layout } from '../src/modules/sms/sms-text.js';
import { createTestSmsc, waitFor, type TestSmsc } from './helpers/smsc.js';

const tx = undefined as never; // a remote carrier never touches the transaction

let seq = 0;
function message(text: string, over: Partial<CarrierSubmission> = {}): CarrierSubmission {
  const l = layout(text);
  return {
    messageId: `m-${++seq}`,
    source: 'Loyalty',
    destination: '+37060012345',
    text,
    encoding: l.encoding,
    segments: l.segments,
    validityAt: null,
    ...over,
  };
}

/** Asserts that every part was accepted (with a message, so assert never parses the source). */
function assertSent(result: SubmitResult): asserts result is Extract<SubmitResult, { ok: true }> {
  assert.ok(result.ok, JSON.stringify(result));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Harness {
  smsc: TestSmsc;
  carrier: SmppCarrier;
  receipts: CarrierReceipt[];
  stop(): Promise<void>;
}

async function harness(options: Partial<SmppCarrierOptions> = {}, smscOptions: Parameters<typeof createTestSmsc>[0] = {}): Promise<Harness> {
  const smsc = await createTestSmsc(smscOptions);
  const carrier = new SmppCarrier({ url: smsc.url(), pduTimeoutMs: 1000, reconnect: { initialMs: 100, maxMs: 400 }, ...options });
  const receipts: CarrierReceipt[] = [];
  await carrier.start(async (r) => {
    receipts.push(...[r].flat());
  });
  return {
    smsc,
    carrier,
    receipts,
    async stop() {
      await carrier.close();
      await smsc.close();
    },
  };
}

describe('SMPP helpers (pure)', () => {
  it('parses smpp:// URLs with credentials', () => {
    assert.deepEqual(parseSmppUrl('smpp://id%40x:p%3Aw@smsc.example.com:2776'), {
      host: 'smsc.example.com',
      port: 2776,
      tls: false,
      systemId: 'id@x',
      password: 'p:w',
    });
    assert.equal(parseSmppUrl('smpp://a:b@h').port, 2775);
    assert.equal(parseSmppUrl('ssmpp://a:b@h').port, 3550);
    for (const bad of ['http://a:b@h:1', 'smpp://h:2775', 'smpp://a@h:2775', 'nonsense']) assert.throws(() => parseSmppUrl(bad), bad);
  });

  it('writes SMPP absolute times in UTC (YYMMDDhhmmsstnnp)', () => {
    assert.equal(smppAbsoluteTime(new Date('2031-02-03T04:05:06.789Z')), '310203040506700+');
    assert.equal(smppAbsoluteTime(new Date('2030-12-31T23:59:59.000Z')), '301231235959000+');
  });

  it('names command statuses', () => {
    assert.equal(smppStatusText(0x0b), 'SMPP error 0x0000000B (ESME_RINVDSTADR)');
    assert.equal(smppStatusText(0x58), 'SMPP error 0x00000058 (ESME_RTHROTTLED)');
    assert.equal(smppStatusText(0x4242), 'SMPP error 0x00004242 (unknown status)');
  });

  it('reads receipt text with 10- or 12-digit dates, in any order, ignoring what follows text:', () => {
    assert.deepEqual(
      parseReceiptText('id:0000029095 sub:001 dlvrd:001 submit date:2111250349 done date:2111250350 stat:DELIVRD err:000 text:Hello'),
      { id: '0000029095', sub: '001', dlvrd: '001', submitDate: '2111250349', doneDate: '2111250350', stat: 'DELIVRD', err: '000', text: 'Hello' },
    );
    const twelve = parseReceiptText('id:7E4D sub:001 dlvrd:000 submit date:211125034959 done date:211125035001 stat:UNDELIV err:034 text:stat:DELIVRD id:X');
    assert.equal(twelve.id, '7E4D');
    assert.equal(twelve.submitDate, '211125034959');
    assert.equal(twelve.doneDate, '211125035001');
    assert.equal(twelve.stat, 'UNDELIV');
    assert.equal(twelve.err, '034');
    assert.deepEqual(parseReceiptText('stat:EXPIRED   ID:abc'), { id: 'abc', stat: 'EXPIRED' });
    assert.deepEqual(parseReceiptText('\u0000\u00ff garbage'), {});
  });

  it('looks a receipt id up under the carrier\'s one spelling only (SMPP_RECEIPT_ID_FORMAT)', () => {
    // same: the id as given, never its hex or decimal reading ("272" is not hex "110").
    assert.deepEqual(receiptLookupIds('272', 'same'), ['272']);
    assert.deepEqual(receiptLookupIds(' 0ABC0001 ', 'same'), ['0ABC0001']);
    // decimal: the receipt writes in decimal what submit_sm_resp gave in hex.
    const c = receiptLookupIds('0180092929', 'decimal'); // 0x0ABC0001 written in decimal, zero-padded
    assert.deepEqual(c.sort(), ['0ABC0001', '0abc0001', 'ABC0001', 'abc0001'].sort());
    assert.ok(!c.includes('0180092929'), 'not the id as given');
    assert.deepEqual(receiptLookupIds('272', 'decimal').sort(), ['00000110', '110'].sort());
    assert.deepEqual(receiptLookupIds('7e4d3c2a', 'decimal'), []);
    // hex: the receipt writes in hex what submit_sm_resp gave in decimal.
    assert.deepEqual(receiptLookupIds('110', 'hex'), ['272', '0000000272']);
    assert.deepEqual(receiptLookupIds('7e4d3c2a', 'hex'), [String(0x7e4d3c2a), String(0x7e4d3c2a)]
      .filter((v, i, a) => a.indexOf(v) === i));
    assert.deepEqual(receiptLookupIds('msg-1', 'hex'), []);
    assert.deepEqual(receiptLookupIds('  ', 'same'), []);
  });

  it('reads the handset a receipt names from its source_addr', () => {
    assert.equal(receiptHandset('37060012345', 1), '+37060012345');
    assert.equal(receiptHandset('+37060012345', 0), '+37060012345');
    assert.equal(receiptHandset('060012345', 2), '060012345');
    assert.equal(receiptHandset('', 1), undefined);
    assert.equal(receiptHandset('Shop', 5), undefined);
    assert.equal(receiptHandset(undefined, 1), undefined);
  });

  it('classifies deliver_sm: TLVs first, then text; interim, mobile-originated and garbage apart', () => {
    const final = (pdu: Record<string, unknown>, raw?: RawUserData) => {
      const p = parseDeliverSm(pdu, raw);
      assert.equal(p.kind, 'final', JSON.stringify(p));
      return (p as { receipt: CarrierReceipt }).receipt;
    };
    assert.deepEqual(final({ esm_class: 4, short_message: { message: 'id:12 stat:DELIVRD err:000' } }), { carrierMessageId: '12', state: 'delivered' });
    assert.deepEqual(
      final({ esm_class: 4, short_message: { message: 'id:99 stat:UNDELIV err:001' }, receipted_message_id: 'AB12', message_state: 2 }),
      { carrierMessageId: 'AB12', state: 'delivered' },
    );
    // receipted_message_id without its NUL reads on into the next TLV: the garbage is cut off.
    assert.deepEqual(final({ esm_class: 0, receipted_message_id: "AB12\u0004'\u0001", message_state: 3 }), { carrierMessageId: 'AB12', state: 'expired' });
    assert.deepEqual(
      final({ esm_class: 4, short_message: 'id:5 stat:REJECTD err:0B', network_error_code: Buffer.from([3, 0, 34]) }),
      { carrierMessageId: '5', state: 'failed', error: 'REJECTD (err 0B, network error type 3 code 34)' },
    );
    assert.deepEqual(final({ esm_class: 4, short_message: Buffer.from('id:6 stat:deleted') }), { carrierMessageId: '6', state: 'failed', error: 'DELETED' });
    assert.equal(final({ esm_class: 4, short_message: 'id:7 stat:UNKNOWN err:000' }).state, 'failed');
    assert.deepEqual(parseDeliverSm({ esm_class: 4, short_message: 'id:8 stat:ENROUTE' }), { kind: 'interim', carrierMessageId: '8', stat: 'ENROUTE' });
    // ACCEPTD is final (SMPP 3.4 §5.2.28): read or accepted on the subscriber's behalf.
    assert.deepEqual(final({ esm_class: 4, short_message: 'id:8 stat:ACCEPTD' }), { carrierMessageId: '8', state: 'delivered' });
    assert.deepEqual(final({ esm_class: 4, receipted_message_id: '8', message_state: 6 }), { carrierMessageId: '8', state: 'delivered' });
    // The receipt format is ASCII whatever data_coding says: an 0x08 receipt decoded as UCS-2 by
    // the package, or read from its octets as received.
    const ascii = 'id:77 sub:001 dlvrd:001 submit date:2111250349 done date:2111250350 stat:DELIVRD err:000 text:Code 4711';
    const ucs2 = Buffer.from(ascii, 'latin1');
    assert.deepEqual(final({ esm_class: 4, data_coding: 8, short_message: { message: Buffer.from(ucs2.subarray(0, 98)).swap16().toString('utf16le') } }), {
      carrierMessageId: '77',
      state: 'delivered',
    });
    assert.deepEqual(final({ esm_class: 4, data_coding: 8, short_message: { message: '楤' } }, { shortMessage: ucs2 }), {
      carrierMessageId: '77',
      state: 'delivered',
    });
    assert.deepEqual(parseDeliverSm({ esm_class: 0, short_message: { message: 'STOP' } }), { kind: 'not-a-receipt' });
    assert.equal(parseDeliverSm({ esm_class: 4, short_message: Buffer.from([0xff, 0x00, 0x13]) }).kind, 'unparseable');
    assert.equal(parseDeliverSm({ esm_class: 4, short_message: 'id:9 stat:WHATEVER' }).kind, 'unparseable');
    assert.equal(parseDeliverSm({ esm_class: 4, receipted_message_id: 'A', message_state: 42 }).kind, 'unparseable');
    assert.equal(parseDeliverSm({ esm_class: 4, short_message: { get message(): string { throw new Error('boom'); } } }).kind, 'unparseable');
  });

  it('addresses alphanumeric senders as TON 5 / NPI 0 and numbers as international', () => {
    const built = (over: Partial<CarrierSubmission>) => {
      const b = buildSubmitSm(message('Hi', over), { ref: 7 });
      assert.ok(b.ok, JSON.stringify(b));
      return b.pdus[0]!;
    };
    assert.deepEqual(
      [built({ source: 'Shop 24' }).source_addr_ton, built({ source: 'Shop 24' }).source_addr_npi, built({ source: 'Shop 24' }).source_addr],
      [5, 0, 'Shop 24'],
    );
    const numeric = built({ source: '+37060000001' });
    assert.deepEqual([numeric.source_addr_ton, numeric.source_addr_npi, numeric.source_addr], [1, 1, '37060000001']);
    assert.deepEqual([numeric.dest_addr_ton, numeric.dest_addr_npi, numeric.destination_addr], [1, 1, '37060012345']);
  });

  it('refuses what cannot be sent instead of letting the package guess', () => {
    const refused = (m: CarrierSubmission) => {
      const b = buildSubmitSm(m, { ref: 1 });
      assert.equal(b.ok, false);
      return (b as { error: string }).error;
    };
    assert.match(refused(message('Hi', { validityAt: new Date(Date.now() - 1000) })), /validity/);
    assert.match(refused({ ...message('Hi'), segments: ['Ąžuolas'] }), /not GSM-7/);
    assert.match(refused({ ...message('Hi'), segments: ['a'.repeat(161)] }), /does not fit/);
    assert.match(refused(message('Hi', { destination: '+3706x' })), /destination/);
    assert.match(refused(message('Hi', { source: 'Šilas' })), /source/);
  });
});

describe('SmppCarrier against a test SMSC', () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.stop());

  it('binds as a transceiver with system_id and password', () => {
    assert.equal(h.carrier.isBound, true);
    assert.equal(h.smsc.stats.binds, 1);
    assert.equal(h.smsc.stats.bindFailures, 0);
  });

  it('sends a GSM-7 text as one submit_sm with data_coding 0, registered delivery and the exact text', async () => {
    const text = 'Your code is 123456. Thank you!';
    const before = h.smsc.submits.length;
    const result = await h.carrier.submit(message(text), tx);
    assert.ok(result.ok, JSON.stringify(result));
    const [s] = h.smsc.submits.slice(before);
    assert.ok(s, 'submit_sm seen');
    assert.deepEqual(result.parts, [{ partNo: 1, carrierMessageId: s.messageId }]);
    assert.equal(s.dataCoding, 0);
    assert.equal(s.esmClass, 0);
    assert.equal(s.udh, null);
    assert.equal(s.registeredDelivery, 1);
    assert.equal(s.text, text);
    assert.deepEqual([s.source, s.sourceTon, s.sourceNpi], ['Loyalty', 5, 0]);
    assert.deepEqual([s.destination, s.destTon, s.destNpi], ['37060012345', 1, 1]);
    assert.equal(s.validity, null);
  });

  it('sends UCS-2 text with data_coding 8', async () => {
    const text = 'Ačiū! Jūsų kodas: 4321 ✓';
    const before = h.smsc.submits.length;
    const result = await h.carrier.submit(message(text), tx);
    assert.ok(result.ok, JSON.stringify(result));
    const [s] = h.smsc.submits.slice(before);
    assert.equal(s?.dataCoding, 8);
    assert.equal(s?.text, text);
  });

  it('sends é, ü, à, ß, Ñ and Ø as GSM (data_coding 0), never LATIN1', async () => {
    const text = 'Café über à la Ñoño, Øresund, Straße, Äpfel';
    assert.equal(layout(text).encoding, 'GSM-7');
    const before = h.smsc.submits.length;
    assertSent(await h.carrier.submit(message(text), tx));
    const [s] = h.smsc.submits.slice(before);
    assert.equal(s?.dataCoding, 0);
    assert.equal(s?.text, text);
  });

  it('round-trips GSM extension characters (€ [ ] { } ~ ^ | \\)', async () => {
    const text = 'Price: 5€ [promo] {x} ~ ^ | \\ end';
    const before = h.smsc.submits.length;
    assertSent(await h.carrier.submit(message(text), tx));
    const [s] = h.smsc.submits.slice(before);
    assert.equal(s?.dataCoding, 0);
    assert.equal(s?.text, text);
  });

  it('sends a 3-part message as 3 submit_sm with one concatenation reference and esm_class 0x40', async () => {
    const text = Array.from({ length: 40 }, (_, i) => `word${i}€`).join(' ') + ' the end.';
    const m = message(text);
    assert.equal(m.segments.length, 3);
    const before = h.smsc.submits.length;
    const result = await h.carrier.submit(m, tx);
    assert.ok(result.ok, JSON.stringify(result));
    const sent = h.smsc.submits.slice(before);
    assert.equal(sent.length, 3);
    const bySeq = [...sent].sort((a, b) => a.udh![5]! - b.udh![5]!);
    const ref = bySeq[0]!.udh![3];
    bySeq.forEach((s, i) => {
      assert.equal(s.esmClass & 0x40, 0x40);
      assert.equal(s.dataCoding, 0);
      assert.deepEqual([...s.udh!], [0x05, 0x00, 0x03, ref, 3, i + 1]);
    });
    assert.equal(bySeq.map((s) => s.text).join(''), text);
    assert.deepEqual(
      result.parts,
      bySeq.map((s, i) => ({ partNo: i + 1, carrierMessageId: s.messageId })),
    );
  });

  it('sends a multi-part UCS-2 message without splitting a surrogate pair', async () => {
    const text = 'ą'.repeat(66) + '😀' + 'ž'.repeat(70);
    const m = message(text);
    assert.equal(m.encoding, 'UCS-2');
    const before = h.smsc.submits.length;
    assertSent(await h.carrier.submit(m, tx));
    const sent = h.smsc.submits.slice(before).sort((a, b) => a.udh![5]! - b.udh![5]!);
    assert.equal(sent.length, m.segments.length);
    assert.ok(sent.every((s) => s.dataCoding === 8 && s.udh![4] === m.segments.length), 'UCS-2 parts with the part count in the UDH');
    assert.deepEqual(
      sent.map((s) => s.text),
      m.segments,
    );
    assert.equal(sent.map((s) => s.text).join(''), text);
  });

  it('sets validity_period from validityAt as an absolute time', async () => {
    const validityAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000);
    const before = h.smsc.submits.length;
    assertSent(await h.carrier.submit(message('Valid for an hour', { validityAt }), tx));
    const [s] = h.smsc.submits.slice(before);
    assert.ok(s?.validity instanceof Date, String(s?.validity));
    assert.equal((s.validity as Date).toISOString(), validityAt.toISOString());
  });

  it('turns a receipt whose id is decimal (submit_sm_resp was hex) into a delivered receipt the decimal format looks up', async () => {
    const result = await h.carrier.submit(message('Decimal receipt'), tx);
    assert.ok(result.ok, JSON.stringify(result));
    const submitId = result.parts[0]!.carrierMessageId;
    assert.match(submitId, /^[0-9A-F]{8}$/);
    const count = h.receipts.length;
    assert.equal(await h.smsc.deliverReceipt(submitId, 'DELIVRD', { idFormat: 'decimal' }), 0);
    const r = await waitFor(() => h.receipts[count], 2000, 'receipt');
    const decimal = BigInt(`0x${submitId}`).toString(10).padStart(10, '0');
    assert.deepEqual(r, { carrierMessageId: decimal, state: 'delivered', destination: '+37060012345' });
    assert.ok(receiptLookupIds(r.carrierMessageId, 'decimal').includes(submitId), 'the decimal format looks up the submit id');
  });

  it('reads receipts from the TLVs, and with 12-digit dates in the text', async () => {
    const result = await h.carrier.submit(message('Two receipts'), tx);
    assert.ok(result.ok, JSON.stringify(result));
    const id = result.parts[0]!.carrierMessageId;
    const count = h.receipts.length;
    assert.equal(await h.smsc.deliverReceipt(id, 'EXPIRED', { viaTlv: true }), 0);
    assert.equal(await h.smsc.deliverReceipt(id, 'UNDELIV', { dateDigits: 12, err: '034' }), 0);
    await waitFor(() => h.receipts.length >= count + 2, 2000, 'two receipts');
    assert.deepEqual(h.receipts.slice(count), [
      { carrierMessageId: id, state: 'expired', destination: '+37060012345' },
      { carrierMessageId: id, state: 'failed', error: 'UNDELIV (err 034)', destination: '+37060012345' },
    ]);
  });

  it('acknowledges but does not report interim receipts, mobile-originated messages and garbage', async () => {
    const count = h.receipts.length;
    assert.equal(await h.smsc.deliverReceipt('0ABC9999', 'ENROUTE'), 0);
    assert.equal(await h.smsc.deliverReceipt('0ABC9999', 'ENROUTE', { viaTlv: true }), 0);
    assert.equal(await h.smsc.deliver({ esm_class: 0x04, short_message: Buffer.from([0xff, 0x00, 0x1b, 0x80, 0x13]) }), 0);
    assert.equal(await h.smsc.deliver({ esm_class: 0x04, short_message: Buffer.from('id: stat:') }), 0);
    assert.equal(await h.smsc.deliver({ esm_class: 0x04, data_coding: 0x08, short_message: Buffer.from([0xd8, 0x00]) }), 0);
    assert.equal(await h.smsc.deliver({ esm_class: 0x00, source_addr: '37060012345', short_message: Buffer.from('STOP') }), 0);
    // Still bound, and the next real receipt is the only one reported.
    assert.equal(h.carrier.isBound, true);
    // A receipt is acknowledged only once reported, so each answer above is the sentinel.
    assert.equal(await h.smsc.deliverReceipt('0ABC9999', 'DELIVRD'), 0);
    assert.deepEqual(h.receipts.slice(count), [{ carrierMessageId: '0ABC9999', state: 'delivered' }]);
  });

  it('reads a data_coding 8 receipt with ASCII text as a receipt, and never logs a receipt\'s text or undecodable octets', async () => {
    const lines: string[] = [];
    const log = { info: (o: object, m?: string) => lines.push(JSON.stringify([o, m])), warn: (o: object, m?: string) => lines.push(JSON.stringify([o, m])) };
    const own = await harness({ log });
    try {
      const ascii = (id: string, stat: string, text: string) =>
        Buffer.from(`id:${id} sub:001 dlvrd:001 submit date:2111250349 done date:2111250350 stat:${stat} err:000 text:${text}`, 'latin1');
      // Odd and even lengths: UCS-2 decoding would drop or garble the last octet.
      assert.equal(await own.smsc.deliver({ esm_class: 0x04, data_coding: 0x08, short_message: ascii('0ABC7001', 'DELIVRD', 'Code 4711') }), 0);
      assert.equal(await own.smsc.deliver({ esm_class: 0x04, data_coding: 0x08, short_message: ascii('0ABC7002', 'ACCEPTD', 'Code 4712x') }), 0);
      assert.equal(await own.smsc.deliver({ esm_class: 0x04, data_coding: 0x08, short_message: ascii('0ABC7003', 'UNDELIV', 'Code 4713') }), 0);
      // Not understood: only the redacted head is logged; garbage not at all.
      assert.equal(await own.smsc.deliver({ esm_class: 0x04, data_coding: 0x08, short_message: ascii('0ABC7004', 'WHATEVER', 'Code 4714') }), 0);
      assert.equal(await own.smsc.deliver({ esm_class: 0x04, data_coding: 0x08, short_message: Buffer.from('Code 4715 secret', 'utf16le').swap16() }), 0);
      assert.equal(await own.smsc.deliver({ esm_class: 0x04, data_coding: 0x00, short_message: Buffer.from([0x80, 0x81, 0x34, 0x37, 0x31, 0x36]) }), 0);
      assert.equal(await own.smsc.deliver({ esm_class: 0x00, source_addr: '37060012345', short_message: Buffer.from('STOP 4717') }), 0);
      assert.deepEqual(own.receipts, [
        { carrierMessageId: '0ABC7001', state: 'delivered' },
        { carrierMessageId: '0ABC7002', state: 'delivered' },
        { carrierMessageId: '0ABC7003', state: 'failed', error: 'UNDELIV (err 000)' },
      ]);
      const logged = lines.join('\n');
      assert.match(logged, /0ABC7004/, 'the redacted head of a receipt not understood is logged');
      for (const secret of ['4711', '4712', '4713', '4714', '4715', '4716', '4717', '37060012345', 'secret', '\\u']) {
        assert.ok(!logged.includes(secret), `${secret} in the log: ${logged}`);
      }
    } finally {
      await own.stop();
    }
  });

  it('fails permanently on an error status for a destination', async () => {
    h.smsc.failDestination('+37060099999', 0x0b);
    const result = await h.carrier.submit(message('Nobody there', { destination: '+37060099999' }), tx);
    assert.deepEqual(result, { ok: false, permanent: true, error: 'SMPP error 0x0000000B (ESME_RINVDSTADR)' });
  });


  it('fails transiently when the SMSC throttles or its queue is full', async () => {
    h.smsc.failDestination('+37060077777', 0x58);
    h.smsc.failDestination('+37060077778', 0x14);
    const throttled = await h.carrier.submit(message('Slow down', { destination: '+37060077777' }), tx);
    // Refused outright: nothing is at the SMSC, so a retry is safe (no inDoubt).
    assert.deepEqual(throttled, { ok: false, permanent: false, error: 'SMPP error 0x00000058 (ESME_RTHROTTLED)' });
    const full = await h.carrier.submit(message('Full', { destination: '+37060077778' }), tx);
    assert.deepEqual(full, { ok: false, permanent: false, error: 'SMPP error 0x00000014 (ESME_RMSGQFUL)' });
  });

  it('fails transiently when no submit_sm_resp comes in time, and drops the session and binds again', async () => {
    h.smsc.failDestination('+37060066666', 'no-response');
    const binds = h.smsc.stats.binds;
    const started = Date.now();
    const result = await h.carrier.submit(message('Into the void', { destination: '+37060066666' }), tx);
    assert.equal(result.ok, false);
    assert.ok(!result.ok && !result.permanent, JSON.stringify(result));
    assert.match(result.error, /no submit_sm_resp within 1000 ms/);
    assert.ok(!result.ok && result.inDoubt === true, 'the SMSC may hold it: in doubt, never to be resubmitted');
    assert.ok(Date.now() - started >= 950, 'waited for the PDU timeout');
    // An SMSC that does not answer may have hung: the session is dropped, not written to again.
    assert.equal(h.carrier.room(), 0);
    await waitFor(() => h.smsc.stats.binds > binds && h.carrier.isBound, 5000, 'a new session');
  });

  it('answers the SMSC’s enquire_link', async () => {
    assert.equal(await h.smsc.enquireLink(), 0);
  });

  it('asks the SMSC to deliver a receipt again when recording it fails', async () => {
    const smsc = await createTestSmsc();
    const carrier = new SmppCarrier({ url: smsc.url(), pduTimeoutMs: 1000 });
    let failNext = true;
    const recorded: CarrierReceipt[] = [];
    await carrier.start(async (r) => {
      if (failNext) {
        failNext = false;
        throw new Error('database down');
      }
      recorded.push(...[r].flat());
    });
    try {
      assert.equal(await smsc.deliverReceipt('0000ABCD', 'DELIVRD'), 0x64);
      assert.equal(await smsc.deliverReceipt('0000ABCD', 'DELIVRD'), 0);
      assert.deepEqual(recorded, [{ carrierMessageId: '0000ABCD', state: 'delivered' }]);
    } finally {
      await carrier.close();
      await smsc.close();
    }
  });
});

describe('SmppCarrier sessions', () => {
  it('is not bound with a wrong password, keeps retrying, and fails submits transiently', async () => {
    const smsc = await createTestSmsc();
    const carrier = new SmppCarrier({ url: smsc.url('loyalty', 'wrong'), pduTimeoutMs: 1000, reconnect: { initialMs: 50, maxMs: 100 } });
    try {
      await carrier.start(async () => {});
      assert.equal(carrier.isBound, false);
      assert.deepEqual(await carrier.submit(message('Hi'), tx), { ok: false, permanent: false, error: 'SMPP session not bound' });
      await waitFor(() => smsc.stats.bindFailures >= 3, 2000, 'bind retries');
      assert.equal(smsc.stats.binds, 0);
    } finally {
      await carrier.close();
      await smsc.close();
    }
  });

  it('reconnects with backoff after a dropped connection, sends again, and reports receipts of the earlier session', async () => {
    const h = await harness({ reconnect: { initialMs: 300, maxMs: 1000 } });
    try {
      const first = await h.carrier.submit(message('Before the drop'), tx);
      assert.ok(first.ok, JSON.stringify(first));
      h.smsc.dropConnection();
      await waitFor(() => !h.carrier.isBound, 1000, 'unbound');
      const droppedAt = Date.now();
      assert.deepEqual(await h.carrier.submit(message('While down'), tx), { ok: false, permanent: false, error: 'SMPP session not bound' });
      await waitFor(() => h.carrier.isBound, 3000, 'rebound');
      assert.ok(Date.now() - droppedAt >= 200, 'waited for the backoff');
      assert.equal(h.smsc.stats.binds, 2);

      const second = await h.carrier.submit(message('After the drop'), tx);
      assert.ok(second.ok, JSON.stringify(second));
      assert.deepEqual(
        h.smsc.submits.map((s) => s.sessionNo),
        [1, 2],
      );
      assert.equal(await h.smsc.deliverReceipt(first.parts[0]!.carrierMessageId, 'DELIVRD'), 0);
      await waitFor(() => h.receipts.length === 1, 2000, 'receipt');
      assert.deepEqual(h.receipts, [{ carrierMessageId: first.parts[0]!.carrierMessageId, state: 'delivered', destination: '+37060012345' }]);
    } finally {
      await h.stop();
    }
  });

  it('fails a part on the wire transiently when the connection drops, then recovers', async () => {
    const h = await harness({}, { responseDelayMs: 300 });
    try {
      const pending = h.carrier.submit(message('Cut off'), tx);
      await waitFor(() => h.smsc.submits.length === 1, 1000, 'submit seen');
      h.smsc.dropConnection();
      const result = await pending;
      assert.equal(result.ok, false);
      assert.ok(!result.ok && !result.permanent, JSON.stringify(result));
      assert.match(result.error, /connection lost/);
      assert.ok(!result.ok && result.inDoubt === true, 'the part was on the wire: in doubt');
      await waitFor(() => h.carrier.isBound, 3000, 'rebound');
    } finally {
      await h.stop();
    }
  });

  it('drops and re-binds a session on a PDU it cannot parse', async () => {
    const h = await harness();
    try {
      h.smsc.sendMalformedPdu();
      await waitFor(() => h.smsc.stats.binds === 2 && h.carrier.isBound, 3000, 're-bind');
      assertSent(await h.carrier.submit(message('Still here'), tx));
    } finally {
      await h.stop();
    }
  });

  it('sends enquire_link periodically', async () => {
    const h = await harness({ enquireLinkMs: 80 });
    try {
      await waitFor(() => h.smsc.stats.enquireLinks >= 3, 2000, 'enquire_link');
      assert.equal(h.carrier.isBound, true);
    } finally {
      await h.stop();
    }
  });

  it('drops a session whose enquire_link goes unanswered, and binds again', async () => {
    const h = await harness({ enquireLinkMs: 80, pduTimeoutMs: 500 });
    try {
      h.smsc.silenceEnquireLink(true);
      await waitFor(() => !h.carrier.isBound, 2000, 'dead link noticed');
      h.smsc.silenceEnquireLink(false);
      await waitFor(() => h.carrier.isBound && h.smsc.stats.binds === 2, 2000, 're-bind');
      assertSent(await h.carrier.submit(message('Alive again'), tx));
    } finally {
      await h.stop();
    }
  });

  it('says so when a later part fails permanently after earlier parts were accepted, and sends no more parts', async () => {
    const h = await harness({ windowSize: 1 });
    try {
      h.smsc.failDestination('+37060088888', 0x45, { after: 1 });
      const m = message('x'.repeat(400), { destination: '+37060088888' });
      assert.equal(m.segments.length, 3);
      const result = await h.carrier.submit(m, tx);
      assert.ok(!result.ok && result.permanent, JSON.stringify(result));
      assert.match(result.error, /^SMPP error 0x00000045 \(ESME_RSUBMITFAIL\) \(part 2 of 3\); already accepted by the SMSC: part 1 as [0-9A-F]{8}$/);
      assert.ok(!result.ok && result.inDoubt === true, 'part 1 is at the SMSC: the message must not be resubmitted');
      // Nothing queued or on the wire any more (window 1: room again once its slot comes), and part 3 never left.
      await sleep(25);
      assert.equal(h.carrier.room(), 1);
      assert.equal(h.smsc.stats.submitSm, 2);
    } finally {
      await h.stop();
    }
  });

  it('keeps at most windowSize submit_sm unanswered', async () => {
    const h = await harness({ windowSize: 2, throughputPerSecond: 1000 }, { responseDelayMs: 60 });
    try {
      const results = await Promise.all([1, 2, 3].map((i) => h.carrier.submit(message(`Window ${i} `.repeat(30)), tx)));
      results.forEach((r) => assertSent(r));
      assert.equal(h.smsc.submits.length, 6);
      assert.equal(h.smsc.stats.maxOutstanding, 2);
    } finally {
      await h.stop();
    }
  });

  it('sends no more than throughputPerSecond submit_sm a second', async () => {
    const h = await harness({ throughputPerSecond: 20 });
    try {
      const results = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => h.carrier.submit(message(`Rate ${i}`), tx)));
      results.forEach((r) => assertSent(r));
      const times = h.smsc.submits.map((s) => s.receivedAt);
      // 6 sends at 20/s are spaced 50 ms apart: at least 250 ms from first to last.
      assert.ok(times.at(-1)! - times[0]! >= 230, `spread ${times.at(-1)! - times[0]!} ms`);
    } finally {
      await h.stop();
    }
  });

  it('unbinds on close and does not reconnect', async () => {
    const h = await harness();
    try {
      await h.carrier.close();
      assert.equal(h.smsc.stats.unbinds, 1);
      assert.equal(h.carrier.isBound, false);
      await sleep(300);
      assert.equal(h.smsc.stats.binds, 1);
      assert.equal(h.smsc.openSessions, 0);
      assert.deepEqual(await h.carrier.submit(message('Closed'), tx), { ok: false, permanent: false, error: 'SMPP session not bound' });
    } finally {
      await h.smsc.close();
    }
  });
});

describe('SmppCarrier part by part (how the dispatcher feeds it)', () => {
  const part = (text: string, over: Partial<CarrierSubmission> = {}) => {
    const prepared = new SmppCarrier({ url: 'smpp://a:b@127.0.0.1:1' }).prepare(message(text, over));
    assert.ok(prepared.ok);
    return prepared.parts[0]!;
  };

  it('has room only while bound, one part whose slot has come, and never more than the free window', async () => {
    const h = await harness({ windowSize: 2, throughputPerSecond: 1000 });
    try {
      assert.equal(h.carrier.room(), 1);
      h.smsc.holdResponses(true);
      const answers = [h.carrier.writePart(part('One'))];
      await sleep(5);
      assert.equal(h.carrier.room(), 1);
      answers.push(h.carrier.writePart(part('Two')));
      await sleep(5);
      assert.equal(h.carrier.room(), 0, 'the window is full');
      await waitFor(() => h.smsc.outstanding === 2, 2000, 'both parts at the SMSC');
      let roomEvents = 0;
      h.carrier.onRoom(() => roomEvents++);
      h.smsc.holdResponses(false);
      const outcomes = await Promise.all(answers);
      assert.deepEqual(outcomes.map((o) => o.outcome), ['accepted', 'accepted']);
      assert.ok(roomEvents >= 2, 'told the room grew');
      assert.equal(h.carrier.room(), 1);
      await h.carrier.close();
      assert.equal(h.carrier.room(), 0);
      assert.deepEqual(await h.carrier.writePart(part('Closed')), { outcome: 'not_sent', error: 'SMPP session not bound' });
    } finally {
      await h.smsc.close();
    }
  });

  it('gives room only when the throughput slot has come (nothing recorded ahead of it), and says when', async () => {
    const h = await harness({ windowSize: 10, throughputPerSecond: 10 });
    try {
      assert.equal(h.carrier.room(), 1, 'one part every 100 ms');
      const sentAt = Date.now();
      const first = h.carrier.writePart(part('Paced 1'));
      // The listener hears of every change (the answer, the throughput slot) and asks again.
      const opened = new Promise<number>((resolve) =>
        h.carrier.onRoom(() => {
          if (h.carrier.room() > 0) resolve(Date.now());
        }),
      );
      assert.equal(h.carrier.room(), 0, 'the next may leave only in 100 ms');
      const openedAt = await opened;
      assert.ok(openedAt - sentAt >= 95, `room again after ${openedAt - sentAt} ms`);
      assert.equal((await first).outcome, 'accepted');
    } finally {
      await h.stop();
    }
  });

  it('reports what became of each part: accepted, refused, unknown, not sent', async () => {
    const h = await harness({ pduTimeoutMs: 300, reconnect: { initialMs: 50, maxMs: 100 } });
    try {
      h.smsc.failDestination('+37060055551', 0x0b);
      h.smsc.failDestination('+37060055552', 0x58);
      h.smsc.failDestination('+37060055553', 'no-response');
      assert.equal((await h.carrier.writePart(part('Yes'))).outcome, 'accepted');
      assert.deepEqual(await h.carrier.writePart(part('No', { destination: '+37060055551' })), {
        outcome: 'refused',
        permanent: true,
        error: 'SMPP error 0x0000000B (ESME_RINVDSTADR)',
      });
      assert.deepEqual(await h.carrier.writePart(part('Later', { destination: '+37060055552' })), {
        outcome: 'refused',
        permanent: false,
        error: 'SMPP error 0x00000058 (ESME_RTHROTTLED)',
      });
      const binds = h.smsc.stats.binds;
      assert.deepEqual(await h.carrier.writePart(part('Silence', { destination: '+37060055553' })), {
        outcome: 'unknown',
        error: 'no submit_sm_resp within 300 ms (the part may have been accepted)',
      });
      // Dropped and bound again: nothing more was written on the silent session.
      assert.equal(h.carrier.room(), 0);
      await waitFor(() => h.smsc.stats.binds > binds && h.carrier.isBound, 3000, 'a new session');
      h.smsc.holdResponses(true);
      const cut = h.carrier.writePart(part('Cut'));
      await waitFor(() => h.smsc.outstanding === 1, 2000, 'the part at the SMSC');
      h.smsc.dropConnection();
      assert.equal((await cut).outcome, 'unknown');
      assert.equal((await h.carrier.writePart(part('Unbound'))).outcome, 'not_sent');
      h.smsc.holdResponses(false);
    } finally {
      await h.stop();
    }
  });

  it('derives the concatenation reference from the message id, so later parts join earlier ones', () => {
    const carrier = new SmppCarrier({ url: 'smpp://a:b@127.0.0.1:1' });
    const ref = (id: string) => {
      const prepared = carrier.prepare(message('y'.repeat(200), { messageId: id }));
      assert.ok(prepared.ok);
      const refs = prepared.parts.map((p) => (p.pdu.short_message as Buffer)[3]);
      assert.equal(new Set(refs).size, 1);
      return refs[0];
    };
    assert.equal(ref('msg_same'), ref('msg_same'));
    assert.equal(ref('msg_same'), concatenationRef('msg_same'));
    assert.notEqual(ref('msg_a'), ref('msg_c'));
  });
});
