// Marketing consent (spec: POST /{locale}/sms/consent, consent record; DESIGN.md §4): opt-in
// returns consent_date, opt-out revoked_at; Shape A (code VALIDATION_ERROR) on phone_number and
// consent_given; GET /{locale}/sms/consent/{phone} returns the current record; every change is
// kept in an append-only history with source, IP, user agent, page URL and time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, request, type Response } from './helpers/http.js';
import { assertShapeA, createSmsPartner, ISO, send, sendBody } from './helpers/sms.js';

let t: TestApp;
let partner: PartnerFixture;

before(async () => {
  t = await startTestApp();
  const admin = await createAdmin(t);
  partner = await createSmsPartner(t, admin, { balance: '1' });
});
after(() => t.close());

function postConsent(body: unknown, locale: 'en' | 'lt' = 'en'): Promise<Response> {
  return request(t.url, 'POST', `/${locale}/sms/consent`, { headers: apiHeaders(partner.apiKey), json: body });
}

function getConsent(phone: string, locale: 'en' | 'lt' = 'en'): Promise<Response> {
  return request(t.url, 'GET', `/${locale}/sms/consent/${encodeURIComponent(phone)}`, { headers: apiHeaders(partner.apiKey) });
}

interface HistoryRow {
  phone: string;
  consent_given: boolean;
  consent_source: string;
  client_ip: string | null;
  client_user_agent: string | null;
  consent_page_url: string | null;
  message_id: string | null;
  created_at: string | Date;
}

async function history(phone: string): Promise<HistoryRow[]> {
  const res = (await t.app.context.database.db.execute(
    sql`select phone, consent_given, consent_source, client_ip, client_user_agent, consent_page_url, message_id, created_at
        from sms_consent_history where partner_id = ${partner.id} and phone = ${phone} order by id`,
  )) as unknown as { rows: HistoryRow[] };
  return res.rows;
}

async function historyCount(): Promise<number> {
  const res = (await t.app.context.database.db.execute(
    sql`select count(*)::int as n from sms_consent_history where partner_id = ${partner.id}`,
  )) as unknown as { rows: Array<{ n: number }> };
  return Number(res.rows[0]!.n);
}

const time = (v: string | Date) => (v instanceof Date ? v.getTime() : Date.parse(v));

describe('POST /sms/consent', () => {
  it('opt-in: 200 with the normalised number, consent_given true, source api by default, consent_date, no revoked_at', async () => {
    const before = Date.now();
    const res = await postConsent({ phone_number: '37061200001', consent_given: true });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.success, true);
    assert.equal(res.body.code, 200);
    assert.equal(typeof res.body.message, 'string');
    const data = res.body.data;
    assert.deepEqual(Object.keys(data).sort(), ['consent_date', 'consent_given', 'consent_source', 'phone_number']);
    assert.equal(data.phone_number, '+37061200001');
    assert.equal(data.consent_given, true);
    assert.equal(data.consent_source, 'api');
    assert.match(data.consent_date, ISO);
    assert.ok(Date.parse(data.consent_date) >= before - 1000 && Date.parse(data.consent_date) <= Date.now() + 1000);
  });

  it('opt-in keeps the given source', async () => {
    for (const consent_source of ['website_form', 'pos', 'app', 'phone_call', 'checkout_page', 'mobile_app', 'pos_terminal']) {
      const res = await postConsent({ phone_number: '+37061200002', consent_given: true, consent_source });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.consent_source, consent_source);
    }
  });

  it('opt-out: revoked_at, consent_given false, no consent_date; GET shows the current record', async () => {
    const phone = '+37061200003';
    const optIn = await postConsent({ phone_number: phone, consent_given: true, consent_source: 'website_form' });
    assert.equal(optIn.status, 200, optIn.text);
    const current = await getConsent(phone);
    assert.equal(current.status, 200, current.text);
    assert.deepEqual(current.body.data, optIn.body.data);

    const optOut = await postConsent({ phone_number: phone, consent_given: false, consent_source: 'phone_call' });
    assert.equal(optOut.status, 200, optOut.text);
    assert.notEqual(optOut.body.message, optIn.body.message);
    const data = optOut.body.data;
    assert.deepEqual(Object.keys(data).sort(), ['consent_given', 'consent_source', 'phone_number', 'revoked_at']);
    assert.equal(data.phone_number, phone);
    assert.equal(data.consent_given, false);
    assert.equal(data.consent_source, 'phone_call');
    assert.match(data.revoked_at, ISO);
    assert.ok(Date.parse(data.revoked_at) >= Date.parse(optIn.body.data.consent_date));

    const after = await getConsent(phone);
    assert.equal(after.status, 200);
    assert.deepEqual(after.body.data, data);

    // Opting in again: consent_date anew, revoked_at gone.
    const again = await postConsent({ phone_number: phone, consent_given: true });
    assert.equal(again.status, 200);
    assert.deepEqual(Object.keys(again.body.data).sort(), ['consent_date', 'consent_given', 'consent_source', 'phone_number']);
    assert.ok(Date.parse(again.body.data.consent_date) >= Date.parse(data.revoked_at));
    assert.deepEqual((await getConsent(phone)).body.data, again.body.data);
  });

  it('an opt-out of a number never seen is recorded too', async () => {
    const res = await postConsent({ phone_number: '+37061200004', consent_given: false });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.consent_given, false);
    assert.match(res.body.data.revoked_at, ISO);
    assert.equal(res.body.data.consent_date, undefined);
    assert.equal((await getConsent('+37061200004')).body.data.consent_given, false);
  });

  describe('validation (Shape A, code VALIDATION_ERROR)', () => {
    async function refused(body: unknown, fields: string[], locale: 'en' | 'lt' = 'en') {
      const before = await historyCount();
      const res = await postConsent(body, locale);
      assertShapeA(res, fields, JSON.stringify(body));
      assert.equal(await historyCount(), before, 'nothing recorded');
      return res;
    }

    it('phone_number missing', async () => {
      await refused({ consent_given: true }, ['phone_number']);
      await refused({ consent_given: false, consent_source: 'pos' }, ['phone_number']);
    });

    it('phone_number invalid', async () => {
      for (const phone_number of ['', 'abc', '123', '+3706', '+999123456789']) {
        await refused({ phone_number, consent_given: true }, ['phone_number']);
      }
    });

    it('phone_number not a string', async () => {
      await refused({ phone_number: 37061234567, consent_given: true }, ['phone_number']);
    });

    it('consent_given missing or not a boolean', async () => {
      await refused({ phone_number: '+37061234567' }, ['consent_given']);
      for (const consent_given of ['true', 'yes', 1, 0, null]) {
        await refused({ phone_number: '+37061234567', consent_given }, ['consent_given']);
      }
    });

    it('both missing: both keys in one response', async () => {
      await refused({}, ['consent_given', 'phone_number']);
    });

    it('both invalid: both keys in one response', async () => {
      await refused({ phone_number: 'abc', consent_given: 'no' }, ['consent_given', 'phone_number']);
    });

    it('the optional fields are checked too', async () => {
      await refused({ phone_number: '+37061234567', consent_given: true, consent_page_url: 'not a url' }, ['consent_page_url']);
      await refused({ phone_number: '+37061234567', consent_given: true, consent_source: '' }, ['consent_source']);
      await refused({ phone_number: '+37061234567', consent_given: true, client_ip: 5 }, ['client_ip']);
    });

    it('in the locale of the path', async () => {
      const en = await refused({ phone_number: 'abc' }, ['consent_given', 'phone_number'], 'en');
      const lt = await refused({ phone_number: 'abc' }, ['consent_given', 'phone_number'], 'lt');
      assert.notEqual(en.body.message, lt.body.message);
      assert.notEqual(en.body.errors.phone_number[0], lt.body.errors.phone_number[0]);
    });
  });

  it('requires API credentials', async () => {
    const res = await request(t.url, 'POST', '/en/sms/consent', { json: { phone_number: '+37061234567', consent_given: true } });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 1004);
  });
});

describe('GET /sms/consent/{phone}', () => {
  it('finds the record with or without the plus sign', async () => {
    const phone = '+37061200010';
    assert.equal((await postConsent({ phone_number: phone, consent_given: true })).status, 200);
    for (const form of [phone, '37061200010']) {
      const res = await getConsent(form);
      assert.equal(res.status, 200, `${form}: ${res.text}`);
      assert.equal(res.body.data.phone_number, phone);
      assert.equal(res.body.data.consent_given, true);
    }
  });

  it('answers an unknown or invalid phone with 404', async () => {
    for (const phone of ['+37061299999', 'abc', '123']) {
      const res = await getConsent(phone);
      assert.equal(res.status, 404, `${phone}: ${res.text}`);
      assert.equal(res.body.success, false);
      assert.equal(typeof res.body.message, 'string');
      assert.equal(res.body.data, undefined);
    }
  });
});

describe('consent history (append-only)', () => {
  it('keeps every change with source, client IP, user agent, page URL and time, in order', async () => {
    const phone = '+37061200020';
    const steps = [
      {
        phone_number: phone,
        consent_given: true,
        consent_source: 'website_form',
        client_ip: '203.0.113.10',
        client_user_agent: 'Mozilla/5.0 (Windows NT 10.0)',
        consent_page_url: 'https://shop.example.com/newsletter',
      },
      { phone_number: '37061200020', consent_given: false, consent_source: 'phone_call', client_ip: '2001:db8::1' },
      { phone_number: phone, consent_given: true },
    ];
    const answers: Response[] = [];
    for (const step of steps) {
      answers.push(await postConsent(step));
      assert.equal(answers.at(-1)!.status, 200, answers.at(-1)!.text);
    }
    const rows = await history(phone);
    assert.equal(rows.length, 3);
    assert.deepEqual(
      rows.map((r) => [r.phone, r.consent_given, r.consent_source, r.client_ip, r.client_user_agent, r.consent_page_url, r.message_id]),
      [
        [phone, true, 'website_form', '203.0.113.10', 'Mozilla/5.0 (Windows NT 10.0)', 'https://shop.example.com/newsletter', null],
        [phone, false, 'phone_call', '2001:db8::1', null, null, null],
        [phone, true, 'api', null, null, null, null],
      ],
    );
    for (let i = 1; i < rows.length; i++) assert.ok(time(rows[i]!.created_at) >= time(rows[i - 1]!.created_at), 'in time order');
    assert.equal(time(rows[0]!.created_at), Date.parse(answers[0]!.body.data.consent_date));
    assert.equal(time(rows[1]!.created_at), Date.parse(answers[1]!.body.data.revoked_at));
    // The current record is the last change.
    assert.deepEqual((await getConsent(phone)).body.data, answers[2]!.body.data);
  });

  it('records consent given with a send, with the message id and the end user details', async () => {
    const phone = '+37061200030';
    const res = await send(
      t,
      partner,
      sendBody({
        destination: phone,
        marketing_consent: true,
        client_ip: '198.51.100.23',
        client_user_agent: 'POS/1.0',
        consent_page_url: 'https://shop.example.com/checkout',
      }),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.marketing_consent_registered, true);
    const rows = await history(phone);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.consent_given, true);
    assert.equal(rows[0]!.client_ip, '198.51.100.23');
    assert.equal(rows[0]!.client_user_agent, 'POS/1.0');
    assert.equal(rows[0]!.consent_page_url, 'https://shop.example.com/checkout');
    assert.equal(rows[0]!.message_id, res.body.data.message_id);
    const current = await getConsent(phone);
    assert.equal(current.body.data.consent_given, true);
  });

  it('cannot be changed or deleted through the API: a refused request leaves no row', async () => {
    const phone = '+37061200040';
    assert.equal((await postConsent({ phone_number: phone, consent_given: true })).status, 200);
    assert.equal((await postConsent({ phone_number: phone, consent_given: 'maybe' })).status, 422);
    assert.equal((await history(phone)).length, 1);
    for (const method of ['DELETE', 'PUT', 'PATCH']) {
      const res = await request(t.url, method, `/en/sms/consent/${encodeURIComponent(phone)}`, {
        headers: apiHeaders(partner.apiKey),
        ...(method === 'DELETE' ? {} : { json: { consent_given: false } }),
      });
      assert.equal(res.status, 404, `${method}: ${res.text}`);
    }
    assert.equal((await history(phone)).length, 1);
    assert.equal((await getConsent(phone)).body.data.consent_given, true);
  });
});
