// POST /{locale}/sms/send (spec: SMS → send request table, response fields, part table;
// DESIGN.md §3, §4): every validation rule as Shape A (422, code VALIDATION_ERROR, errors
// keyed by field, all problems in one response), the unapproved sender (2001), the response
// shape, parts and cost at every boundary, transliteration, consent and Idempotency-Key.
// A refused send charges nothing and queues nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request, type Response } from './helpers/http.js';
import {
  account,
  assertShapeA,
  createSmsPartner,
  DE_OK,
  ISO,
  LT_OK,
  LV_OK,
  messages,
  messageTotal,
  send,
  sendBody,
  UUID,
  type SendOptions,
} from './helpers/sms.js';

/** EUR as ten-thousandths, for exact comparisons of JSON amounts (at most 4 decimals). */
const units = (eur: number) => Math.round(eur * 10_000);
/** parts × price (price in ten-thousandths) as the JSON number the API shows. */
const costOf = (parts: number, priceUnits: number) => Number(((parts * priceUnits) / 10_000).toFixed(4));
const LT = 290;
const LV = 390;
const OTHER = 600;

let t: TestApp;
let admin: AdminFixture;
let partner: PartnerFixture;

before(async () => {
  t = await startTestApp();
  admin = await createAdmin(t);
  partner = await createSmsPartner(t, admin, { senders: ['Shop', 'My Shop', 'ElevenChars'], balance: '1000' });
});
after(() => t.close());

async function snapshot(p: PartnerFixture = partner) {
  return { balance: (await account(t, p)).balance, messages: await messageTotal(t, p) };
}

/** Sends `body`, expects Shape A on exactly `fields`, and checks that nothing was charged or queued. */
async function refused(body: unknown, fields: string[], opts: SendOptions = {}): Promise<Response> {
  const before = await snapshot();
  const res = await send(t, partner, body, opts);
  assertShapeA(res, fields, JSON.stringify(body).slice(0, 200));
  assert.deepEqual(await snapshot(), before, 'a refused send changes neither the balance nor the message list');
  return res;
}

/** Sends `body`, expects 200 queued, and checks the charge against the balance. */
async function accepted(body: Record<string, unknown>, opts: SendOptions = {}): Promise<Response> {
  const before = await snapshot();
  const res = await send(t, partner, body, opts);
  assert.equal(res.status, 200, res.text);
  const after = await snapshot();
  assert.equal(units(before.balance) - units(after.balance), units(res.body.data.cost.amount), 'the balance drops by the cost');
  assert.equal(after.messages, before.messages + 1);
  return res;
}

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

describe('POST /sms/send: validation (Shape A, code VALIDATION_ERROR)', () => {
  it('source: missing, empty, 12 characters, other than letters, digits and spaces', async () => {
    const { source: _omit, ...withoutSource } = sendBody();
    await refused(withoutSource, ['source']);
    for (const source of ['', 'TwelveChars1', 'Shop!', 'Parduotuvė', 'Shop-1', 'Shop_1']) {
      await refused(sendBody({ source }), ['source']);
    }
  });

  it('source: 11 characters and spaces are allowed', async () => {
    assert.equal((await accepted(sendBody({ source: 'ElevenChars' }))).body.data.source, 'ElevenChars');
    assert.equal((await accepted(sendBody({ source: 'My Shop' }))).body.data.source, 'My Shop');
  });

  it('destination: missing, not a number, too short, incomplete', async () => {
    const { destination: _omit, ...withoutDestination } = sendBody();
    await refused(withoutDestination, ['destination']);
    for (const destination of ['', 'abc', '123', '+3706', '+370612345678901', '+999123456789']) {
      await refused(sendBody({ destination }), ['destination']);
    }
  });

  it('destination: the plus sign is optional; the response shows the normalised E.164 number', async () => {
    const res = await accepted(sendBody({ destination: '37060000000' }));
    assert.equal(res.body.data.destination, '+37060000000');
    const plus = await accepted(sendBody({ destination: '+37060000000' }));
    assert.equal(plus.body.data.destination, '+37060000000');
  });

  it('message: missing, empty, over 1600 characters; 1600 is accepted', async () => {
    const { message: _omit, ...withoutMessage } = sendBody();
    await refused(withoutMessage, ['message']);
    await refused(sendBody({ message: '' }), ['message']);
    await refused(sendBody({ message: 'a'.repeat(1601) }), ['message']);
    // Characters, not UTF-16 units: 1601 emoji are too many, 1600 are not.
    await refused(sendBody({ message: '😀'.repeat(1601) }), ['message']);
    const ok = await accepted(sendBody({ message: 'a'.repeat(1600) }));
    assert.equal(ok.body.data.parts, 11); // 1600 / 153 per concatenated part
    await accepted(sendBody({ message: '😀'.repeat(1600) }));
  });

  it('receipt true without receiptURL is an error on receiptURL', async () => {
    await refused(sendBody({ receipt: true }), ['receiptURL']);
    await refused(sendBody({ receipt: true, receiptURL: '' }), ['receiptURL']);
  });

  it('receiptURL must be an http(s) URL', async () => {
    for (const receiptURL of ['not a url', 'ftp://example.com/x', 'example.com/receipt', 'javascript:alert(1)']) {
      await refused(sendBody({ receipt: true, receiptURL }), ['receiptURL']);
    }
  });

  it('receiptURL pointing at a private, loopback or link-local address is refused (ALLOW_PRIVATE_URLS unset)', async () => {
    assert.equal(t.config.allowPrivateUrls, false, 'the default configuration refuses private addresses');
    for (const receiptURL of ['http://127.0.0.1/x', 'http://10.0.0.1/x', 'http://192.168.1.10/x', 'http://169.254.169.254/latest', 'http://[::1]/x']) {
      await refused(sendBody({ receipt: true, receiptURL }), ['receiptURL']);
    }
  });

  it('scheduled: not a date, in the past', async () => {
    await refused(sendBody({ scheduled: 'tomorrow' }), ['scheduled']);
    await refused(sendBody({ scheduled: '2020-01-01T10:00:00Z' }), ['scheduled']);
    await refused(sendBody({ scheduled: inMs(-60_000) }), ['scheduled']);
  });

  it('validity: not a date, in the past, not after the scheduled time', async () => {
    await refused(sendBody({ validity: 'soon' }), ['validity']);
    await refused(sendBody({ validity: '2020-01-01T10:00:00Z' }), ['validity']);
    await refused(sendBody({ validity: inMs(-1000) }), ['validity']);
    await refused(sendBody({ scheduled: inMs(2 * 3600_000), validity: inMs(3600_000) }), ['validity']);
  });

  it('validityMinutes: 0, 10081 and 1.5 are refused; 1 and 10080 are accepted', async () => {
    for (const validityMinutes of [0, 10081, 1.5, -5, '60']) {
      await refused(sendBody({ validityMinutes }), ['validityMinutes']);
    }
    for (const validityMinutes of [1, 10080]) {
      const before = Date.now();
      const res = await accepted(sendBody({ validityMinutes }));
      const validity = Date.parse(res.body.data.validity);
      assert.ok(validity >= before + validityMinutes * 60_000 - 1000, res.text);
      assert.ok(validity <= Date.now() + validityMinutes * 60_000 + 1000, res.text);
    }
  });

  it('validity together with validityMinutes is refused', async () => {
    const before = await snapshot();
    const res = await send(t, partner, sendBody({ validity: inMs(3600_000), validityMinutes: 30 }));
    assert.equal(res.status, 422, res.text);
    assert.equal(res.body.code, 'VALIDATION_ERROR');
    const keys = Object.keys(res.body.errors);
    assert.ok(keys.length > 0 && keys.every((k) => k === 'validity' || k === 'validityMinutes'), res.text);
    assert.deepEqual(await snapshot(), before);
  });

  it('wrong types are refused under their field names', async () => {
    await refused(sendBody({ receipt: 'yes' }), ['receipt']);
    await refused(sendBody({ message: 5 }), ['message']);
    await refused(sendBody({ source: 42 }), ['source']);
    await refused(sendBody({ destination: 37061234567 }), ['destination']);
    await refused(sendBody({ marketing_consent: 'true' }), ['marketing_consent']);
    await refused(sendBody({ scheduled: 1_900_000_000 }), ['scheduled']);
    await refused(sendBody({ receipt: 'yes', message: 5 }), ['message', 'receipt']);
  });

  it('consent_page_url must be a URL', async () => {
    await refused(sendBody({ marketing_consent: true, consent_page_url: 'not a url' }), ['consent_page_url']);
  });

  it('reports every invalid field in one response', async () => {
    await refused(
      {
        source: 'Bad!',
        destination: 'abc',
        message: '',
        receipt: true,
        scheduled: 'never',
        validityMinutes: 0,
      },
      ['destination', 'message', 'receiptURL', 'scheduled', 'source', 'validityMinutes'],
    );
    await refused(
      { source: 'Shop', destination: '+3706', message: 'a'.repeat(1601), validity: '2020-01-01T00:00:00Z', receipt: 'yes' },
      ['destination', 'message', 'receipt', 'validity'],
    );
    await refused({}, ['destination', 'message', 'source']);
  });

  it('answers an empty or non-object body with Shape A too', async () => {
    const before = await snapshot();
    for (const raw of ['[]', '"text"', 'null']) {
      const res = await request(t.url, 'POST', '/en/sms/send', {
        headers: { ...apiHeaders(partner.apiKey), 'content-type': 'application/json' },
        raw,
      });
      assert.equal(res.status, 422, `${raw}: ${res.text}`);
      assert.equal(res.body.code, 'VALIDATION_ERROR', raw);
    }
    assert.deepEqual(await snapshot(), before);
  });

  it('gives the messages in the locale of the path', async () => {
    const body = sendBody({ destination: 'abc', message: '' });
    const en = await refused(body, ['destination', 'message'], { locale: 'en' });
    const lt = await refused(body, ['destination', 'message'], { locale: 'lt' });
    assert.notEqual(en.body.message, lt.body.message);
    assert.notEqual(en.body.errors.destination[0], lt.body.errors.destination[0]);
    assert.notEqual(en.body.errors.message[0], lt.body.errors.message[0]);
  });

  it('checks the fields before the sender: an unapproved source with an invalid field is Shape A', async () => {
    await refused(sendBody({ source: 'Unknown', destination: 'abc' }), ['destination']);
  });
});

describe('POST /sms/send: unapproved sender (2001)', () => {
  it('answers 422 code 2001 listing every approved sender, and charges nothing', async () => {
    const p = await createSmsPartner(t, admin, { senders: ['Alpha Shop', 'Beta24'], balance: '5' });
    for (const locale of ['en', 'lt'] as const) {
      const before = await snapshot(p);
      const res = await send(t, p, sendBody({ source: 'Gamma' }), { locale });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.success, false);
      assert.equal(res.body.code, 2001);
      assert.match(res.body.request_id, UUID);
      assert.ok(res.body.message.includes('Alpha Shop'), res.body.message);
      assert.ok(res.body.message.includes('Beta24'), res.body.message);
      assert.ok(!res.body.message.includes('Gamma'), res.body.message);
      assert.deepEqual(await snapshot(p), before);
    }
    // The names are compared exactly: another case is another name.
    assert.equal((await send(t, p, sendBody({ source: 'alpha shop' }))).body.code, 2001);
    assert.equal((await send(t, p, sendBody({ source: 'Beta24' }))).status, 200);
  });

  it('answers 2001 for a partner with no approved sender at all', async () => {
    const p = await createSmsPartner(t, admin, { senders: [], balance: '5' });
    const before = await snapshot(p);
    const res = await send(t, p, sendBody());
    assert.equal(res.status, 422, res.text);
    assert.equal(res.body.code, 2001);
    assert.equal(typeof res.body.message, 'string');
    assert.deepEqual(await snapshot(p), before);
  });
});

describe('POST /sms/send: success', () => {
  it('answers 200 with exactly the spec fields, status queued, and the encoding headers', async () => {
    const res = await accepted(sendBody({ message: 'Your code is 1234' }));
    assert.equal(res.body.success, true);
    assert.equal(res.body.code, 200);
    assert.equal(typeof res.body.message, 'string');
    const data = res.body.data;
    assert.deepEqual(Object.keys(data).sort(), [
      'cost',
      'destination',
      'marketing_consent_registered',
      'message_id',
      'parts',
      'scheduled',
      'source',
      'status',
      'validity',
    ]);
    assert.equal(typeof data.message_id, 'string');
    assert.ok(data.message_id.length >= 16);
    assert.equal(data.source, 'Shop');
    assert.equal(data.destination, LT_OK);
    assert.equal(data.status, 'queued');
    assert.equal(data.parts, 1);
    assert.deepEqual(data.cost, { amount: 0.029, currency: 'EUR', parts_charged: 1 });
    assert.equal(data.scheduled, null);
    assert.equal(data.validity, null);
    assert.equal(data.marketing_consent_registered, false);
    assert.equal(res.headers.get('x-sms-encoding'), 'GSM-7');
    assert.equal(res.headers.get('x-sms-transliterated'), 'false');
    assert.equal(res.headers.get('x-request-id'), res.body.request_id);
  });

  it('gives every message its own id', async () => {
    const a = await accepted(sendBody());
    const b = await accepted(sendBody());
    assert.notEqual(a.body.data.message_id, b.body.data.message_id);
  });

  it('echoes scheduled and validity', async () => {
    const scheduled = new Date(Date.now() + 3600_000);
    scheduled.setUTCMilliseconds(0);
    const validity = new Date(scheduled.getTime() + 7200_000);
    const res = await accepted(sendBody({ scheduled: scheduled.toISOString(), validity: validity.toISOString() }));
    assert.equal(res.body.data.scheduled, scheduled.toISOString());
    assert.equal(res.body.data.validity, validity.toISOString());
    assert.match(res.body.data.scheduled, ISO);
  });

  it('accepts scheduled with an offset and answers it in UTC', async () => {
    const at = new Date(Date.now() + 3600_000);
    at.setUTCMilliseconds(0);
    const local = new Date(at.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    const res = await accepted(sendBody({ scheduled: local }));
    assert.equal(res.body.data.scheduled, at.toISOString());
  });

  it('counts validityMinutes from scheduled when given, else from now', async () => {
    const scheduled = new Date(Date.now() + 86_400_000);
    scheduled.setUTCMilliseconds(0);
    const res = await accepted(sendBody({ scheduled: scheduled.toISOString(), validityMinutes: 90 }));
    assert.equal(res.body.data.validity, new Date(scheduled.getTime() + 90 * 60_000).toISOString());

    const before = Date.now();
    const now = await accepted(sendBody({ validityMinutes: 30 }));
    assert.equal(now.body.data.scheduled, null);
    const validity = Date.parse(now.body.data.validity);
    assert.ok(validity >= before + 30 * 60_000 - 1000 && validity <= Date.now() + 30 * 60_000 + 1000, now.text);
  });
});

describe('POST /sms/send: parts and cost (spec part table, DESIGN.md §4)', () => {
  const cases: Array<[string, string, 'GSM-7' | 'UCS-2', number]> = [
    ['GSM-7 1 character', 'a', 'GSM-7', 1],
    ['GSM-7 160', 'a'.repeat(160), 'GSM-7', 1],
    ['GSM-7 161', 'a'.repeat(161), 'GSM-7', 2],
    ['GSM-7 306', 'a'.repeat(306), 'GSM-7', 2],
    ['GSM-7 307', 'a'.repeat(307), 'GSM-7', 3],
    ['GSM-7 459', 'a'.repeat(459), 'GSM-7', 3],
    ['GSM-7 460', 'a'.repeat(460), 'GSM-7', 4],
    ['GSM-7 basic accents stay GSM-7', 'Café äöü ÄÖÜ ñ à è é ù ì ò Ç', 'GSM-7', 1],
    ['extension: 80 × € = 160 septets', '€'.repeat(80), 'GSM-7', 1],
    ['extension: 80 × € + a = 161 septets', '€'.repeat(80) + 'a', 'GSM-7', 2],
    ['extension: 159 a + [ = 161 septets', 'a'.repeat(159) + '[', 'GSM-7', 2],
    ['extension: 158 a + { = 160 septets', 'a'.repeat(158) + '{', 'GSM-7', 1],
    ['extension pair never split: 152 a + € + 152 a', 'a'.repeat(152) + '€' + 'a'.repeat(152), 'GSM-7', 3],
    ['UCS-2 70', 'Ж'.repeat(70), 'UCS-2', 1],
    ['UCS-2 71', 'Ж'.repeat(71), 'UCS-2', 2],
    ['UCS-2 134', 'Ж'.repeat(134), 'UCS-2', 2],
    ['UCS-2 135', 'Ж'.repeat(135), 'UCS-2', 3],
    ['UCS-2 201', 'Ж'.repeat(201), 'UCS-2', 3],
    ['UCS-2 202', 'Ж'.repeat(202), 'UCS-2', 4],
    ['one Lithuanian letter makes it UCS-2', 'a'.repeat(69) + 'ė', 'UCS-2', 1],
    ['Lithuanian 71', 'a'.repeat(70) + 'ė', 'UCS-2', 2],
    ['emoji count two units: 35 × 😀 = 70', '😀'.repeat(35), 'UCS-2', 1],
    ['emoji: 35 × 😀 + a = 71', '😀'.repeat(35) + 'a', 'UCS-2', 2],
    ['surrogate pair never split: 66 a + 😀 + 66 Ж', 'a'.repeat(66) + '😀' + 'Ж'.repeat(66), 'UCS-2', 3],
  ];

  for (const [label, message, encoding, parts] of cases) {
    it(`${label} → ${parts} part(s), ${encoding}, cost ${parts} × 0.029`, async () => {
      const res = await accepted(sendBody({ message }));
      assert.equal(res.body.data.parts, parts, res.text);
      assert.equal(res.headers.get('x-sms-encoding'), encoding);
      assert.deepEqual(res.body.data.cost, { amount: costOf(parts, LT), currency: 'EUR', parts_charged: parts });
    });
  }

  it('the 152 a + € + 152 a example costs exactly 0.087', async () => {
    const res = await accepted(sendBody({ message: 'a'.repeat(152) + '€' + 'a'.repeat(152) }));
    assert.equal(res.body.data.cost.amount, 0.087);
  });

  it('prices by destination country: LT 0.029, LV 0.039, elsewhere the * price 0.06', async () => {
    const lt = await accepted(sendBody({ destination: LT_OK, message: 'a'.repeat(307) }));
    assert.equal(lt.body.data.cost.amount, 0.087);
    const lv = await accepted(sendBody({ destination: LV_OK, message: 'a'.repeat(307) }));
    assert.equal(lv.body.data.destination, LV_OK);
    assert.deepEqual(lv.body.data.cost, { amount: costOf(3, LV), currency: 'EUR', parts_charged: 3 });
    assert.equal(lv.body.data.cost.amount, 0.117);
    const de = await accepted(sendBody({ destination: DE_OK, message: 'Ж'.repeat(71) }));
    assert.deepEqual(de.body.data.cost, { amount: costOf(2, OTHER), currency: 'EUR', parts_charged: 2 });
    assert.equal(de.body.data.cost.amount, 0.12);
  });

  it('keeps exact decimals over many sends (no float drift)', async () => {
    const before = await snapshot();
    for (let i = 0; i < 10; i++) assert.equal((await send(t, partner, sendBody({ message: `n${i}` }))).status, 200);
    const after = await snapshot();
    assert.equal(units(before.balance) - units(after.balance), 10 * LT);
    assert.equal(after.messages, before.messages + 10);
  });
});

describe('POST /sms/send: transliteration', () => {
  const lithuanian = 'Ačiū, kad apsipirkote! Jūsų nuolaidos kodas: ŽIEMA. Galioja iki sekmadienio, geros dienos!';

  it('is off by default: Lithuanian text is sent as it is, as UCS-2', async () => {
    assert.ok([...lithuanian].length > 70 && [...lithuanian].length <= 134);
    const res = await accepted(sendBody({ message: lithuanian }));
    assert.equal(res.body.data.parts, 2);
    assert.equal(res.headers.get('x-sms-encoding'), 'UCS-2');
    assert.equal(res.headers.get('x-sms-transliterated'), 'false');
    const [item] = (await messages(t, partner, '?per_page=1')).body.data;
    assert.equal(item.message_id, res.body.data.message_id);
    assert.equal(item.message, lithuanian);
    assert.equal(item.encoding, 'UCS-2');
    assert.equal(item.transliterated, false);
  });

  it('transliterate: true sends GSM-7 look-alikes in fewer parts', async () => {
    const res = await accepted(sendBody({ message: lithuanian, transliterate: true }));
    assert.equal(res.body.data.parts, 1);
    assert.equal(res.body.data.cost.amount, 0.029);
    assert.equal(res.headers.get('x-sms-encoding'), 'GSM-7');
    assert.equal(res.headers.get('x-sms-transliterated'), 'true');
    const [item] = (await messages(t, partner, '?per_page=1')).body.data;
    assert.equal(item.message_id, res.body.data.message_id);
    assert.equal(item.message, 'Aciu, kad apsipirkote! Jusu nuolaidos kodas: ZIEMA. Galioja iki sekmadienio, geros dienos!');
    assert.equal(item.encoding, 'GSM-7');
    assert.equal(item.transliterated, true);
    assert.equal(item.parts, 1);
  });

  it('transliterate: true on a GSM-7 text changes nothing and says so', async () => {
    const res = await accepted(sendBody({ message: 'Plain text €', transliterate: true }));
    assert.equal(res.headers.get('x-sms-encoding'), 'GSM-7');
    assert.equal(res.headers.get('x-sms-transliterated'), 'false');
    const [item] = (await messages(t, partner, '?per_page=1')).body.data;
    assert.equal(item.message, 'Plain text €');
  });

  it('the account setting applies when the request does not say; the request wins when it does', async () => {
    const p = await createSmsPartner(t, admin, { balance: '5' });
    const set = await request(t.url, 'PUT', '/en/partners/sms-account', { headers: bearer(p.token), json: { transliterate: true } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.data.transliterate, true);
    assert.equal((await account(t, p)).transliterate, true);

    const byAccount = await send(t, p, sendBody({ message: lithuanian }));
    assert.equal(byAccount.status, 200, byAccount.text);
    assert.equal(byAccount.body.data.parts, 1);
    assert.equal(byAccount.headers.get('x-sms-transliterated'), 'true');
    assert.equal(byAccount.headers.get('x-sms-encoding'), 'GSM-7');

    const optedOut = await send(t, p, sendBody({ message: lithuanian, transliterate: false }));
    assert.equal(optedOut.status, 200, optedOut.text);
    assert.equal(optedOut.body.data.parts, 2);
    assert.equal(optedOut.headers.get('x-sms-transliterated'), 'false');
    assert.equal(optedOut.headers.get('x-sms-encoding'), 'UCS-2');

    const list = (await messages(t, p)).body.data;
    assert.deepEqual(
      list.map((m: { message_id: string; transliterated: boolean; message: string }) => [m.message_id, m.transliterated, m.message === lithuanian]),
      [
        [optedOut.body.data.message_id, false, true],
        [byAccount.body.data.message_id, true, false],
      ],
    );
  });
});

describe('POST /sms/send: marketing consent', () => {
  it('registers consent when marketing_consent is true', async () => {
    const phone = '+37061110001';
    const none = await request(t.url, 'GET', `/en/sms/consent/${encodeURIComponent(phone)}`, { headers: apiHeaders(partner.apiKey) });
    assert.equal(none.status, 404);
    const res = await accepted(
      sendBody({
        destination: phone,
        marketing_consent: true,
        client_ip: '203.0.113.7',
        client_user_agent: 'Mozilla/5.0 (test)',
        consent_page_url: 'https://shop.example.com/signup',
      }),
    );
    assert.equal(res.body.data.marketing_consent_registered, true);
    const consent = await request(t.url, 'GET', `/en/sms/consent/${encodeURIComponent(phone)}`, { headers: apiHeaders(partner.apiKey) });
    assert.equal(consent.status, 200, consent.text);
    assert.equal(consent.body.data.phone_number, phone);
    assert.equal(consent.body.data.consent_given, true);
    assert.match(consent.body.data.consent_date, ISO);
  });

  it('does not register consent when marketing_consent is false or absent', async () => {
    const phone = '+37061110002';
    for (const body of [sendBody({ destination: phone }), sendBody({ destination: phone, marketing_consent: false })]) {
      const res = await accepted(body);
      assert.equal(res.body.data.marketing_consent_registered, false);
    }
    const consent = await request(t.url, 'GET', `/en/sms/consent/${encodeURIComponent(phone)}`, { headers: apiHeaders(partner.apiKey) });
    assert.equal(consent.status, 404);
  });
});

describe('POST /sms/send: Idempotency-Key', () => {
  it('replays the first response for the same key and body, charging once', async () => {
    const key = `sms-${process.pid}-${Date.now()}`;
    const body = sendBody({ message: 'Once only' });
    const before = await snapshot();
    const first = await send(t, partner, body, { headers: { 'idempotency-key': key } });
    assert.equal(first.status, 200, first.text);
    const second = await send(t, partner, body, { headers: { 'idempotency-key': key } });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(second.body.data.message_id, first.body.data.message_id);
    const { request_id: _a, ...replayed } = second.body;
    const { request_id: _b, ...original } = first.body;
    assert.deepEqual(replayed, original);
    assert.notEqual(second.body.request_id, first.body.request_id);
    assert.equal(second.headers.get('x-sms-encoding'), first.headers.get('x-sms-encoding'));

    const after = await snapshot();
    assert.equal(units(before.balance) - units(after.balance), LT, 'charged once');
    assert.equal(after.messages, before.messages + 1, 'queued once');
  });

  it('refuses the same key with another body (422 INVALID_VALUE), charging nothing', async () => {
    const key = `sms-other-${process.pid}-${Date.now()}`;
    assert.equal((await send(t, partner, sendBody({ message: 'First' }), { headers: { 'idempotency-key': key } })).status, 200);
    const before = await snapshot();
    const res = await send(t, partner, sendBody({ message: 'Second' }), { headers: { 'idempotency-key': key } });
    assert.equal(res.status, 422, res.text);
    assert.equal(res.body.code, 'INVALID_VALUE');
    assert.deepEqual(await snapshot(), before);
  });

  it('a refused send under a key charges nothing and the key can be used once the body is fixed', async () => {
    const key = `sms-fix-${process.pid}-${Date.now()}`;
    await refused(sendBody({ destination: 'abc' }), ['destination'], { headers: { 'idempotency-key': key } });
    const res = await send(t, partner, sendBody(), { headers: { 'idempotency-key': key } });
    assert.equal(res.status, 200, res.text);
  });
});
