// The partner's catalogue as the Shop interface shows it (DESIGN.md §9): products with their
// categories, categories, and the product synchronisation status.
import type { Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import { missing, ok, type Result } from '../../shared/errors.js';
import { amountToJson } from '../../shared/money.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import type { Category, Product, ProductSyncStatus as ProductSyncStatusSchema } from './catalog.schemas.js';
import { catalogRepository as repo, type CategoryRow, type ProductFilter, type ProductRow } from './catalog.repository.js';

export type ProductView = Static<typeof Product>;

export type CategoryView = Static<typeof Category>;

export type ProductSyncStatus = Static<typeof ProductSyncStatusSchema>;

const amount = (v: string | null) => (v === null ? null : amountToJson(v));
const instant = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

export function productView(row: ProductRow, categories: Array<{ id: number; name: string }>): ProductView {
  return {
    id: row.id,
    xml_id: row.xmlId,
    external_id: row.externalId,
    sku: row.sku,
    ean: row.ean,
    name: row.name,
    description: row.description,
    brand: row.brand,
    model: row.model,
    image_url: row.imageUrl,
    images: row.images,
    external_url: row.externalUrl,
    weight: row.weight,
    color: row.color,
    size: row.size,
    price: amount(row.price),
    discounted_price: amount(row.discountedPrice),
    currency: row.currency,
    availability: row.availability,
    stock_quantity: row.stockQuantity,
    delivery_info: row.deliveryInfo,
    warranty_info: row.warrantyInfo,
    featured: row.featured,
    is_active: row.isActive,
    categories,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    last_import_id: row.lastImportId,
  };
}

const categoryView = (row: Pick<CategoryRow, 'id' | 'name' | 'parentId' | 'path'>): CategoryView => ({
  id: row.id,
  name: row.name,
  parent_id: row.parentId,
  path: row.path,
});

export class CatalogService {
  constructor(private readonly db: Db) {}

  /** Those of `ids` that are the partner's products (active or not), for another module's ownership check. */
  ownedProductIds(partnerId: number, ids: number[], tx: Executor = this.db): Promise<number[]> {
    return repo.ownedProductIds(tx, partnerId, ids);
  }

  /** Those of `ids` that are the partner's categories. */
  ownedCategoryIds(partnerId: number, ids: number[], tx: Executor = this.db): Promise<number[]> {
    return repo.ownedCategoryIds(tx, partnerId, ids);
  }

  async listProducts(partnerId: number, filter: ProductFilter, page: PageWindow): Promise<{ items: ProductView[]; total: number }> {
    const { rows, total } = await repo.listProducts(this.db, partnerId, filter, page.perPage, page.offset);
    const categories = await repo.categoriesOf(
      this.db,
      rows.map((r) => r.id),
    );
    return { items: rows.map((r) => productView(r, categories.get(r.id) ?? [])), total };
  }

  async getProduct(partnerId: number, id: number): Promise<Result<ProductView>> {
    const row = await repo.findProduct(this.db, partnerId, id);
    if (!row) return missing('resource.product');
    const categories = await repo.categoriesOf(this.db, [row.id]);
    return ok(productView(row, categories.get(row.id) ?? []));
  }

  async categories(partnerId: number): Promise<CategoryView[]> {
    return (await repo.listCategories(this.db, partnerId)).map(categoryView);
  }

  async categoriesInUse(partnerId: number): Promise<Array<CategoryView & { product_count: number }>> {
    return (await repo.categoriesInUse(this.db, partnerId)).map((r) => ({
      id: r.id,
      name: r.name,
      parent_id: r.parent_id,
      path: r.path,
      product_count: r.product_count,
    }));
  }

  async syncStatus(partnerId: number): Promise<ProductSyncStatus> {
    const s = await repo.syncStatus(this.db, partnerId);
    return {
      total_products: s.total,
      active_products: s.active,
      inactive_products: s.total - s.active,
      products_with_discount: s.discounted,
      products_in_stock: s.in_stock,
      categories_used: s.categories_used,
      last_sync: instant(s.last_sync),
    };
  }
}
