// The basket case of the points benchmark (bench/points.ts, issue 22 Deliver 8): a second
// programme of the demo partner with five running campaigns on a seeded catalogue, baskets of
// 10 lines that every campaign applies to, the campaigns' counter check, and a serial
// per-statement timing of the basket award (the engine's own code, in this process, against
// the same database) — where an award's time goes, round trip by round trip.
import { randomInt } from 'node:crypto';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { Db } from '../src/infra/db/index.js';
import { awardBasket, type BasketInput, type ParsedLine } from '../src/modules/awards/basket-award.js';
import { pointsRepository } from '../src/modules/points/points.repository.js';

export interface BasketLineBody {
  line_id: string;
  product_id?: number;
  sku?: string;
  name?: string;
  quantity: number;
  amount: string;
}

export interface BasketSeed {
  programmeId: number;
  cardIds: number[];
  /** Pre-built baskets of 10 lines; a request picks one at random. */
  baskets: BasketLineBody[][];
  campaigns: Array<{ id: number; name: string; budget: number | null }>;
  /** The two campaigns with a points_budget. */
  budgeted: number[];
}

const PRODUCTS = 200;
const BASKETS = 200;
export const BIG_BUDGET = 2_000_000_000;

/**
 * A copy of `programmeId` (same rules) with a card for each customer, 200 products in a
 * three-level category tree, and five running campaigns on it:
 *   1. multiplier ×2 on the category "Coffee" (its products sit in its child "Beans"), budget;
 *   2. bonus 50 on baskets of at least 20 EUR (min_amount);
 *   3. per_currency 0.5 point per EUR on 10 skus, budget;
 *   4. per_item 5 points per unit of 10 products;
 *   5. bonus 10 on every purchase.
 * Every basket has a coffee line, a listed sku, a listed product and ≥ 20 EUR, so all five
 * apply to every award (the two budgeted ones lock their rows in each).
 */
/** A copy of a programme's rules and shops, with a card in it for every customer (numbers starting with `prefix`). */
async function copyProgramme(db: pg.Client, partnerId: number, programmeId: number, prefix: string): Promise<{ programme: number; cardIds: number[] }> {
  const { rows: cols } = await db.query<{ column_name: string }>(
    `select column_name from information_schema.columns where table_schema = 'public' and table_name = 'partner_cards'
       and column_name not in ('id', 'created_at', 'updated_at') and is_generated = 'NEVER' and is_identity = 'NO'`,
  );
  const list = cols.map((c) => `"${c.column_name}"`).join(', ');
  const { rows: [prog] } = await db.query<{ id: number }>(
    `insert into partner_cards (${list}) select ${list} from partner_cards where id = $1 returning id`,
    [programmeId],
  );
  const programme = prog!.id;
  // The programme's shops, as the original's (a programme limited to shops keeps them).
  await db.query(
    `insert into partner_card_shops (card_id, shop_id) select $2, shop_id from partner_card_shops where card_id = $1`,
    [programmeId, programme],
  );
  const { rows: cards } = await db.query<{ id: number }>(
    `insert into loyalty_cards (partner_id, partner_card_id, customer_id, card_number)
     select $1, $2, c.id, $3 || lpad(c.id::text, 15, '0') from customers c
     where not exists (select 1 from loyalty_cards l where l.customer_id = c.id and l.partner_card_id = $2) returning id`,
    [partnerId, programme, prefix],
  );
  return { programme, cardIds: cards.map((c) => c.id) };
}

/**
 * The tiers case (DESIGN.md §13): a copy of the programme with three tiers (thresholds low
 * enough that the bench's awards cross them) and `check`, which says whether every card's
 * stored value equals its purchases' points and its tier is the one the value gives.
 */
export async function seedTieredProgramme(db: pg.Client, partnerId: number, programmeId: number) {
  const { programme, cardIds } = await copyProgramme(db, partnerId, programmeId, '7');
  await db.query(
    `insert into tiers (partner_id, partner_card_id, name, threshold, earn_multiplier) values
       ($1, $2, '{"en":"Bronze","lt":"Bronza"}', 30, 1), ($1, $2, '{"en":"Silver","lt":"Sidabras"}', 150, 1.5), ($1, $2, '{"en":"Gold","lt":"Auksas"}', 600, 2)`,
    [partnerId, programme],
  );
  return {
    cardIds,
    async check(): Promise<string> {
      const { rows: [r] } = await db.query<{ cards: number; wrong_value: number; wrong_tier: number; moves: number; tiered: string }>(
        `with v as (
           select c.id, c.tier_id, c.tier_value, coalesce((select sum(t.points) from points_transactions t where t.card_id = c.id and t.type = 'purchase'), 0) as earned,
                  (select k.id from tiers k where k.partner_card_id = c.partner_card_id and k.threshold <= c.tier_value order by k.threshold desc limit 1) as expected
           from loyalty_cards c where c.partner_card_id = $1)
         select count(*)::int as cards, count(*) filter (where tier_value <> earned)::int as wrong_value,
                count(*) filter (where tier_id is distinct from expected)::int as wrong_tier,
                (select count(*)::int from card_tier_history h join loyalty_cards c on c.id = h.card_id where c.partner_card_id = $1) as moves,
                (select string_agg(n || ' ' || k, ', ') from (select coalesce(t.name->>'en', 'none') as n, count(*) as k from v left join tiers t on t.id = v.tier_id group by 1 order by 1) x) as tiered
         from v`,
        [programme],
      );
      return `tier state ${r!.wrong_value === 0 && r!.wrong_tier === 0 ? 'exact' : `WRONG (${r!.wrong_value} values, ${r!.wrong_tier} tiers)`} on ${r!.cards} cards; ${r!.moves} moves; ${r!.tiered}`;
    },
  };
}

export async function seedBasketProgramme(db: pg.Client, partnerId: number, programmeId: number): Promise<BasketSeed> {
  const { programme, cardIds } = await copyProgramme(db, partnerId, programmeId, '8');
  const cards = cardIds.map((id) => ({ id }));

  const category = async (name: string, parent: number | null) =>
    (
      await db.query<{ id: number }>(
        `insert into catalog_categories (partner_id, external_key, name, path, parent_id) values ($1, $2, $3, $3, $4) returning id`,
        [partnerId, `bench:${name}`, name, parent],
      )
    ).rows[0]!.id;
  const drinks = await category('Drinks', null);
  const coffee = await category('Coffee', drinks);
  const beans = await category('Beans', coffee);
  const tea = await category('Tea', drinks);
  const food = await category('Food', null);
  const bakery = await category('Bakery', food);
  const leaves = [beans, tea, bakery, food];
  const { rows: products } = await db.query<{ id: number; sku: string }>(
    `insert into catalog_products (partner_id, import_key, name, sku, content_hash)
     select $1, 'bench-' || g, 'Product ' || g, 'SKU-' || lpad(g::text, 4, '0'), md5(g::text) from generate_series(1, $2) g
     returning id, sku`,
    [partnerId, PRODUCTS],
  );
  products.sort((a, b) => a.id - b.id);
  // Product i sits in leaf i mod 4: every fourth one is a coffee (Beans, under Coffee).
  await db.query(
    `insert into catalog_product_categories (product_id, category_id) select * from unnest($1::int[], $2::int[])`,
    [products.map((p) => p.id), products.map((_, i) => leaves[i % leaves.length]!)],
  );
  const coffees = products.filter((_, i) => i % 4 === 0);
  const others = products.filter((_, i) => i % 4 !== 0);
  const skuListed = others.slice(0, 10);
  const itemListed = others.slice(10, 20);

  const campaign = async (c: Record<string, unknown>) =>
    (
      await db.query<{ id: number; name: string; points_budget: number | null }>(
        `insert into campaigns (partner_id, partner_card_id, name, effect_type, effect_value, priority, min_amount, category_ids, skus, product_ids, points_budget)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) returning id, name, points_budget`,
        [partnerId, programme, c.name, c.type, c.value, c.priority, c.minAmount ?? null, c.categoryIds ?? [], c.skus ?? [], c.productIds ?? [], c.budget ?? null],
      )
    ).rows[0]!;
  const created = [
    await campaign({ name: 'Double points on coffee', type: 'multiplier', value: '2', priority: 50, categoryIds: [coffee], budget: BIG_BUDGET }),
    await campaign({ name: '50 points over 20 EUR', type: 'bonus', value: '50', priority: 40, minAmount: '20' }),
    await campaign({ name: 'Half a point per EUR on 10 skus', type: 'per_currency', value: '0.5', priority: 30, skus: skuListed.map((p) => p.sku), budget: BIG_BUDGET }),
    await campaign({ name: '5 points a unit of 10 products', type: 'per_item', value: '5', priority: 20, productIds: itemListed.map((p) => p.id) }),
    await campaign({ name: '10 points a visit', type: 'bonus', value: '10', priority: 10 }),
  ];

  const pick = <T>(xs: T[]) => xs[randomInt(xs.length)]!;
  const money = () => `${randomInt(1, 10)}.${String(randomInt(100)).padStart(2, '0')}`;
  const baskets: BasketLineBody[][] = [];
  for (let b = 0; b < BASKETS; b++) {
    const lines: BasketLineBody[] = [
      { line_id: '1', product_id: pick(coffees).id, quantity: randomInt(1, 3), amount: money() },
      // At least 2 EUR: half a point per EUR must come to a point (rounded down), or campaign 3 does not apply.
      { line_id: '2', sku: pick(skuListed).sku, quantity: 1, amount: `${randomInt(2, 10)}.${String(randomInt(100)).padStart(2, '0')}` },
      { line_id: '3', product_id: pick(itemListed).id, quantity: 2, amount: money() },
    ];
    for (let i = 4; i <= 9; i++) {
      const p = pick(products);
      // Half by product_id, half by sku: both lookups of matchProducts.
      lines.push(i % 2 === 0 ? { line_id: String(i), product_id: p.id, quantity: 1, amount: money() } : { line_id: String(i), sku: p.sku, quantity: 1, amount: money() });
    }
    lines.push({ line_id: '10', name: 'Carrier bag', quantity: 1, amount: '0.10' }); // unmatched
    baskets.push(lines);
  }
  return {
    programmeId: programme,
    cardIds: cards.map((c) => c.id),
    baskets,
    campaigns: created.map((c) => ({ id: c.id, name: c.name, budget: c.points_budget })),
    budgeted: created.filter((c) => c.points_budget !== null).map((c) => c.id),
  };
}

export interface CounterCheck {
  id: number;
  name: string;
  budget: number | null;
  pointsAwarded: number;
  sourcesSum: number;
  usesCount: number;
  awardsWithRow: number;
  ok: boolean;
}

/** Each campaign's counters against its breakdown rows: points = Σ sources, uses = awards with a row, points ≤ budget. */
export async function checkCounters(db: pg.Client, ids: number[]): Promise<CounterCheck[]> {
  const { rows } = await db.query<{ id: number; name: string; points_budget: number | null; points_awarded: number; uses_count: number; sum: string; awards: string }>(
    // A campaign's counters are its row's plus its shards' (src/modules/campaigns/campaigns.tables.ts).
    `select c.id, c.name, c.points_budget,
            (c.points_awarded + coalesce((select sum(k.points) from campaign_counters k where k.campaign_id = c.id), 0))::int as points_awarded,
            (c.uses_count + coalesce((select sum(k.uses) from campaign_counters k where k.campaign_id = c.id), 0))::int as uses_count,
            coalesce((select sum(s.points) from points_transaction_sources s where s.source = 'campaign' and s.campaign_id = c.id), 0) as sum,
            (select count(distinct s.transaction_id) from points_transaction_sources s where s.source = 'campaign' and s.campaign_id = c.id) as awards
     from campaigns c where c.id = any($1::int[]) order by c.id`,
    [ids],
  );
  return rows.map((r) => {
    const check = {
      id: r.id,
      name: r.name,
      budget: r.points_budget,
      pointsAwarded: r.points_awarded,
      sourcesSum: Number(r.sum),
      usesCount: r.uses_count,
      awardsWithRow: Number(r.awards),
    };
    return {
      ...check,
      ok: check.pointsAwarded === check.sourcesSum && check.usesCount === check.awardsWithRow && (check.budget === null || check.pointsAwarded <= check.budget),
    };
  });
}

/** Sessions of `database` waiting on a lock, sampled every 100 ms while `during` runs: the mean, and the mean of active ones. */
export async function sampleLockWaits<T>(url: string, during: () => Promise<T>): Promise<{ result: T; lockWaiting: number; active: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  let samples = 0;
  let waiting = 0;
  let active = 0;
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      const { rows: [r] } = await c.query<{ waiting: string; active: string }>(
        `select count(*) filter (where wait_event_type = 'Lock') as waiting, count(*) filter (where state = 'active') as active
         from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      );
      samples++;
      waiting += Number(r!.waiting);
      active += Number(r!.active);
      await new Promise((res) => setTimeout(res, 100));
    }
  })();
  try {
    const result = await during();
    return { result, lockWaiting: samples ? waiting / samples : 0, active: samples ? active / samples : 0 };
  } finally {
    stop = true;
    await loop;
    await c.end();
  }
}

const STEPS = ['BEGIN', 'lockCard', 'load', 'lockCounters', 'writePurchase', 'COMMIT', 'other'] as const;
type Step = (typeof STEPS)[number];

function stepOf(text: string): Step {
  if (/^\s*begin/i.test(text)) return 'BEGIN';
  if (/^\s*commit/i.test(text)) return 'COMMIT';
  if (/with t as \(\s*insert into points_transactions/.test(text)) return 'writePurchase';
  if (/from loyalty_cards c join partner_cards pc/.test(text)) return 'lockCard';
  if (/with recursive l as \(/.test(text)) return 'load';
  if (/order by c\.id for update of c/.test(text)) return 'lockCounters';
  return 'other';
}

export interface StatementProfile {
  awards: number;
  /** Mean wall time of an award (ms), from BEGIN to COMMIT, one client, nothing else in flight. */
  awardMs: number;
  /** Per step: round trips per award and mean wall ms per award. */
  steps: Array<{ step: Step; perAward: number; ms: number }>;
  /** The award's own JS between the round trips (evaluate, building the write). */
  jsMs: number;
  /** EXPLAIN ANALYZE of the last award's statements (writes rolled back): planning and execution ms. */
  explained: Array<{ step: Step; planningMs: number; executionMs: number }>;
}

/**
 * `n` basket awards one after another through the engine's own code (lockCard, then
 * awardBasket in a transaction — what LedgerService's engine path runs, less the no-op expiry
 * check), with every round trip timed at the driver: the serial cost of one award, per step.
 */
export async function profileStatements(url: string, partnerId: number, shopId: number, seed: BasketSeed, n: number): Promise<StatementProfile> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const totals = new Map<Step, { count: number; ms: number }>(STEPS.map((s) => [s, { count: 0, ms: 0 }]));
  const last = new Map<Step, { text: string; values: unknown[] }>();
  let counting = true;
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const cfg = args[0] as string | { text?: string };
      const text = typeof cfg === 'string' ? cfg : (cfg?.text ?? '');
      const step = stepOf(text);
      if (counting && step !== 'BEGIN' && step !== 'COMMIT' && step !== 'other' && typeof cfg !== 'string') last.set(step, { text, values: (cfg as { values?: unknown[] }).values ?? (args[1] as unknown[] | undefined) ?? [] });
      const started = performance.now();
      const out = query(...args);
      if (out instanceof Promise) {
        return out.finally(() => {
          if (!counting) return;
          const t = totals.get(stepOf(text))!;
          t.count++;
          t.ms += performance.now() - started;
        });
      }
      return out;
    };
  });
  const db = drizzle({ client: pool }) as unknown as Db;
  const toUnits = (v: string | number, places: number) => {
    const [w, f = ''] = String(v).split('.');
    return BigInt(w!) * 10n ** BigInt(places) + BigInt(f.padEnd(places, '0').slice(0, places) || '0');
  };
  let wall = 0;
  const explained: StatementProfile['explained'] = [];
  try {
    for (let i = 0; i < n + 20; i++) {
      if (i === 20) {
        // The first 20 warm the code and the connection; count from here.
        for (const t of totals.values()) {
          t.count = 0;
          t.ms = 0;
        }
        wall = 0;
      }
      const body = seed.baskets[i % seed.baskets.length]!;
      const lines: ParsedLine[] = body.map((l, k) => ({
        position: k + 1,
        lineId: l.line_id,
        productId: l.product_id ?? null,
        sku: l.sku ?? null,
        ean: null,
        name: l.name ?? null,
        quantityMilli: toUnits(l.quantity, 3),
        amountUnits: toUnits(l.amount, 4),
      }));
      const input: BasketInput = { shopId, amount: lines.reduce((s, l) => s + l.amountUnits, 0n), lines, receiptNumber: null };
      const cardId = seed.cardIds[i % seed.cardIds.length]!;
      const started = performance.now();
      await db.transaction(async (tx) => {
        const card = await pointsRepository.lockCard(tx, { partnerId, cardId }, shopId);
        if (!card) throw new Error(`card ${cardId} not found`);
        const r = await awardBasket(tx, partnerId, card, input, new Date(), { maxPoints: 1_000_000_000, maxBalance: 2_000_000_000 });
        if (!r.ok) throw new Error(`award failed: ${JSON.stringify(r)}`);
      });
      wall += performance.now() - started;
    }
    // Each statement once more under EXPLAIN ANALYZE, in a transaction rolled back: how much
    // of its time is planning (every one of them is parsed and planned on each call).
    counting = false;
    const client = await pool.connect();
    try {
      for (const [step, q] of last) {
        await client.query('begin');
        try {
          const res = await client.query({ text: `explain (analyze, summary, format json) ${q.text}`, values: q.values });
          const plan = (res.rows[0] as { 'QUERY PLAN': Array<{ 'Planning Time': number; 'Execution Time': number }> })['QUERY PLAN'][0]!;
          explained.push({ step, planningMs: plan['Planning Time'], executionMs: plan['Execution Time'] });
        } finally {
          await client.query('rollback');
        }
      }
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
  const steps = STEPS.map((step) => ({ step, perAward: totals.get(step)!.count / n, ms: totals.get(step)!.ms / n })).filter((s) => s.perAward > 0);
  const dbMs = steps.reduce((s, x) => s + x.ms, 0);
  return { awards: n, awardMs: wall / n, steps, jsMs: wall / n - dbMs, explained };
}
