// SQL for products and categories. Every function takes the owning partner: another
// partner's product or category is simply not found. The batch writes of an import pass
// whole columns as arrays (unnest), so a batch of a thousand products is a handful of
// statements with a handful of parameters each.
import { and, asc, count, eq, ilike, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Executor, Tx } from '../../infra/db/index.js';
import { catalogCategories, catalogImports, catalogProductCategories, catalogProducts } from './catalog.tables.js';
import type { MappedProduct } from './product-mapper.js';

export type ProductRow = typeof catalogProducts.$inferSelect;
export type CategoryRow = typeof catalogCategories.$inferSelect;

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;
const param = (v: unknown) => sql.param(v);

export interface ProductFilter {
  q?: string;
  categoryId?: number;
  inStock?: boolean;
  featured?: boolean;
  isActive: boolean;
  /** Products whose last_import_id is this import. */
  importId?: number;
}

/** `%`, `_` and `\` in a search are matched literally. */
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function productWhere(partnerId: number, f: ProductFilter): SQL {
  const conditions: SQL[] = [eq(catalogProducts.partnerId, partnerId), eq(catalogProducts.isActive, f.isActive)];
  if (f.q !== undefined && f.q.trim() !== '') {
    const pattern = likePattern(f.q.trim());
    conditions.push(
      or(
        ilike(catalogProducts.name, pattern),
        ilike(catalogProducts.sku, pattern),
        ilike(catalogProducts.ean, pattern),
        ilike(catalogProducts.brand, pattern),
      )!,
    );
  }
  if (f.inStock !== undefined) conditions.push(eq(catalogProducts.availability, f.inStock));
  if (f.featured !== undefined) conditions.push(eq(catalogProducts.featured, f.featured));
  if (f.importId !== undefined) conditions.push(eq(catalogProducts.lastImportId, f.importId));
  if (f.categoryId !== undefined) {
    // The category and every category under it.
    conditions.push(sql`exists (
      with recursive tree(id) as (
        select id from ${catalogCategories} where id = ${f.categoryId} and partner_id = ${partnerId}
        union select c.id from ${catalogCategories} c join tree on c.parent_id = tree.id
      )
      select 1 from ${catalogProductCategories} pc join tree on pc.category_id = tree.id where pc.product_id = ${catalogProducts.id}
    )`);
  }
  return and(...conditions)!;
}

export interface ExistingProduct {
  id: number;
  import_key: string;
  content_hash: string;
  is_active: boolean;
  last_import_id: number | null;
}

/** Columns a batch of products is written with, in one order. */
const PRODUCT_COLUMNS = sql.raw(`import_key text, xml_id text, external_id text, sku text, ean text, name text, description text,
  brand text, model text, image_url text, images jsonb, external_url text, weight text, color text, size text, price numeric,
  discounted_price numeric, currency text, availability boolean, stock_quantity int, delivery_info text, warranty_info text,
  featured boolean, content_hash text`);

/**
 * A batch of products as one JSON parameter read back as rows: one native JSON.stringify
 * instead of a text array per column for the driver to escape value by value.
 */
function productRows(products: readonly MappedProduct[]): SQL {
  const json = JSON.stringify(
    products.map((p) => ({
      import_key: p.importKey,
      xml_id: p.xml_id,
      external_id: p.external_id,
      sku: p.sku,
      ean: p.ean,
      name: p.name,
      description: p.description,
      brand: p.brand,
      model: p.model,
      image_url: p.image_url,
      images: p.images,
      external_url: p.external_url,
      weight: p.weight,
      color: p.color,
      size: p.size,
      price: p.price,
      discounted_price: p.discounted_price,
      currency: p.currency,
      availability: p.availability,
      stock_quantity: p.stock_quantity,
      delivery_info: p.delivery_info,
      warranty_info: p.warranty_info,
      featured: p.featured,
      content_hash: p.hash,
    })),
  );
  // jsonb: parsed once into its binary form, then read row by row — a third less of the
  // statement's time than json_to_recordset, which parses each object as it goes.
  return sql`jsonb_to_recordset(${json}::jsonb) as v(${PRODUCT_COLUMNS})`;
}

export const catalogRepository = {
  async listProducts(db: Executor, partnerId: number, f: ProductFilter, limit: number, offset: number) {
    const where = productWhere(partnerId, f);
    const rows = await db.select().from(catalogProducts).where(where).orderBy(asc(catalogProducts.id)).limit(limit).offset(offset);
    const [total] = await db.select({ n: count() }).from(catalogProducts).where(where);
    return { rows, total: total?.n ?? 0 };
  },

  async findProduct(db: Executor, partnerId: number, id: number): Promise<ProductRow | undefined> {
    const [row] = await db
      .select()
      .from(catalogProducts)
      .where(and(eq(catalogProducts.partnerId, partnerId), eq(catalogProducts.id, id)));
    return row;
  },

  /** product id → its categories. */
  async categoriesOf(db: Executor, productIds: number[]): Promise<Map<number, Array<{ id: number; name: string }>>> {
    const out = new Map<number, Array<{ id: number; name: string }>>();
    if (productIds.length === 0) return out;
    const rows = await db
      .select({ productId: catalogProductCategories.productId, id: catalogCategories.id, name: catalogCategories.name })
      .from(catalogProductCategories)
      .innerJoin(catalogCategories, eq(catalogCategories.id, catalogProductCategories.categoryId))
      .where(inArray(catalogProductCategories.productId, productIds))
      .orderBy(asc(catalogCategories.id));
    for (const r of rows) {
      const list = out.get(r.productId);
      if (list) list.push({ id: r.id, name: r.name });
      else out.set(r.productId, [{ id: r.id, name: r.name }]);
    }
    return out;
  },

  async listCategories(db: Executor, partnerId: number): Promise<CategoryRow[]> {
    return db.select().from(catalogCategories).where(eq(catalogCategories.partnerId, partnerId)).orderBy(asc(catalogCategories.id));
  },

  /** Categories linked to at least one active product, with how many. */
  async categoriesInUse(db: Executor, partnerId: number) {
    return rowsOf<{ id: number; name: string; parent_id: number | null; path: string; product_count: number }>(
      await db.execute(sql`
        select c.id, c.name, c.parent_id, c.path, count(*)::int as product_count
        from ${catalogCategories} c
        join ${catalogProductCategories} pc on pc.category_id = c.id
        join ${catalogProducts} p on p.id = pc.product_id and p.is_active
        where c.partner_id = ${partnerId}
        group by c.id
        order by c.id`),
    );
  },

  async syncStatus(db: Executor, partnerId: number) {
    const [counts] = rowsOf<{
      total: number;
      active: number;
      discounted: number;
      in_stock: number;
      categories_used: number;
      last_sync: Date | string | null;
    }>(
      await db.execute(sql`
        select
          (select count(*)::int from ${catalogProducts} where partner_id = ${partnerId}) as total,
          (select count(*)::int from ${catalogProducts} where partner_id = ${partnerId} and is_active) as active,
          (select count(*)::int from ${catalogProducts}
             where partner_id = ${partnerId} and is_active and discounted_price < price) as discounted,
          (select count(*)::int from ${catalogProducts} where partner_id = ${partnerId} and is_active and availability) as in_stock,
          (select count(distinct pc.category_id)::int from ${catalogProductCategories} pc
             join ${catalogProducts} p on p.id = pc.product_id
             where p.partner_id = ${partnerId} and p.is_active) as categories_used,
          (select max(finished_at) from ${catalogImports} where partner_id = ${partnerId} and status = 'completed') as last_sync`),
    );
    return counts!;
  },

  // --- import writes ------------------------------------------------------------------------

  /** Upserts categories by key; returns key → id for all of them. */
  async upsertCategories(
    tx: Tx,
    partnerId: number,
    categories: ReadonlyArray<{ key: string; name: string; parentKey: string | null; path: string }>,
    /** Categories written earlier (parents may be among them). */
    known: ReadonlyMap<string, number>,
  ): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (categories.length === 0) return out;
    const rows = rowsOf<{ id: number; external_key: string }>(
      await tx.execute(sql`
        insert into ${catalogCategories} (partner_id, external_key, name, path)
        select ${partnerId}, k, n, p from unnest(${param(categories.map((c) => c.key))}::text[],
          ${param(categories.map((c) => c.name))}::text[], ${param(categories.map((c) => c.path))}::text[]) as v(k, n, p)
        on conflict (partner_id, external_key) do update set name = excluded.name, path = excluded.path, updated_at = now()
          where ${catalogCategories}.name is distinct from excluded.name or ${catalogCategories}.path is distinct from excluded.path
        returning id, external_key`),
    );
    for (const r of rows) out.set(r.external_key, r.id);
    const missing = categories.filter((c) => !out.has(c.key)).map((c) => c.key);
    if (missing.length > 0) {
      const existing = await tx
        .select({ id: catalogCategories.id, key: catalogCategories.externalKey })
        .from(catalogCategories)
        .where(and(eq(catalogCategories.partnerId, partnerId), inArray(catalogCategories.externalKey, missing)));
      for (const r of existing) out.set(r.key, r.id);
    }
    const idOf = (key: string) => out.get(key) ?? known.get(key);
    const withParent = categories.filter((c) => c.parentKey !== null && idOf(c.parentKey) !== undefined && out.has(c.key));
    if (withParent.length > 0) {
      await tx.execute(sql`
        update ${catalogCategories} c set parent_id = v.parent_id
        from unnest(${param(withParent.map((c) => out.get(c.key)!))}::int[], ${param(withParent.map((c) => idOf(c.parentKey!)!))}::int[]) as v(id, parent_id)
        where c.id = v.id and c.partner_id = ${partnerId} and c.parent_id is distinct from v.parent_id`);
    }
    return out;
  },

  async existingProducts(tx: Tx, partnerId: number, keys: string[]): Promise<ExistingProduct[]> {
    if (keys.length === 0) return [];
    return rowsOf<ExistingProduct>(
      await tx.execute(sql`
        select id, import_key, content_hash, is_active, last_import_id from ${catalogProducts}
        where partner_id = ${partnerId} and import_key = any(${param(keys)}::text[])`),
    );
  },

  /**
   * Inserts the products whose key the partner does not have yet, with their category links,
   * in one statement; returns import_key → id of those inserted (the others already exist).
   */
  async insertNew(
    tx: Tx,
    partnerId: number,
    importId: number,
    products: readonly MappedProduct[],
    links: ReadonlyArray<{ importKey: string; categoryId: number }>,
  ): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (products.length === 0) return out;
    const rows = rowsOf<{ id: number; import_key: string }>(
      await tx.execute(sql`
        with inserted as (
          insert into ${catalogProducts} (partner_id, last_import_id, import_key, xml_id, external_id, sku, ean, name, description,
            brand, model, image_url, images, external_url, weight, color, size, price, discounted_price, currency, availability,
            stock_quantity, delivery_info, warranty_info, featured, content_hash)
          select ${partnerId}, ${importId}, v.import_key, v.xml_id, v.external_id, v.sku, v.ean, v.name, v.description, v.brand,
            v.model, v.image_url, v.images, v.external_url, v.weight, v.color, v.size, v.price, v.discounted_price, v.currency,
            v.availability, v.stock_quantity, v.delivery_info, v.warranty_info, v.featured, v.content_hash
          from ${productRows(products)}
          on conflict (partner_id, import_key) do nothing
          returning id, import_key
        ), linked as (
          insert into ${catalogProductCategories} (product_id, category_id)
          select i.id, l.category_id
          from inserted i
          join unnest(${param(links.map((l) => l.importKey))}::text[], ${param(links.map((l) => l.categoryId))}::int[]) as l(import_key, category_id)
            on l.import_key = i.import_key
          on conflict do nothing
        )
        select id, import_key from inserted`),
    );
    for (const r of rows) out.set(r.import_key, r.id);
    return out;
  },

  /** Rewrites changed products (and makes them active again); returns import_key → id. */
  async updateProducts(tx: Tx, partnerId: number, importId: number, products: readonly MappedProduct[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (products.length === 0) return out;
    const rows = rowsOf<{ id: number; import_key: string }>(
      await tx.execute(sql`
        update ${catalogProducts} p set
          xml_id = v.xml_id, external_id = v.external_id, sku = v.sku, ean = v.ean, name = v.name,
          description = v.description, brand = v.brand, model = v.model, image_url = v.image_url, images = v.images,
          external_url = v.external_url, weight = v.weight, color = v.color, size = v.size, price = v.price,
          discounted_price = v.discounted_price, currency = v.currency, availability = v.availability,
          stock_quantity = v.stock_quantity, delivery_info = v.delivery_info, warranty_info = v.warranty_info,
          featured = v.featured, content_hash = v.content_hash, is_active = true, last_import_id = ${importId},
          updated_at = now()
        from ${productRows(products)}
        where p.partner_id = ${partnerId} and p.import_key = v.import_key
        returning p.id, p.import_key`),
    );
    for (const r of rows) out.set(r.import_key, r.id);
    return out;
  },

  /** Marks products as seen by this import without changing them. */
  async touchProducts(tx: Tx, partnerId: number, importId: number, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await tx.execute(sql`
      update ${catalogProducts} set last_import_id = ${importId}
      where partner_id = ${partnerId} and id = any(${param(ids)}::int[])`);
  },

  /** Removes the category links of `unlink`, then adds `links`. */
  async linkCategories(tx: Tx, unlink: number[], links: ReadonlyArray<{ productId: number; categoryId: number }>): Promise<void> {
    if (unlink.length > 0) await tx.execute(sql`delete from ${catalogProductCategories} where product_id = any(${param(unlink)}::int[])`);
    if (links.length === 0) return;
    await tx.execute(sql`
      insert into ${catalogProductCategories} (product_id, category_id)
      select * from unnest(${param(links.map((l) => l.productId))}::int[], ${param(links.map((l) => l.categoryId))}::int[])
      on conflict do nothing`);
  },

  /** Replace mode: the partner's active products this import did not see become inactive; returns their ids. */
  /** Active products of the partner that replace mode would deactivate (some other import saw them last). */
  async countUnseen(tx: Tx, partnerId: number, importId: number): Promise<number> {
    const [row] = rowsOf<{ n: number | string }>(
      await tx.execute(sql`
        select count(*) as n from ${catalogProducts}
        where partner_id = ${partnerId} and is_active and last_import_id is distinct from ${importId}`),
    );
    return Number(row?.n ?? 0);
  },

  async deactivateUnseen(tx: Tx, partnerId: number, importId: number): Promise<number[]> {
    const rows = rowsOf<{ id: number }>(
      await tx.execute(sql`
        update ${catalogProducts} set is_active = false, updated_at = now()
        where partner_id = ${partnerId} and is_active and last_import_id is distinct from ${importId}
        returning id`),
    );
    return rows.map((r) => r.id);
  },

  /** Those of `ids` that are the partner's catalogue products (active or not: a product the next import brings back stays meant). */
  async ownedProductIds(db: Executor, partnerId: number, ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await db
      .select({ id: catalogProducts.id })
      .from(catalogProducts)
      .where(and(eq(catalogProducts.partnerId, partnerId), inArray(catalogProducts.id, ids)));
    return rows.map((r) => r.id);
  },

  async ownedCategoryIds(db: Executor, partnerId: number, ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await db
      .select({ id: catalogCategories.id })
      .from(catalogCategories)
      .where(and(eq(catalogCategories.partnerId, partnerId), inArray(catalogCategories.id, ids)));
    return rows.map((r) => r.id);
  },

};
