// Partner cards (spec "Partner card" resource and "Partner cards (partner JWT)" endpoints,
// DESIGN.md §3): every validation rule as one 422 with Shape A dotted keys, the exact field
// set of each response, the documented defaults, pagination, the deprecation header,
// soft delete, 404/401/403 and Idempotency-Key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createAdmin, createPartner, type AdminFixture, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request, type Response } from './helpers/http.js';

const CREATED_KEYS = ['created_at', 'default_coupon_validity_days', 'description', 'id', 'is_active', 'title', 'updated_at'];
const LIST_ITEM_KEYS = ['created_at', 'default_coupon_validity_days', 'id', 'is_active', 'title', 'updated_at'];
const FULL_KEYS = [
  'auto_assign',
  'card_design',
  'created_at',
  'currency_amount',
  'currency_amount_redemption',
  'default_coupon_validity_days',
  'description',
  'id',
  'initial_bonus_points',
  'is_active',
  'max_points_per_purchase',
  'max_points_per_redemption',
  'min_points_for_redemption',
  'min_points_per_purchase',
  'points_enabled',
  'points_expiration_days',
  'points_per_currency',
  'points_per_currency_redemption',
  'points_per_visit',
  'points_redemption_enabled',
  'round_points_up',
  'shop_ids',
  'terms_conditions',
  'tier_basis',
  'tier_downgrade',
  'tier_time_zone',
  'tier_window',
  'title',
  'updated_at',
];

/** docs/decisions.md "Partner card programme defaults". */
const DOCUMENTED_DEFAULTS = {
  is_active: true,
  shop_ids: [],
  auto_assign: true,
  points_enabled: true,
  initial_bonus_points: 0,
  points_expiration_days: null,
  points_per_currency: 1,
  currency_amount: 1,
  round_points_up: false,
  min_points_per_purchase: 0,
  max_points_per_purchase: null,
  points_per_visit: 0,
  points_redemption_enabled: false,
  points_per_currency_redemption: 100,
  currency_amount_redemption: 1,
  min_points_for_redemption: 0,
  max_points_per_redemption: null,
  default_coupon_validity_days: null,
  tier_basis: 'points_earned',
  tier_window: 'rolling_12_months',
  tier_downgrade: 'end_of_window',
  tier_time_zone: 'Europe/Vilnius',
};

const MAGIC = {
  png: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  gif: Buffer.from('GIF89a', 'latin1'),
  webp: Buffer.concat([Buffer.from('RIFF', 'latin1'), Buffer.alloc(4), Buffer.from('WEBPVP8 ', 'latin1')]),
};
/** An image of `type` whose decoded size is exactly `bytes`. */
function image(type: keyof typeof MAGIC, bytes = 64, declared: string = type): string {
  const data = Buffer.concat([MAGIC[type], Buffer.alloc(bytes - MAGIC[type].length, 7)]);
  return `data:image/${declared};base64,${data.toString('base64')}`;
}

const minimal = () => ({
  title: { en: 'Coffee card', lt: 'Kavos kortelė' },
  description: { en: 'Every tenth coffee free' },
  terms_conditions: { en: 'Terms apply' },
  card_design: {},
});

const keysOf = (o: object) => Object.keys(o).sort();

function assertInvalid(res: Response, fields: string[], label = '') {
  assert.equal(res.status, 422, `${label}: ${res.text}`);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, 422);
  assert.equal(typeof res.body.message, 'string');
  assert.equal(typeof res.body.request_id, 'string');
  assert.ok(res.body.errors && !Array.isArray(res.body.errors), `${label}: Shape A`);
  assert.deepEqual(keysOf(res.body.errors), [...fields].sort(), `${label}: ${res.text}`);
  for (const messages of Object.values(res.body.errors)) {
    assert.ok(Array.isArray(messages) && messages.length > 0 && messages.every((m) => typeof m === 'string' && m.length > 0));
  }
  assert.equal(res.body.data, undefined);
}

function assertNotFound(res: Response, label = '') {
  assert.equal(res.status, 404, `${label}: ${res.text}`);
  assert.equal(res.body.success, false);
  assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
  assert.equal(res.body.data, undefined);
}

describe('partner cards', () => {
  let t: TestApp;
  let p: PartnerFixture;
  let other: PartnerFixture;
  let admin: AdminFixture;
  let customerToken: string;
  let shops: number[];
  let otherShop: number;

  before(async () => {
    t = await startTestApp();
    p = await createPartner(t);
    other = await createPartner(t);
    admin = await createAdmin(t);
    customerToken = (await t.app.context.tokens.sign({ kind: 'customer', subject: 1 })).token;
    shops = [];
    for (const name of ['North', 'South', 'East']) shops.push((await t.app.context.services.shops.create(p.id, { name })).id);
    otherShop = (await t.app.context.services.shops.create(other.id, { name: 'Elsewhere' })).id;
  });
  after(() => t.close());

  const post = (json: unknown, who: PartnerFixture = p, headers: Record<string, string> = {}, locale = 'en') =>
    request(t.url, 'POST', `/${locale}/partners/cards`, { headers: { ...bearer(who.token), ...headers }, json });
  const get = (id: number, who: PartnerFixture = p, locale = 'en') => request(t.url, 'GET', `/${locale}/partners/cards/${id}`, { headers: bearer(who.token) });
  const put = (id: number, json: unknown, who: PartnerFixture = p) => request(t.url, 'PUT', `/en/partners/cards/${id}`, { headers: bearer(who.token), json });
  const del = (id: number, who: PartnerFixture = p) => request(t.url, 'DELETE', `/en/partners/cards/${id}`, { headers: bearer(who.token) });
  const list = (query = '', who: PartnerFixture = p) => request(t.url, 'GET', `/en/partners/cards${query}`, { headers: bearer(who.token) });

  async function create(json: unknown = minimal(), who: PartnerFixture = p): Promise<number> {
    const res = await post(json, who);
    assert.equal(res.status, 201, res.text);
    return res.body.data.id;
  }

  describe('POST /{locale}/partners/cards', () => {
    it('creates from the required fields only: 201, code 201, data = exactly the spec fields', async () => {
      const res = await post(minimal());
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.success, true);
      assert.equal(res.body.code, 201);
      assert.equal(typeof res.body.message, 'string');
      assert.equal(res.body.request_id, res.headers.get('x-request-id'));
      assert.deepEqual(keysOf(res.body.data), CREATED_KEYS);
      const d = res.body.data;
      assert.ok(Number.isInteger(d.id) && d.id > 0);
      assert.deepEqual(d.title, minimal().title);
      assert.deepEqual(d.description, minimal().description);
      assert.equal(d.is_active, true);
      assert.equal(d.default_coupon_validity_days, null);
      assert.ok(!Number.isNaN(Date.parse(d.created_at)) && d.created_at.endsWith('Z'));
      assert.equal(d.updated_at, d.created_at);
      assert.equal(res.headers.get('deprecation'), null, 'the deprecated field was not sent');
    });

    it('gives every omitted optional field its documented default', async () => {
      const id = await create();
      const res = await get(id);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(keysOf(res.body.data), FULL_KEYS);
      const { id: _id, title, description, terms_conditions, card_design, created_at: _c, updated_at: _u, ...rest } = res.body.data;
      assert.deepEqual(rest, DOCUMENTED_DEFAULTS);
      assert.deepEqual({ title, description, terms_conditions, card_design }, minimal());
    });

    it('stores every field of the resource and GET returns it as sent', async () => {
      const body = {
        title: { en: 'Gold', lt: 'Auksinė' },
        description: { en: 'For regulars', lt: 'Nuolatiniams', de: 'Für Stammkunden' },
        terms_conditions: { en: 'Points expire', lt: 'Taškai galioja' },
        card_design: {
          logo: image('png'),
          text_color: '#FFFFFF',
          text_color_labels: '#cccccc',
          qr_background_color: '#000000',
          qr_color: '#1E3A8A',
          background_color: '#123abc',
          background_color_opacity: 0.85,
          background_image: image('webp', 200),
        },
        is_active: false,
        shop_ids: [shops[2], shops[0]],
        auto_assign: false,
        points_enabled: false,
        initial_bonus_points: 50,
        points_expiration_days: 365,
        points_per_currency: 1.5,
        currency_amount: 0.0001,
        round_points_up: true,
        min_points_per_purchase: 1,
        max_points_per_purchase: 1000,
        points_per_visit: 2,
        points_redemption_enabled: true,
        points_per_currency_redemption: 99.9999,
        currency_amount_redemption: 2.25,
        min_points_for_redemption: 10,
        max_points_per_redemption: 10,
        default_coupon_validity_days: 3650,
        tier_basis: 'amount_spent',
        tier_window: 'calendar_year',
        tier_downgrade: 'never',
        tier_time_zone: 'America/New_York',
      };
      const created = await post(body);
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.data.is_active, false);
      assert.equal(created.body.data.default_coupon_validity_days, 3650);
      const res = await get(created.body.data.id);
      const { id: _id, created_at: _c, updated_at: _u, ...stored } = res.body.data;
      assert.deepEqual(stored, { ...body, shop_ids: [shops[0], shops[2]] }, 'shop ids come back ascending');
    });

    it('accepts each image type, null design fields (not set) and the limits exactly', async () => {
      for (const type of ['png', 'jpeg', 'gif', 'webp'] as const) {
        const res = await post({ ...minimal(), card_design: { logo: image(type), background_image: image(type) } });
        assert.equal(res.status, 201, `${type}: ${res.text}`);
      }
      const id = await create({ ...minimal(), card_design: { logo: null, text_color: null, background_color: '#000000', background_color_opacity: 0 } });
      assert.deepEqual((await get(id)).body.data.card_design, { background_color: '#000000', background_color_opacity: 0 });
      const edges = {
        ...minimal(),
        title: { en: 'e'.repeat(255), lt: 'ą'.repeat(255) },
        card_design: { background_color_opacity: 1 },
        points_expiration_days: 1,
        default_coupon_validity_days: 1,
        max_points_per_purchase: 0,
        max_points_per_redemption: 0,
        shop_ids: [],
      };
      assert.equal((await post(edges)).status, 201);
    });

    it('takes a legal card at every size limit (route body limit raised for the images)', async () => {
      const texts = Object.fromEntries(['en', 'lt', 'de', 'fr', 'pl'].map((l) => [l, '€'.repeat(10_000)]));
      const body = {
        ...minimal(),
        description: texts,
        terms_conditions: texts,
        card_design: { logo: image('png', 512 * 1024), background_image: image('jpeg', 2 * 1024 * 1024) },
      };
      assert.ok(JSON.stringify(body).length > 1024 * 1024 * 3, 'well over the 1 MiB default limit');
      const res = await post(body);
      assert.equal(res.status, 201, res.text.slice(0, 500));
      const card = await get(res.body.data.id);
      assert.equal(card.body.data.card_design.background_image, body.card_design.background_image);
      assert.equal(card.body.data.description.lt, texts.lt);
    });

    it('refuses a body over the route limit with 400 naming that limit', async () => {
      const huge = { ...minimal(), card_design: { background_image: `data:image/png;base64,${'A'.repeat(12 * 1024 * 1024)}` } };
      const res = await post(huge);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 400);
      const limit = Number(/(\d+)/.exec(res.body.message)?.[1]);
      assert.ok(limit > 3 * 1024 * 1024 && limit < 12 * 1024 * 1024, res.body.message);
    });

    const png = image('png');
    const cases: Array<[label: string, body: Record<string, unknown>, keys: string[]]> = [
      ['no body fields', {}, ['title', 'description', 'terms_conditions', 'card_design']],
      ['title missing', { title: undefined }, ['title']],
      ['title not an object', { title: 'Coffee' }, ['title']],
      ['title.en missing', { title: { lt: 'Kava' } }, ['title.en']],
      ['title.lt missing', { title: { en: 'Coffee' } }, ['title.lt']],
      ['title both missing', { title: {} }, ['title.en', 'title.lt']],
      ['title.en empty', { title: { en: '', lt: 'Kava' } }, ['title.en']],
      ['title.lt blank', { title: { en: 'Coffee', lt: '   ' } }, ['title.lt']],
      ['title.lt 256 chars', { title: { en: 'Coffee', lt: 'x'.repeat(256) } }, ['title.lt']],
      ['title.en a number', { title: { en: 5, lt: 'Kava' } }, ['title.en']],
      ['title.en with U+0000', { title: { en: 'Cof\u0000fee', lt: 'Kava' } }, ['title.en']],
      ['description missing', { description: undefined }, ['description']],
      ['description a string', { description: 'text' }, ['description']],
      ['description key not a language code', { description: { english: 'text' } }, ['description']],
      ['description value a number', { description: { en: 5 } }, ['description.en']],
      ['description text too long', { description: { en: 'x'.repeat(10_001) } }, ['description.en']],
      ['description with 21 languages', { description: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`a${String.fromCharCode(97 + i)}`, 'x'])) }, ['description']],
      ['terms_conditions missing', { terms_conditions: undefined }, ['terms_conditions']],
      ['terms_conditions an array', { terms_conditions: ['x'] }, ['terms_conditions']],
      ['terms_conditions bad key', { terms_conditions: { EN: 'x' } }, ['terms_conditions']],
      ['card_design missing', { card_design: undefined }, ['card_design']],
      ['card_design not an object', { card_design: '#FFFFFF' }, ['card_design']],
      ['text_color a name', { card_design: { text_color: 'red' } }, ['card_design.text_color']],
      ['text_color_labels short', { card_design: { text_color_labels: '#FFF' } }, ['card_design.text_color_labels']],
      ['qr_background_color no hash', { card_design: { qr_background_color: 'FFFFFF' } }, ['card_design.qr_background_color']],
      ['qr_color non-hex', { card_design: { qr_color: '#GGGGGG' } }, ['card_design.qr_color']],
      ['background_color with alpha', { card_design: { background_color: '#FFFFFF00' } }, ['card_design.background_color']],
      ['background_color_opacity over 1', { card_design: { background_color_opacity: 1.5 } }, ['card_design.background_color_opacity']],
      ['background_color_opacity negative', { card_design: { background_color_opacity: -0.1 } }, ['card_design.background_color_opacity']],
      ['background_color_opacity a string', { card_design: { background_color_opacity: '0.5' } }, ['card_design.background_color_opacity']],
      ['logo an URL', { card_design: { logo: 'https://example.com/logo.png' } }, ['card_design.logo']],
      ['logo SVG', { card_design: { logo: `data:image/svg+xml;base64,${Buffer.from('<svg/>').toString('base64')}` } }, ['card_design.logo']],
      ['logo PNG bytes declared JPEG', { card_design: { logo: image('png', 64, 'jpeg') } }, ['card_design.logo']],
      ['logo text declared PNG', { card_design: { logo: `data:image/png;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')}` } }, ['card_design.logo']],
      ['logo not base64', { card_design: { logo: 'data:image/png;base64,iVBO!!!=' } }, ['card_design.logo']],
      ['logo empty data', { card_design: { logo: 'data:image/png;base64,' } }, ['card_design.logo']],
      ['logo over 512 KiB', { card_design: { logo: image('png', 512 * 1024 + 1) } }, ['card_design.logo']],
      ['background_image GIF declared WebP', { card_design: { background_image: image('gif', 64, 'webp') } }, ['card_design.background_image']],
      ['background_image over 2 MiB', { card_design: { background_image: image('png', 2 * 1024 * 1024 + 1) } }, ['card_design.background_image']],
      ['is_active a string', { is_active: 'yes' }, ['is_active']],
      ['auto_assign a number', { auto_assign: 1 }, ['auto_assign']],
      ['points_enabled null', { points_enabled: null }, ['points_enabled']],
      ['round_points_up a string', { round_points_up: 'true' }, ['round_points_up']],
      ['points_redemption_enabled a string', { points_redemption_enabled: 'no' }, ['points_redemption_enabled']],
      ['initial_bonus_points negative', { initial_bonus_points: -1 }, ['initial_bonus_points']],
      ['initial_bonus_points fractional', { initial_bonus_points: 1.5 }, ['initial_bonus_points']],
      ['points_expiration_days 0', { points_expiration_days: 0 }, ['points_expiration_days']],
      ['points_expiration_days a string', { points_expiration_days: '30' }, ['points_expiration_days']],
      ['points_per_currency 0', { points_per_currency: 0 }, ['points_per_currency']],
      ['points_per_currency negative', { points_per_currency: -1 }, ['points_per_currency']],
      ['points_per_currency 5 decimals', { points_per_currency: 1.23456 }, ['points_per_currency']],
      ['points_per_currency a string', { points_per_currency: '1' }, ['points_per_currency']],
      ['currency_amount 0', { currency_amount: 0 }, ['currency_amount']],
      ['currency_amount tiny', { currency_amount: 0.00001 }, ['currency_amount']],
      ['points_per_currency_redemption negative', { points_per_currency_redemption: -5 }, ['points_per_currency_redemption']],
      ['currency_amount_redemption 0', { currency_amount_redemption: 0 }, ['currency_amount_redemption']],
      ['currency_amount_redemption 5 decimals', { currency_amount_redemption: 0.12345 }, ['currency_amount_redemption']],
      ['min_points_per_purchase negative', { min_points_per_purchase: -1 }, ['min_points_per_purchase']],
      ['max_points_per_purchase negative', { max_points_per_purchase: -1 }, ['max_points_per_purchase']],
      ['max_points_per_purchase below min', { min_points_per_purchase: 10, max_points_per_purchase: 9 }, ['max_points_per_purchase']],
      ['points_per_visit negative', { points_per_visit: -2 }, ['points_per_visit']],
      ['min_points_for_redemption fractional', { min_points_for_redemption: 0.5 }, ['min_points_for_redemption']],
      ['max_points_per_redemption below min', { min_points_for_redemption: 100, max_points_per_redemption: 50 }, ['max_points_per_redemption']],
      ['max_points_per_redemption a string', { max_points_per_redemption: 'none' }, ['max_points_per_redemption']],
      ['default_coupon_validity_days 0', { default_coupon_validity_days: 0 }, ['default_coupon_validity_days']],
      ['default_coupon_validity_days 3651', { default_coupon_validity_days: 3651 }, ['default_coupon_validity_days']],
      ['default_coupon_validity_days fractional', { default_coupon_validity_days: 1.5 }, ['default_coupon_validity_days']],
      ['default_coupon_validity_days a string', { default_coupon_validity_days: '30' }, ['default_coupon_validity_days']],
      ['shop_ids not an array', { shop_ids: 5 }, ['shop_ids']],
      ['shop_ids duplicated', { shop_ids: [1, 1] }, ['shop_ids']],
      ['shop_ids unknown shop', { shop_ids: [2_000_000_000] }, ['shop_ids']],
      ['shop_ids beyond any id', { shop_ids: [-1, 0, 9_000_000_000] }, ['shop_ids']],
      ['shop_ids over 1000', { shop_ids: Array.from({ length: 1001 }, (_, i) => i + 1) }, ['shop_ids']],
    ];
    for (const [label, patch, keys] of cases) {
      it(`422 on ${keys.join(', ')}: ${label}`, async () => {
        const body: Record<string, unknown> = { ...minimal(), card_design: { logo: png }, ...patch };
        if (label === 'no body fields') for (const k of Object.keys(body)) delete body[k];
        const res = await post(JSON.parse(JSON.stringify(body)));
        assertInvalid(res, keys, label);
      });
    }

    it('reads no body (or an empty one) as {} and names the required fields', async () => {
      const required = ['card_design', 'description', 'terms_conditions', 'title'];
      const none = await request(t.url, 'POST', '/en/partners/cards', { headers: bearer(p.token) });
      assertInvalid(none, required);
      const empty = await request(t.url, 'POST', '/en/partners/cards', { headers: { ...bearer(p.token), 'content-type': 'application/json' }, raw: '' });
      assertInvalid(empty, required);
      assertInvalid(await post(null), ['_']);
      assertInvalid(await post(['title']), ['_']);
    });

    it("422 on shop_ids for another partner's shop, naming it", async () => {
      const res = await post({ ...minimal(), shop_ids: [shops[0], otherShop] });
      assertInvalid(res, ['shop_ids']);
      assert.match(res.body.errors.shop_ids[0], new RegExp(`\\b${otherShop}\\b`));
      assert.doesNotMatch(res.body.errors.shop_ids[0], new RegExp(`\\b${shops[0]}\\b`));
    });

    it('reports every problem in one response', async () => {
      const res = await post({
        title: { en: '' },
        description: { english: 'x' },
        card_design: { text_color: 'red', logo: image('png', 64, 'gif'), background_color_opacity: 2 },
        points_per_currency: 1.00001,
        currency_amount: -1,
        min_points_per_purchase: 10,
        max_points_per_purchase: 1,
        default_coupon_validity_days: 0,
        shop_ids: [otherShop],
      });
      assertInvalid(res, [
        'title.en',
        'title.lt',
        'description',
        'terms_conditions',
        'card_design.text_color',
        'card_design.logo',
        'card_design.background_color_opacity',
        'points_per_currency',
        'currency_amount',
        'max_points_per_purchase',
        'default_coupon_validity_days',
        'shop_ids',
      ]);
    });

    it('answers validation in the locale of the path', async () => {
      const en = await post({ ...minimal(), title: { en: 'x' } });
      const lt = await post({ ...minimal(), title: { en: 'x' } }, p, {}, 'lt');
      assertInvalid(en, ['title.lt']);
      assertInvalid(lt, ['title.lt']);
      assert.notEqual(en.body.message, lt.body.message);
      assert.notEqual(en.body.errors['title.lt'][0], lt.body.errors['title.lt'][0]);
    });

    it('honours Idempotency-Key: a retry replays the first card, one card is created', async () => {
      const key = `card-${Date.now()}`;
      const before = (await list('?per_page=100')).body.pagination.total;
      const first = await post(minimal(), p, { 'idempotency-key': key });
      const again = await post(minimal(), p, { 'idempotency-key': key });
      assert.equal(first.status, 201);
      assert.equal(again.status, 201);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual({ ...again.body, request_id: null }, { ...first.body, request_id: null });
      assert.equal((await list('?per_page=100')).body.pagination.total, before + 1);
      const changed = await post({ ...minimal(), title: { en: 'Other', lt: 'Kita' } }, p, { 'idempotency-key': key });
      assert.equal(changed.status, 422);
      assert.equal(changed.body.code, 'INVALID_VALUE');
    });
  });

  describe('deprecation of default_coupon_validity_days', () => {
    it('marks responses with Deprecation: true exactly when the request sends the field', async () => {
      const without = await post(minimal());
      assert.equal(without.headers.get('deprecation'), null);
      assert.equal(without.headers.get('link'), null);
      const withValue = await post({ ...minimal(), default_coupon_validity_days: 30 });
      assert.equal(withValue.status, 201);
      assert.equal(withValue.headers.get('deprecation'), 'true');
      assert.match(withValue.headers.get('link') ?? '', /rel="deprecation"/);
      const withNull = await post({ ...minimal(), default_coupon_validity_days: null });
      assert.equal(withNull.headers.get('deprecation'), 'true');
      const invalid = await post({ ...minimal(), default_coupon_validity_days: 0 });
      assert.equal(invalid.status, 422);
      assert.equal(invalid.headers.get('deprecation'), 'true');

      const id = withValue.body.data.id;
      assert.equal((await put(id, { title: { en: 'A', lt: 'B' } })).headers.get('deprecation'), null);
      const updated = await put(id, { default_coupon_validity_days: 7 });
      assert.equal(updated.status, 200);
      assert.equal(updated.headers.get('deprecation'), 'true');
      assert.equal((await get(id)).headers.get('deprecation'), null);
      assert.equal((await list()).headers.get('deprecation'), null);
    });

    it('marks the property deprecated in the OpenAPI document', async () => {
      const doc = (await request(t.url, 'GET', '/openapi.json')).body;
      const schemaOf = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema;
      for (const [path, method] of [
        ['/{locale}/partners/cards', 'post'],
        ['/{locale}/partners/cards/{id}', 'put'],
      ] as const) {
        const prop = schemaOf(path, method).properties.default_coupon_validity_days;
        assert.equal(prop.deprecated, true, `${method} ${path}`);
        assert.match(prop.description, /per game/);
      }
      const full = doc.paths['/{locale}/partners/cards/{id}'].get.responses['200'].content['application/json'].schema.properties.data;
      assert.equal(full.properties.default_coupon_validity_days.deprecated, true);
    });
  });

  describe('GET /{locale}/partners/cards/{id}', () => {
    it('answers 404 with message text for a missing card, in the path locale', async () => {
      const en = await get(2_000_000_000);
      assertNotFound(en);
      assert.match(en.body.message, /Partner card/);
      const lt = await get(2_000_000_000, p, 'lt');
      assertNotFound(lt);
      assert.match(lt.body.message, /Partnerio kortelė/);
      assertNotFound(await request(t.url, 'GET', '/en/partners/cards/abc', { headers: bearer(p.token) }));
    });
  });

  describe('PUT /{locale}/partners/cards/{id}', () => {
    it('changes only the fields sent and answers exactly those (as stored) plus updated_at', async () => {
      const id = await create({ ...minimal(), shop_ids: [shops[0]], min_points_per_purchase: 3 });
      const before = (await get(id)).body.data;
      await new Promise((r) => setTimeout(r, 5));

      const res = await put(id, { title: { en: '  Silver ', lt: 'Sidabrinė' } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.code, 200);
      assert.deepEqual(keysOf(res.body.data), ['title', 'updated_at']);
      assert.deepEqual(res.body.data.title, { en: 'Silver', lt: 'Sidabrinė' });
      assert.ok(res.body.data.updated_at > before.updated_at);

      const after = (await get(id)).body.data;
      assert.deepEqual({ ...after, title: before.title, updated_at: before.updated_at }, before, 'nothing else changed');
      assert.equal(after.updated_at, res.body.data.updated_at);
    });

    it('answers several fields normalised, and replaces nested objects and shop_ids as a whole', async () => {
      const id = await create({ ...minimal(), shop_ids: [shops[0], shops[1]], card_design: { text_color: '#000000', qr_color: '#111111' } });
      const sent = {
        points_per_currency: 2.5,
        max_points_per_purchase: null,
        shop_ids: [shops[2], shops[1]],
        card_design: { background_color: '#FFFFFF', logo: null },
        description: { lt: 'Naujas' },
        is_active: false,
        unknown_field: 'ignored',
      };
      const res = await put(id, sent);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(keysOf(res.body.data), ['card_design', 'description', 'is_active', 'max_points_per_purchase', 'points_per_currency', 'shop_ids', 'updated_at']);
      assert.deepEqual(res.body.data.shop_ids, [shops[1], shops[2]]);
      assert.deepEqual(res.body.data.card_design, { background_color: '#FFFFFF' });
      const card = (await get(id)).body.data;
      assert.deepEqual(card.card_design, { background_color: '#FFFFFF' });
      assert.deepEqual(card.description, { lt: 'Naujas' });
      assert.deepEqual(card.shop_ids, [shops[1], shops[2]]);
      assert.equal(card.points_per_currency, 2.5);
      assert.deepEqual(card.title, minimal().title);

      const cleared = await put(id, { shop_ids: [] });
      assert.deepEqual(cleared.body.data.shop_ids, []);
      assert.deepEqual((await get(id)).body.data.shop_ids, []);
    });

    it('answers an empty body (or none) with only updated_at, changing nothing', async () => {
      const id = await create();
      const before = (await get(id)).body.data;
      const res = await put(id, {});
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data, { updated_at: before.updated_at });
      const none = await request(t.url, 'PUT', `/en/partners/cards/${id}`, { headers: bearer(p.token) });
      assert.equal(none.status, 200, none.text);
      assert.deepEqual(none.body.data, { updated_at: before.updated_at });
      assert.deepEqual((await get(id)).body.data, before);
    });

    it('validates what is sent with the create rules: a title needs both languages', async () => {
      const id = await create();
      assertInvalid(await put(id, { title: { en: 'Only English' } }), ['title.lt']);
      assertInvalid(await put(id, { title: { lt: 'Tik lietuviškai' } }), ['title.en']);
      assertInvalid(await put(id, { description: null }), ['description']);
      assertInvalid(await put(id, { card_design: { qr_color: 'blue' } }), ['card_design.qr_color']);
      assertInvalid(await put(id, { default_coupon_validity_days: 3651 }), ['default_coupon_validity_days']);
      assertInvalid(await put(id, { points_per_currency: 0 }), ['points_per_currency']);
      assertInvalid(await put(id, { currency_amount_redemption: 1.00001 }), ['currency_amount_redemption']);
      assertInvalid(await put(id, { shop_ids: [otherShop] }), ['shop_ids']);
      assertInvalid(await put(id, { points_expiration_days: 0, is_active: 'no', title: { en: '' } }), ['points_expiration_days', 'is_active', 'title.en', 'title.lt']);
      assert.deepEqual((await get(id)).body.data.title, minimal().title, 'nothing was stored');
    });

    it('checks max ≥ min against the stored value of the field not sent', async () => {
      const id = await create({ ...minimal(), min_points_per_purchase: 10, max_points_per_purchase: 20, min_points_for_redemption: 5 });
      assertInvalid(await put(id, { max_points_per_purchase: 9 }), ['max_points_per_purchase']);
      assertInvalid(await put(id, { min_points_per_purchase: 21 }), ['max_points_per_purchase']);
      assertInvalid(await put(id, { max_points_per_redemption: 4 }), ['max_points_per_redemption']);
      assert.equal((await put(id, { min_points_per_purchase: 20 })).status, 200);
      assert.equal((await put(id, { max_points_per_purchase: null, min_points_per_purchase: 500 })).status, 200);
      assert.equal((await put(id, { max_points_per_redemption: 5 })).status, 200);
      const card = (await get(id)).body.data;
      assert.deepEqual([card.min_points_per_purchase, card.max_points_per_purchase, card.max_points_per_redemption], [500, null, 5]);
    });

    it('answers 404 for a missing card, before looking at the body', async () => {
      assertNotFound(await put(2_000_000_000, { title: { en: 'x', lt: 'y' } }));
      assertNotFound(await put(2_000_000_000, { title: 'not even an object' }));
    });
  });

  describe('DELETE /{locale}/partners/cards/{id}', () => {
    it('answers 200 without data, then the card is gone: 404 on GET/PUT/DELETE, out of every list', async () => {
      const id = await create({ ...minimal(), shop_ids: [shops[0]] });
      const res = await del(id);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(keysOf(res.body), ['code', 'message', 'request_id', 'success']);
      assert.equal(res.body.success, true);
      assert.equal(res.body.code, 200);
      assert.equal(res.body.request_id, res.headers.get('x-request-id'));

      assertNotFound(await get(id), 'GET');
      assertNotFound(await put(id, { is_active: true }), 'PUT');
      assertNotFound(await del(id), 'DELETE again');
      for (const q of ['?per_page=100', `?per_page=100&shop_id=${shops[0]}`, '?per_page=100&is_active=false']) {
        const ids = (await list(q)).body.data.map((c: { id: number }) => c.id);
        assert.ok(!ids.includes(id), q);
      }
    });

    it('is a soft delete: the programme stays readable for the ledger, inactive and marked deleted', async () => {
      const id = await create({ ...minimal(), points_per_currency: 2.5, currency_amount: 0.1 });
      assert.equal((await del(id)).status, 200);
      const rules = await t.app.context.services.partnerCards.findProgramme(p.id, id);
      assert.ok(rules);
      assert.equal(rules.deleted, true);
      assert.equal(rules.isActive, false);
      assert.equal(rules.pointsPerCurrency, 25_000n, 'exact ten-thousandths');
      assert.equal(rules.currencyAmount, 1_000n);
      assert.equal(await t.app.context.services.partnerCards.findProgramme(other.id, id), undefined, 'never across partners');
    });

    it('answers 404 for a missing card', async () => {
      assertNotFound(await del(2_000_000_000));
    });
  });

  describe('GET /{locale}/partners/cards', () => {
    let lister: PartnerFixture;
    let empty: PartnerFixture;
    const ids: number[] = [];

    before(async () => {
      lister = await createPartner(t);
      empty = await createPartner(t);
      const shop = (await t.app.context.services.shops.create(lister.id, { name: 'Lister shop' })).id;
      for (let i = 1; i <= 45; i++) {
        const body = { ...minimal(), title: { en: `Card ${i}`, lt: `Kortelė ${i}` }, is_active: i % 3 !== 0, ...(i <= 4 ? { shop_ids: [shop] } : {}) };
        ids.push(await create(body, lister));
      }
      (lister as PartnerFixture & { shop?: number }).shop = shop;
    });

    it('answers items with exactly the list fields and a top-level pagination (default page 1 of 20)', async () => {
      const res = await list('', lister);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.code, 200);
      assert.deepEqual(res.body.pagination, { current_page: 1, per_page: 20, total: 45, last_page: 3 });
      assert.equal(res.body.meta, undefined);
      assert.deepEqual(res.body.data.map((c: { id: number }) => c.id), ids.slice(0, 20));
      for (const item of res.body.data) assert.deepEqual(keysOf(item), LIST_ITEM_KEYS);
      assert.deepEqual(res.body.data[0].title, { en: 'Card 1', lt: 'Kortelė 1' });
    });

    it('computes last_page and pages to the end', async () => {
      const third = await list('?page=3', lister);
      assert.deepEqual(third.body.pagination, { current_page: 3, per_page: 20, total: 45, last_page: 3 });
      assert.deepEqual(third.body.data.map((c: { id: number }) => c.id), ids.slice(40));
      const past = await list('?page=4', lister);
      assert.deepEqual(past.body.data, []);
      assert.equal(past.body.pagination.last_page, 3);
      assert.deepEqual((await list('?per_page=7&page=2', lister)).body.pagination, { current_page: 2, per_page: 7, total: 45, last_page: 7 });
    });

    it('takes per_page=100 and refuses 101 (and 0, and non-integers) with 422 on per_page', async () => {
      const all = await list('?per_page=100', lister);
      assert.equal(all.status, 200);
      assert.deepEqual(all.body.pagination, { current_page: 1, per_page: 100, total: 45, last_page: 1 });
      assert.equal(all.body.data.length, 45);
      for (const q of ['per_page=101', 'per_page=0', 'per_page=abc']) assertInvalid(await list(`?${q}`, lister), ['per_page'], q);
      assertInvalid(await list('?page=0', lister), ['page']);
    });

    it('answers an empty list with total 0 and last_page 1', async () => {
      const res = await list('', empty);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data, []);
      assert.deepEqual(res.body.pagination, { current_page: 1, per_page: 20, total: 0, last_page: 1 });
    });

    it('filters by is_active (true/false, also 1/0) and by shop_id', async () => {
      const active = ids.filter((_, i) => (i + 1) % 3 !== 0);
      const inactive = ids.filter((_, i) => (i + 1) % 3 === 0);
      for (const [q, expected] of [
        ['is_active=true', active],
        ['is_active=1', active],
        ['is_active=false', inactive],
        ['is_active=0', inactive],
      ] as const) {
        const res = await list(`?per_page=100&${q}`, lister);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.data.map((c: { id: number }) => c.id), expected, q);
        assert.equal(res.body.pagination.total, expected.length);
      }
      assertInvalid(await list('?is_active=maybe', lister), ['is_active']);
      const shop = (lister as PartnerFixture & { shop?: number }).shop!;
      const byShop = await list(`?shop_id=${shop}`, lister);
      assert.deepEqual(byShop.body.data.map((c: { id: number }) => c.id), ids.slice(0, 4));
      assert.equal(byShop.body.pagination.total, 4);
      const both = await list(`?shop_id=${shop}&is_active=false`, lister);
      assert.deepEqual(both.body.data.map((c: { id: number }) => c.id), [ids[2]]);
      assert.deepEqual((await list(`?shop_id=${otherShop}`, lister)).body.data, [], "another partner's shop matches nothing");
      assertInvalid(await list('?shop_id=abc', lister), ['shop_id']);
    });
  });

  describe('authentication', () => {
    const routes: Array<[method: string, path: string, json?: unknown]> = [
      ['POST', '/en/partners/cards', minimal()],
      ['GET', '/en/partners/cards'],
      ['GET', '/en/partners/cards/1'],
      ['PUT', '/en/partners/cards/1', { is_active: false }],
      ['DELETE', '/en/partners/cards/1'],
    ];

    it('answers 401 without a token or with an invalid one', async () => {
      for (const [method, path, json] of routes) {
        const none = await request(t.url, method, path, { json });
        assert.equal(none.status, 401, `${method} ${path}`);
        assert.equal(none.body.code, 'MISSING_AUTHENTICATION');
        assert.equal(none.body.success, false);
        const bad = await request(t.url, method, path, { json, headers: bearer('not-a-jwt') });
        assert.equal(bad.status, 401, `${method} ${path}`);
        const forged = await request(t.url, method, path, { json, headers: bearer(`${p.token.slice(0, -4)}AAAA`) });
        assert.equal(forged.status, 401, `${method} ${path}`);
        const apiKey = await request(t.url, method, path, { json, headers: { 'x-api-key': p.apiKey.key, 'x-api-secret': p.apiKey.secret } });
        assert.equal(apiKey.status, 401, `${method} ${path} with API credentials`);
      }
    });

    it('answers 403 to admin and customer tokens, changing nothing', async () => {
      const id = await create();
      const before = (await get(id)).body.data;
      for (const [method, path, json] of routes) {
        for (const token of [admin.token, customerToken]) {
          const res = await request(t.url, method, path.replace('/1', `/${id}`), { json, headers: bearer(token) });
          assert.equal(res.status, 403, `${method} ${path}`);
          assert.equal(res.body.code, 'INSUFFICIENT_PERMISSIONS');
        }
      }
      assert.deepEqual((await get(id)).body.data, before);
    });
  });
});
