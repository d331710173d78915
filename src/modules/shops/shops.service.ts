// Shops (DESIGN.md §10): the full record, partner CRUD, the nearby search, per-shop
// analytics from the ledger and coupon tables, and CSV/JSON import and CSV export.
import type { Static } from 'typebox';
import { isUniqueViolation, type Db, type Executor } from '../../infra/db/index.js';
import { fail, notFound, ok, unwrap, type Result } from '../../shared/errors.js';
import { formatAmount, parseAmount } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso, systemClock, type Clock } from '../../shared/time.js';
import { EARTH_RADIUS_KM, shopsRepository as repo, type GeoBox, type ShopFields, type ShopRow } from './shops.repository.js';
import type { Shop } from './shops.schemas.js';

export type ShopView = Static<typeof Shop>;

export interface ShopInput {
  name?: string;
  code?: string | null;
  address?: string | null;
  city?: string | null;
  country?: string | null;
  postal_code?: string | null;
  phone?: string | null;
  email?: string | null;
  lat?: number | null;
  lng?: number | null;
  opening_hours?: string | null;
  is_active?: boolean;
}

const coord = (v: string | null) => (v === null ? null : Number(v));
const coordIn = (v: number | null | undefined) => (v === null || v === undefined ? null : v.toFixed(6));
/** An empty text is "no value": a CSV cell cannot tell '' from null, so neither may the record. */
const textIn = (v: string | null) => (v === null || v === '' ? null : v);

export function shopView(row: ShopRow): ShopView {
  return {
    id: row.id,
    partner_id: row.partnerId,
    name: row.name,
    code: row.code,
    address: row.address,
    city: row.city,
    country: row.country,
    postal_code: row.postalCode,
    phone: row.phone,
    email: row.email,
    lat: coord(row.lat),
    lng: coord(row.lng),
    opening_hours: row.openingHours,
    is_active: row.isActive,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export function fieldsOf(input: ShopInput): Partial<ShopFields> {
  const out: Partial<ShopFields> = {};
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.code !== undefined) out.code = input.code === null ? null : textIn(input.code.trim());
  if (input.address !== undefined) out.address = textIn(input.address);
  if (input.city !== undefined) out.city = textIn(input.city);
  if (input.country !== undefined) out.country = input.country === null ? null : textIn(input.country.toUpperCase());
  if (input.postal_code !== undefined) out.postalCode = textIn(input.postal_code);
  if (input.phone !== undefined) out.phone = textIn(input.phone);
  if (input.email !== undefined) out.email = textIn(input.email);
  if (input.lat !== undefined) out.lat = coordIn(input.lat);
  if (input.lng !== undefined) out.lng = coordIn(input.lng);
  if (input.opening_hours !== undefined) out.openingHours = textIn(input.opening_hours);
  if (input.is_active !== undefined) out.isActive = input.is_active;
  return out;
}

const duplicateCode = () =>
  fail('DUPLICATE_VALUE', {
    message: 'shops.code_taken',
    items: [{ field: 'code', code: 'DUPLICATE_VALUE', key: 'shops.code_taken' }],
  });

// ---- nearby ----------------------------------------------------------------------------

const toRad = (d: number) => (d * Math.PI) / 180;
const toDeg = (r: number) => (r * 180) / Math.PI;

/**
 * The lat/lng box that holds every point within `radiusKm` of (lat, lng) on a sphere
 * (J. P. Matuschek's construction). Near a pole the circle contains the pole, so every
 * longitude is in; across the antimeridian the longitude range wraps into two.
 */
export function boundingBox(lat: number, lng: number, radiusKm: number): GeoBox {
  const angular = radiusKm / EARTH_RADIUS_KM;
  const latMin = lat - toDeg(angular);
  const latMax = lat + toDeg(angular);
  if (latMin <= -90 || latMax >= 90) return { latMin: Math.max(latMin, -90), latMax: Math.min(latMax, 90) };
  const dLng = toDeg(Math.asin(Math.min(1, Math.sin(angular) / Math.cos(toRad(lat)))));
  if (dLng >= 180) return { latMin, latMax };
  const west = lng - dLng;
  const east = lng + dLng;
  if (west < -180) return { latMin, latMax, lng: [[west + 360, 180], [-180, east]] };
  if (east > 180) return { latMin, latMax, lng: [[west, 180], [-180, east - 360]] };
  return { latMin, latMax, lng: [[west, east]] };
}

export interface NearbyShop extends ShopView {
  distance_km: number;
}

// ---- analytics -------------------------------------------------------------------------

import { DEFAULT_ANALYTICS_DAYS, MAX_ANALYTICS_DAYS } from './shops.limits.js';
export { DEFAULT_ANALYTICS_DAYS, MAX_ANALYTICS_DAYS };
const DAY_MS = 86_400_000;

export interface AnalyticsDay {
  day: string;
  transactions: number;
  purchase_amount: number;
  points_awarded: number;
  points_deducted: number;
  coupons_redeemed: number;
}
export interface ShopAnalytics {
  shop_id: number;
  from: string;
  to: string;
  transactions: number;
  purchase_amount: number;
  points_awarded: number;
  points_deducted: number;
  unique_customers: number;
  new_cards: number;
  coupons_redeemed: number;
  by_day: AnalyticsDay[];
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const amountJson = (units: bigint) => Number(formatAmount(units));

export class ShopsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {}

  /** For fixtures and the demo seed, which never send a taken code: a taken code throws the 409. */
  async create(partnerId: number, input: ShopInput & { name: string }, tx: Executor = this.db): Promise<ShopView> {
    return unwrap(await this.add(partnerId, input, tx));
  }

  /** A new shop; a code the partner already uses is 409 DUPLICATE_VALUE. */
  async add(partnerId: number, input: ShopInput & { name: string }, tx: Executor = this.db): Promise<Result<ShopView>> {
    try {
      return ok(shopView(await repo.insert(tx, partnerId, { ...fieldsOf(input), name: input.name.trim() })));
    } catch (err) {
      if (isUniqueViolation(err)) return duplicateCode();
      throw err;
    }
  }

  async get(partnerId: number, id: number): Promise<ShopView | undefined> {
    const row = await repo.find(this.db, partnerId, id);
    return row && shopView(row);
  }

  async list(partnerId: number, page: PageWindow): Promise<{ items: ShopView[]; total: number }> {
    const { rows, total } = await repo.list(this.db, partnerId, page.perPage, page.offset);
    return { items: rows.map(shopView), total };
  }

  async update(partnerId: number, id: number, input: ShopInput): Promise<Result<ShopView>> {
    try {
      const row = await repo.update(this.db, partnerId, id, fieldsOf(input));
      return row ? ok(shopView(row)) : fail('RESOURCE_NOT_FOUND', notFound('resource.shop').options);
    } catch (err) {
      if (isUniqueViolation(err)) return duplicateCode();
      throw err;
    }
  }

  delete(partnerId: number, id: number): Promise<boolean> {
    return repo.delete(this.db, partnerId, id);
  }

  /** For other modules: the subset of `ids` owned by the partner. */
  ownedIds(partnerId: number, ids: number[], tx: Executor = this.db): Promise<number[]> {
    return repo.ownedIds(tx, partnerId, ids);
  }

  /** Active shops of the partners within `radiusKm`, nearest first, `distance_km` to 3 decimals. */
  async nearby(partnerIds: number[], point: { lat: number; lng: number }, radiusKm: number, limit: number): Promise<NearbyShop[]> {
    const rows = await repo.nearby(this.db, partnerIds, point, radiusKm, boundingBox(point.lat, point.lng, radiusKm), limit);
    return rows.map(({ shop, distanceKm }) => ({ ...shopView(shop), distance_km: Math.round(distanceKm * 1000) / 1000 }));
  }

  /**
   * The window of an analytics request: UTC days `from`..`to`, both included; defaults to the
   * last 30 days ending today. Undefined when the dates are inverted or the window too long.
   */
  analyticsWindow(from: string | undefined, to: string | undefined): { from: string; to: string } | { error: 'inverted' | 'too_long' } {
    const toMs = to !== undefined ? Date.parse(`${to}T00:00:00Z`) : Date.parse(`${dayOf(this.clock.now().getTime())}T00:00:00Z`);
    const fromMs = from !== undefined ? Date.parse(`${from}T00:00:00Z`) : toMs - (DEFAULT_ANALYTICS_DAYS - 1) * DAY_MS;
    if (fromMs > toMs) return { error: 'inverted' };
    if ((toMs - fromMs) / DAY_MS + 1 > MAX_ANALYTICS_DAYS) return { error: 'too_long' };
    return { from: dayOf(fromMs), to: dayOf(toMs) };
  }

  /** A shop's activity per UTC day, from the ledger and the coupons; another partner's shop is not found. */
  async analytics(partnerId: number, shopId: number, window: { from: string; to: string }): Promise<ShopAnalytics | undefined> {
    const shop = await repo.find(this.db, partnerId, shopId);
    if (!shop) return undefined;
    const fromMs = Date.parse(`${window.from}T00:00:00Z`);
    const endMs = Date.parse(`${window.to}T00:00:00Z`) + DAY_MS;
    const start = new Date(fromMs);
    const end = new Date(endMs);
    const [ledger, unique, newCards, couponDays] = await Promise.all([
      repo.ledgerByDay(this.db, partnerId, shopId, start, end),
      repo.uniqueCustomers(this.db, partnerId, shopId, start, end),
      repo.newCards(this.db, partnerId, shopId, start, end),
      repo.couponsRedeemedByDay(this.db, partnerId, shopId, start, end),
    ]);
    const ledgerByDay = new Map(ledger.map((d) => [d.day, d]));
    const byDay: AnalyticsDay[] = [];
    let transactions = 0;
    let amount = 0n;
    let awarded = 0;
    let deducted = 0;
    let redeemed = 0;
    // Every day of the window, quiet ones included: a chart reads it as is.
    for (let ms = fromMs; ms < endMs; ms += DAY_MS) {
      const day = dayOf(ms);
      const l = ledgerByDay.get(day);
      const units = parseAmount(l?.purchaseAmount ?? '0') ?? 0n;
      const coupons = couponDays.get(day) ?? 0;
      byDay.push({
        day,
        transactions: l?.transactions ?? 0,
        purchase_amount: amountJson(units),
        points_awarded: l?.pointsAwarded ?? 0,
        points_deducted: l?.pointsDeducted ?? 0,
        coupons_redeemed: coupons,
      });
      transactions += l?.transactions ?? 0;
      amount += units;
      awarded += l?.pointsAwarded ?? 0;
      deducted += l?.pointsDeducted ?? 0;
      redeemed += coupons;
    }
    return {
      shop_id: shopId,
      from: window.from,
      to: window.to,
      transactions,
      purchase_amount: amountJson(amount),
      points_awarded: awarded,
      points_deducted: deducted,
      unique_customers: unique,
      new_cards: newCards,
      coupons_redeemed: redeemed,
      by_day: byDay,
    };
  }

  /** Every shop of the partner, in id order, a page at a time (exports stream these). */
  async *allShops(partnerId: number, pageSize = 500): AsyncGenerator<ShopView> {
    let after = 0;
    for (;;) {
      const rows = await repo.page(this.db, partnerId, after, pageSize);
      for (const row of rows) yield shopView(row);
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  /** The partner's shops as they stand, for an import to resolve its rows against. */
  async currentShops(tx: Executor, partnerId: number): Promise<ShopRow[]> {
    return repo.all(tx, partnerId);
  }

  /**
   * Applies a checked import plan in the caller's transaction. Codes that move are cleared
   * first, so that two shops swapping codes never collide on the unique index midway.
   */
  async applyImport(
    tx: Executor,
    partnerId: number,
    plan: { creates: Array<Partial<ShopFields> & { name: string }>; updates: Array<{ id: number; fields: Partial<ShopFields> }> },
  ): Promise<void> {
    await repo.clearCodes(
      tx,
      partnerId,
      plan.updates.filter((u) => u.fields.code !== undefined).map((u) => u.id),
    );
    for (const u of plan.updates) await repo.update(tx, partnerId, u.id, u.fields);
    await repo.insertMany(tx, partnerId, plan.creates);
  }
}
