// Nothing that opens a channel or names a person reaches the log (DESIGN.md §16, issue 20):
// the application logs at info to a stream this test reads while a till and an app go
// through an app sign-in by SMS code, a QR login (with the till on the session's channel), a
// QR card share, a game play, SMS consent and a few failed requests carrying such values in
// their paths and query strings. Afterwards no session id, scan code, session key, OTP code,
// phone number (as typed or E.164) or customer token appears anywhere in the log, while the
// request lines name each
// route pattern — so the test cannot pass by logging nothing.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { smsMessages } from '../src/modules/sms/sms.tables.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, type PartnerFixture } from './helpers/fixtures.js';
import { apiHeaders, bearer, request } from './helpers/http.js';
import { claimReward, createGame, progress, startGame } from './helpers/engagement.js';
import { createCustomer, createProgramme, createShop, joinProgramme } from './helpers/loyalty.js';
import { connectPusher, nextEvent, subscribe, type Pusher } from './helpers/realtime.js';
import { createSmsPartner } from './helpers/sms.js';

interface LogLine {
  msg: string;
  req?: { method: string; route: string; params?: Record<string, unknown> };
  res?: { statusCode: number };
  err?: { type: string; message: string; stack: string; code?: string; cause?: { message: string; code?: string } };
}

describe('secrets and personal data never reach the log', () => {
  const written: string[] = [];
  let t: TestApp;
  let p: PartnerFixture;
  let pusher: Pusher;
  /** Every value the log must never hold, with what it is. */
  const secrets = new Map<string, string>();
  const keep = (what: string, value: string) => {
    assert.ok(value.length >= 8, `${what} is long enough to grep for: ${value}`);
    secrets.set(value, what);
  };
  /** Six-digit codes, looked for where a value can be (not in times, durations or ports). */
  const codes = new Map<string, string>();
  const codeOf = (qrContent: string) => qrContent.slice(qrContent.lastIndexOf('/') + 1);
  // Lithuanian mobile numbers nobody else uses in this run; their last 8 digits are in every
  // form of the number (E.164, 370…, 86…, with spaces only between other digits).
  const newPhone = () => `+3706${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;

  before(async () => {
    // No background workers: the code stays readable in the queued SMS (dispatch masks it).
    t = await startTestApp({ LOG_LEVEL: 'info' }, undefined, {
      workers: false,
      logStream: { write: (line: string) => void written.push(line) },
    });
    const admin = await createAdmin(t);
    p = await createSmsPartner(t, admin, { balance: '1' });
    pusher = await connectPusher(t);
  });
  after(async () => {
    pusher?.disconnect();
    await t?.close();
  });

  const lines = (): LogLine[] => written.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as LogLine);
  const completed = (route: string) => lines().filter((l) => l.msg === 'request completed' && l.req?.route === route);
  /** Logs are written as the response goes; wait for a route's lines. */
  async function requestLines(route: string, atLeast = 1): Promise<LogLine[]> {
    for (let i = 0; i < 100 && completed(route).length < atLeast; i++) await new Promise((r) => setTimeout(r, 20));
    const found = completed(route);
    assert.ok(found.length >= atLeast, `a request line for ${route}:\n${written.join('')}`);
    return found;
  }

  it('app sign-in: a code by SMS to the number as typed, verified for a token', async () => {
    const phone = newPhone();
    keep('signing-in phone (E.164)', phone);
    keep('signing-in phone (as typed)', phone.slice(1));
    keep('signing-in phone (digits)', phone.slice(-8));
    const asked = await request(t.url, 'POST', '/en/app/auth/otp/request', { json: { phone: phone.slice(1) } });
    assert.equal(asked.status, 200, asked.text);
    const [sms] = await t.app.context.database.db
      .select()
      .from(smsMessages)
      .where(and(eq(smsMessages.destination, phone), isNull(smsMessages.partnerId)))
      .orderBy(desc(smsMessages.createdAt));
    const code = /\b(\d{6})\b/.exec(sms!.body)?.[1];
    assert.ok(code, JSON.stringify(sms));
    codes.set(code, 'OTP code');
    const wrong = code === '000000' ? '111111' : '000000';
    codes.set(wrong, 'wrong OTP code');
    assert.equal((await request(t.url, 'POST', '/en/app/auth/otp/verify', { json: { phone, code: wrong } })).status, 401);
    const verified = await request(t.url, 'POST', '/en/app/auth/otp/verify', { json: { phone, code } });
    assert.equal(verified.status, 200, verified.text);
    keep('app token from OTP', verified.body.data.token);
    await requestLines('/:locale/app/auth/otp/request');
    await requestLines('/:locale/app/auth/otp/verify', 2);
  });

  it('QR login: generate, the channel, scan, confirm, poll', async () => {
    const shop = await createShop(t, p.id, 'Kavinė');
    await createProgramme(t, p.id, { autoAssign: true, initialBonusPoints: 5 });
    const gen = await request(t.url, 'POST', '/en/shop/auth/qr-login/generate', { headers: apiHeaders(p.apiKey), json: { device_name: 'Till 1', shop_id: shop } });
    assert.equal(gen.status, 200, gen.text);
    const { session_id, qr_content, channel } = gen.body.data;
    keep('QR login session id', session_id);
    keep('QR login scan code', codeOf(qr_content));
    const c = await createCustomer(t);
    keep("customer's app token", c.token);
    keep("customer's phone", c.phone);
    keep("customer's phone (digits)", c.phone.slice(-8));

    const live = await subscribe(pusher, channel);
    const poll = () => request(t.url, 'POST', `/en/shop/auth/qr-login/poll/${session_id}`, { headers: apiHeaders(p.apiKey) });
    assert.equal((await poll()).body.data.status, 'pending');
    const scan = await request(t.url, 'POST', '/en/app/qr-login/scan', { headers: bearer(c.token), json: { code: qr_content } });
    assert.equal(scan.status, 200, scan.text);
    const authenticated = nextEvent<{ status: string; token: string }>(live, 'status_update', 5000);
    const confirm = await request(t.url, 'POST', '/lt/app/qr-login/confirm', { headers: bearer(c.token), json: { code: codeOf(qr_content) } });
    assert.equal(confirm.status, 200, confirm.text);
    let event = await authenticated;
    // (the scanned event may arrive first)
    if (event.status !== 'authenticated') event = await nextEvent(live, 'status_update', 5000);
    assert.equal(event.status, 'authenticated');
    keep('customer token from the channel', event.token);
    const first = await poll();
    assert.equal(first.body.data.status, 'authenticated');
    keep('customer token from the poll', first.body.data.token);
    const me = await request(t.url, 'GET', '/en/shop/auth/me', { headers: bearer(first.body.data.token) });
    assert.equal(me.status, 200, me.text);

    const [pollLine] = await requestLines('/:locale/shop/auth/qr-login/poll/:session_id', 2);
    assert.equal(pollLine!.req!.method, 'POST');
    assert.deepEqual(pollLine!.req!.params, { locale: 'en' }, 'the session id is not among the parameters');
    await requestLines('/:locale/shop/auth/qr-login/generate');
    await requestLines('/:locale/app/qr-login/scan');
    await requestLines('/:locale/app/qr-login/confirm');
  });

  it('QR card: generate, share a card, the till reads it', async () => {
    const programme = await createProgramme(t, p.id);
    const c = await createCustomer(t);
    keep("card holder's phone", c.phone);
    keep("card holder's app token", c.token);
    const card = await joinProgramme(t, c, programme);
    const gen = await request(t.url, 'POST', '/en/shop/qr-card/generate', { headers: apiHeaders(p.apiKey) });
    assert.equal(gen.status, 200, gen.text);
    const { session_id, qr_content } = gen.body.data;
    keep('QR card session id', session_id);
    keep('QR card scan code', codeOf(qr_content));
    const share = await request(t.url, 'POST', '/en/app/qr-card/scan', { headers: bearer(c.token), json: { code: codeOf(qr_content), card_id: card.id } });
    assert.equal(share.status, 200, share.text);
    const status = await request(t.url, 'GET', `/en/shop/qr-card/status/${session_id}`, { headers: apiHeaders(p.apiKey) });
    assert.equal(status.body.data.card.card.id, card.id);

    const [statusLine] = await requestLines('/:locale/shop/qr-card/status/:sessionId');
    assert.deepEqual(statusLine!.req!.params, { locale: 'en' });
    await requestLines('/:locale/app/qr-card/scan');
  });

  it('a game: start, progress and claim under the session key', async () => {
    const programme = await createProgramme(t, p.id);
    const game = await createGame(t, p, { partner_card_id: programme, rewards: [{ label: 'Prize', probability: 1, reward_type: 'points', points: 3 }] });
    const c = await createCustomer(t);
    keep("player's app token", c.token);
    await joinProgramme(t, c, programme);
    const started = await startGame(t, c, game.id);
    assert.equal(started.status, 201, started.text);
    const { session_key, channel } = started.body.data;
    keep('game session key', session_key);
    await subscribe(pusher, channel);
    assert.equal((await progress(t, bearer(c.token), session_key, { progress: 40 })).status, 200);
    assert.equal((await progress(t, bearer(c.token), session_key, { progress: 100, completed: true })).status, 200);
    const claimed = await claimReward(t, bearer(c.token), session_key);
    assert.equal(claimed.status, 200, claimed.text);
    assert.equal((await claimReward(t, bearer(c.token), session_key)).status, 409);

    // A validated id of the caller's own records is kept.
    const [startLine] = await requestLines('/:locale/shop/games/:id/start');
    assert.deepEqual(startLine!.req!.params, { locale: 'en', id: game.id });
    const progressLines = await requestLines('/:locale/shop/games/sessions/:sessionKey/progress', 2);
    assert.ok(progressLines.every((l) => l.req!.params === undefined || !('sessionKey' in l.req!.params)));
    const claims = await requestLines('/:locale/shop/games/sessions/:sessionKey/claim-reward', 2);
    assert.deepEqual(claims.map((l) => l.res!.statusCode).sort(), [200, 409]);
  });

  it('SMS consent: written and read back by phone number, as typed and in E.164', async () => {
    const phone = newPhone();
    keep('consent phone (E.164)', phone);
    keep('consent phone (as typed)', phone.slice(1));
    keep('consent phone (digits)', phone.slice(-8));
    const given = await request(t.url, 'POST', '/en/sms/consent', { headers: apiHeaders(p.apiKey), json: { phone_number: phone.slice(1), consent_given: true } });
    assert.equal(given.status, 200, given.text);
    assert.equal(given.body.data.phone_number, phone);
    for (const form of [phone, phone.slice(1), `8${phone.slice(4)}`]) {
      const read = await request(t.url, 'GET', `/en/sms/consent/${encodeURIComponent(form)}`, { headers: apiHeaders(p.apiKey) });
      assert.ok(read.status === 200 || read.status === 404 || read.status === 422, read.text);
    }
    const typedWithSpaces = `+370 ${phone.slice(4, 7)} ${phone.slice(7)}`;
    const search = await request(t.url, 'GET', `/en/partners/customers?search=${encodeURIComponent(typedWithSpaces)}`, { headers: bearer(p.token) });
    assert.equal(search.status, 200, search.text);
    secrets.set(typedWithSpaces, 'phone typed with spaces');

    const lines = await requestLines('/:locale/sms/consent/:phone', 3);
    assert.ok(lines.every((l) => l.req!.params === undefined || !('phone' in l.req!.params)));
    await requestLines('/:locale/sms/consent');
    await requestLines('/:locale/partners/customers');
  });

  it('failed requests: unknown sessions, an unmatched path, an undecodable path and an over-long parameter', async () => {
    const phone = newPhone();
    keep('phone in a failed request', phone);
    keep('phone in a failed request (digits)', phone.slice(-8));
    const guessed = 'Zm9yZ2VkLXNlc3Npb24taWQtMTIz';
    keep('a guessed session id', guessed);
    const api = apiHeaders(p.apiKey);
    const unknown = await request(t.url, 'POST', `/en/shop/auth/qr-login/poll/${guessed}?phone=${encodeURIComponent(phone)}`, { headers: api });
    assert.equal(unknown.status, 404);
    const wrongLocale = await request(t.url, 'POST', `/${encodeURIComponent(phone)}/shop/auth/qr-login/poll/${guessed}`, { headers: api });
    assert.equal(wrongLocale.status, 404);
    const unmatched = await request(t.url, 'GET', `/en/shop/no-such-thing/${guessed}/${encodeURIComponent(phone)}?token=${guessed}`, { headers: api });
    assert.equal(unmatched.status, 404);
    // A phone where an id goes: refused by the schema, and the value is not logged as an id.
    const notAnId = await request(t.url, 'GET', `/en/partners/shops/${phone.slice(1)}`, { headers: bearer(p.token) });
    assert.equal(notAnId.status, 404);
    const undecodable = await request(t.url, 'GET', `/en/sms/consent/${encodeURIComponent(phone)}%FF`, { headers: api });
    assert.equal(undecodable.status, 400);
    const tooLong = `${guessed}${'x'.repeat(200)}`;
    const overLong = await request(t.url, 'POST', `/en/shop/auth/qr-login/poll/${tooLong}`, { headers: api });
    assert.equal(overLong.status, 404);

    const rejected = lines().filter((l) => l.msg === 'request rejected' && l.req?.route === '(no route)');
    assert.deepEqual(rejected.map((l) => (l as { code?: string }).code).sort(), ['FST_ERR_BAD_URL', 'FST_ERR_MAX_PARAM_LENGTH']);
    const unmatchedLines = await requestLines('(no route)');
    assert.ok(unmatchedLines.some((l) => l.req!.method === 'GET' && l.res!.statusCode === 404));
    const [refused] = await requestLines('/:locale/partners/shops/:id');
    assert.equal(refused!.req!.params, undefined, 'a failed request keeps no parameter');
  });

  it('an error with values (a failed query) is logged by kind and place, without them', async () => {
    const phone = newPhone();
    keep('phone in a failed query', phone);
    let failure: unknown;
    try {
      await t.app.context.database.db.execute(sql`select ${phone}::integer as n`);
    } catch (err) {
      failure = err;
    }
    assert.ok(failure instanceof Error);
    assert.ok(String(failure).includes(phone) || JSON.stringify(failure).includes(phone) || String((failure as Error).cause).includes(phone), 'the error itself holds the value');
    t.app.fastify.log.error({ err: failure }, 'unhandled error');
    const [line] = lines().filter((l) => l.msg === 'unhandled error');
    assert.ok(line?.err, written.join(''));
    assert.match(line.err.message, /select \$1::integer/, 'the statement is named');
    assert.match(line.err.stack, /\n {4}at /, 'where it was thrown');
    assert.equal(line.err.cause?.code, '22003', "the database's own code");
    assert.match(line.err.cause!.message, /out of range for type integer/, "the database's own message, its value left out");
  });

  it('none of those values is anywhere in the log', async () => {
    // The lines of the last requests are written as their responses go.
    await new Promise((r) => setTimeout(r, 50));
    const log = written.join('');
    assert.ok(secrets.size >= 20, `${secrets.size} values collected`);
    const leaked = [...secrets].filter(([value]) => log.includes(value)).map(([value, what]) => `${what}: ${value}`);
    assert.deepEqual(leaked, [], `in the log:\n${log}`);
    // Short codes: in anything but the numbers every line has (time, pid, port, duration).
    const values = lines()
      .map((l) => JSON.stringify({ ...l, time: 0, pid: 0, responseTime: 0, req: l.req && { ...l.req, remotePort: 0 } }))
      .join('\n');
    const leakedCodes = [...codes].filter(([value]) => values.includes(value)).map(([value, what]) => `${what}: ${value}`);
    assert.deepEqual(leakedCodes, [], `in the log:\n${values}`);
  });
});
