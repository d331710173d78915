import type { Db, Executor } from '../../infra/db/index.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import { shopsRepository as repo, type ShopFields, type ShopRow } from './shops.repository.js';

export interface ShopView {
  id: number;
  partner_id: number;
  name: string;
  address: string | null;
  city: string | null;
  lat: number | null;
  lng: number | null;
  created_at: string;
  updated_at: string;
}

export interface ShopInput {
  name?: string;
  address?: string | null;
  city?: string | null;
  lat?: number | null;
  lng?: number | null;
}

const coord = (v: string | null) => (v === null ? null : Number(v));
const coordIn = (v: number | null | undefined) => (v === null || v === undefined ? null : v.toFixed(6));

export function shopView(row: ShopRow): ShopView {
  return {
    id: row.id,
    partner_id: row.partnerId,
    name: row.name,
    address: row.address,
    city: row.city,
    lat: coord(row.lat),
    lng: coord(row.lng),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

function fieldsOf(input: ShopInput): Partial<ShopFields> {
  const out: Partial<ShopFields> = {};
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.address !== undefined) out.address = input.address;
  if (input.city !== undefined) out.city = input.city;
  if (input.lat !== undefined) out.lat = coordIn(input.lat);
  if (input.lng !== undefined) out.lng = coordIn(input.lng);
  return out;
}

export class ShopsService {
  constructor(private readonly db: Db) {}

  async create(partnerId: number, input: ShopInput & { name: string }, tx: Executor = this.db): Promise<ShopView> {
    const fields = { address: null, city: null, lat: null, lng: null, ...fieldsOf(input) } as ShopFields;
    return shopView(await repo.insert(tx, partnerId, fields));
  }

  async get(partnerId: number, id: number): Promise<ShopView | undefined> {
    const row = await repo.find(this.db, partnerId, id);
    return row && shopView(row);
  }

  async list(partnerId: number, page: PageWindow): Promise<{ items: ShopView[]; total: number }> {
    const { rows, total } = await repo.list(this.db, partnerId, page.perPage, page.offset);
    return { items: rows.map(shopView), total };
  }

  async update(partnerId: number, id: number, input: ShopInput): Promise<ShopView | undefined> {
    const row = await repo.update(this.db, partnerId, id, fieldsOf(input));
    return row && shopView(row);
  }

  delete(partnerId: number, id: number): Promise<boolean> {
    return repo.delete(this.db, partnerId, id);
  }

  /** For other modules: the subset of `ids` owned by the partner. */
  ownedIds(partnerId: number, ids: number[], tx: Executor = this.db): Promise<number[]> {
    return repo.ownedIds(tx, partnerId, ids);
  }
}
