// Tenancy (DESIGN.md §2) for partner cards and games: another partner's card or game is
// 404 on every endpoint that takes an id — indistinguishable from an id never used — and
// stays unchanged; lists show only one's own; another partner's shop or card cannot be
// linked (422 on shop_ids / partner_card_id).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createPartner, type PartnerFixture } from './helpers/fixtures.js';
import { bearer, request, type Response } from './helpers/http.js';

interface Owned {
  id: number;
  /** The object as its owner sees it. */
  read(): Promise<unknown>;
}

interface Row {
  label: string;
  method: 'GET' | 'PUT' | 'DELETE';
  path: (id: number) => string;
  json?: unknown;
  create(): Promise<Owned>;
}

/** What B sees, minus the request id: it must not tell an existing object from a missing one. */
const seen = (res: Response) => ({ status: res.status, body: { ...res.body, request_id: undefined } });

describe('tenancy of partner cards and games', () => {
  let t: TestApp;
  let a: PartnerFixture;
  let b: PartnerFixture;
  let aShop: number;
  let bShop: number;

  before(async () => {
    t = await startTestApp();
    a = await createPartner(t, 'Partner A');
    b = await createPartner(t, 'Partner B');
    aShop = (await t.app.context.services.shops.create(a.id, { name: 'A shop' })).id;
    bShop = (await t.app.context.services.shops.create(b.id, { name: 'B shop' })).id;
  });
  after(() => t.close());

  const cardBody = (who: string, shopIds: number[] = []) => ({
    title: { en: `${who} card`, lt: `${who} kortelė` },
    description: { en: `${who} description` },
    terms_conditions: { en: `${who} terms` },
    card_design: { background_color: '#112233' },
    shop_ids: shopIds,
    points_per_currency: 2,
  });
  const gameBody = (who: string, cardId: number | null = null) => ({
    type: 'scratch_card',
    name: `${who} game`,
    partner_card_id: cardId,
    rewards: [
      { label: 'Win', probability: 0.25, reward_type: 'points', points: 5 },
      { label: 'Lose', probability: 0.75, reward_type: 'none' },
    ],
  });

  async function createCard(p: PartnerFixture, who: string, shopIds: number[] = []) {
    const res = await request(t.url, 'POST', '/en/partners/cards', { headers: bearer(p.token), json: cardBody(who, shopIds) });
    assert.equal(res.status, 201, res.text);
    return res.body.data.id as number;
  }
  async function createGame(p: PartnerFixture, who: string, cardId: number | null = null) {
    const res = await request(t.url, 'POST', '/en/partners/games', { headers: bearer(p.token), json: gameBody(who, cardId) });
    assert.equal(res.status, 201, res.text);
    return res.body.data.id as number;
  }

  const ownCard = async (): Promise<Owned> => {
    const id = await createCard(a, 'A', [aShop]);
    return {
      id,
      read: async () => {
        const one = await request(t.url, 'GET', `/en/partners/cards/${id}`, { headers: bearer(a.token) });
        const listed = await request(t.url, 'GET', '/en/partners/cards?per_page=100', { headers: bearer(a.token) });
        const rules = await t.app.context.services.partnerCards.findProgramme(a.id, id);
        return { status: one.status, data: one.body.data, listed: listed.body.data.find((c: { id: number }) => c.id === id), rules };
      },
    };
  };
  const ownGame = async (): Promise<Owned> => {
    const id = await createGame(a, 'A');
    return {
      id,
      read: async () => {
        const one = await request(t.url, 'GET', `/en/partners/games/${id}`, { headers: bearer(a.token) });
        return { status: one.status, data: one.body.data };
      },
    };
  };

  const takeover = { title: { en: 'Taken', lt: 'Paimta' }, is_active: false, shop_ids: [], default_coupon_validity_days: 1, card_design: {} };
  const rows: Row[] = [
    { label: 'GET card', method: 'GET', path: (id) => `/en/partners/cards/${id}`, create: ownCard },
    { label: 'PUT card', method: 'PUT', path: (id) => `/en/partners/cards/${id}`, json: takeover, create: ownCard },
    { label: 'PUT card (empty body)', method: 'PUT', path: (id) => `/en/partners/cards/${id}`, json: {}, create: ownCard },
    { label: 'PUT card (invalid body)', method: 'PUT', path: (id) => `/en/partners/cards/${id}`, json: { title: { en: 'x' } }, create: ownCard },
    { label: 'DELETE card', method: 'DELETE', path: (id) => `/en/partners/cards/${id}`, create: ownCard },
    { label: 'GET game', method: 'GET', path: (id) => `/en/partners/games/${id}`, create: ownGame },
    {
      label: 'PUT game',
      method: 'PUT',
      path: (id) => `/en/partners/games/${id}`,
      json: { name: 'Taken', is_active: false, rewards: [{ label: 'All', probability: 1, reward_type: 'none' }] },
      create: ownGame,
    },
    { label: 'PUT game (invalid body)', method: 'PUT', path: (id) => `/en/partners/games/${id}`, json: { rewards: [] }, create: ownGame },
  ];

  for (const row of rows) {
    it(`${row.label}: B gets 404 for A's object, which stays unchanged; A itself succeeds`, async () => {
      const target = await row.create();
      const before = await target.read();

      const res = await request(t.url, row.method, row.path(target.id), { headers: bearer(b.token), json: row.json });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.success, false);
      assert.equal(res.body.code, 'RESOURCE_NOT_FOUND');
      assert.equal(res.body.data, undefined);
      assert.equal(res.body.errors[0].code, 'RESOURCE_NOT_FOUND');
      const missing = await request(t.url, row.method, row.path(2_000_000_000), { headers: bearer(b.token), json: row.json });
      assert.deepEqual(seen(res), seen(missing), 'no existence oracle');

      assert.deepEqual(await target.read(), before, "A's object is unchanged");

      if (!row.label.includes('invalid')) {
        const own = await request(t.url, row.method, row.path(target.id), { headers: bearer(a.token), json: row.json });
        assert.equal(own.status, 200, own.text);
      }
    });
  }

  it("B's lists never contain A's cards or games, and do contain B's own", async () => {
    const aCards = [await createCard(a, 'A list'), await createCard(a, 'A list', [aShop])];
    const aGames = [await createGame(a, 'A list', aCards[0])];
    const bCard = await createCard(b, 'B list', [bShop]);
    const bGame = await createGame(b, 'B list', bCard);

    const lists = [
      { path: '/en/partners/cards?per_page=100', forbidden: aCards, own: [bCard], total: (r: Response) => r.body.pagination.total },
      { path: '/en/partners/cards?per_page=100&is_active=true', forbidden: aCards, own: [bCard], total: (r: Response) => r.body.pagination.total },
      { path: `/en/partners/cards?per_page=100&shop_id=${aShop}`, forbidden: aCards, own: [], total: (r: Response) => r.body.pagination.total },
      { path: `/en/partners/cards?per_page=100&shop_id=${bShop}`, forbidden: aCards, own: [bCard], total: (r: Response) => r.body.pagination.total },
      { path: '/en/partners/games?per_page=100', forbidden: aGames, own: [bGame], total: (r: Response) => r.body.meta.total },
    ];
    for (const { path, forbidden, own, total } of lists) {
      const res = await request(t.url, 'GET', path, { headers: bearer(b.token) });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      const ids = (res.body.data as Array<{ id: number }>).map((x) => x.id);
      for (const id of forbidden) assert.ok(!ids.includes(id), `${path} shows A's ${id}`);
      for (const id of own) assert.ok(ids.includes(id), `${path} misses B's ${id}`);
      assert.equal(total(res), ids.length, `${path}: the total counts only B's objects`);
      assert.ok(!res.text.includes('A list'), `${path} mentions A's objects`);
    }
    const aList = await request(t.url, 'GET', '/en/partners/cards?per_page=100', { headers: bearer(a.token) });
    const aIds = aList.body.data.map((c: { id: number }) => c.id);
    for (const id of aCards) assert.ok(aIds.includes(id), 'control: A sees its own cards');
    assert.ok(!aIds.includes(bCard));
  });

  it("refuses A's shop in B's shop_ids (create and update) with 422 on shop_ids", async () => {
    const create = await request(t.url, 'POST', '/en/partners/cards', { headers: bearer(b.token), json: cardBody('B', [aShop]) });
    assert.equal(create.status, 422, create.text);
    assert.equal(create.body.code, 422);
    assert.deepEqual(Object.keys(create.body.errors), ['shop_ids']);
    const mixed = await request(t.url, 'POST', '/en/partners/cards', { headers: bearer(b.token), json: cardBody('B', [bShop, aShop]) });
    assert.deepEqual(Object.keys(mixed.body.errors), ['shop_ids']);

    const bCard = await createCard(b, 'B', [bShop]);
    const update = await request(t.url, 'PUT', `/en/partners/cards/${bCard}`, { headers: bearer(b.token), json: { shop_ids: [aShop] } });
    assert.equal(update.status, 422, update.text);
    assert.deepEqual(Object.keys(update.body.errors), ['shop_ids']);
    const after = await request(t.url, 'GET', `/en/partners/cards/${bCard}`, { headers: bearer(b.token) });
    assert.deepEqual(after.body.data.shop_ids, [bShop], 'unchanged');
    const aView = await request(t.url, 'GET', `/en/partners/cards?shop_id=${aShop}&per_page=100`, { headers: bearer(a.token) });
    assert.ok(!aView.body.data.some((c: { id: number }) => c.id === bCard), "B's card never lands on A's shop");
  });

  it("refuses A's card as B's game partner_card_id (create and update) with 422 on partner_card_id", async () => {
    const aCard = await createCard(a, 'A');
    const create = await request(t.url, 'POST', '/en/partners/games', { headers: bearer(b.token), json: gameBody('B', aCard) });
    assert.equal(create.status, 422, create.text);
    assert.deepEqual(Object.keys(create.body.errors), ['partner_card_id']);
    const bGame = await createGame(b, 'B');
    const update = await request(t.url, 'PUT', `/en/partners/games/${bGame}`, { headers: bearer(b.token), json: { partner_card_id: aCard } });
    assert.equal(update.status, 422, update.text);
    assert.deepEqual(Object.keys(update.body.errors), ['partner_card_id']);
    const after = await request(t.url, 'GET', `/en/partners/games/${bGame}`, { headers: bearer(b.token) });
    assert.equal(after.body.data.partner_card_id, null);
  });

  it("keeps findProgramme, the other modules' entry point, to the owner", async () => {
    const aCard = await createCard(a, 'A');
    assert.equal((await t.app.context.services.partnerCards.findProgramme(a.id, aCard))?.id, aCard);
    assert.equal(await t.app.context.services.partnerCards.findProgramme(b.id, aCard), undefined);
  });
});
