// The seam between the catalog import and the offers module (DESIGN.md §8, §9): a product
// whose discounted price is below its price carries an import-sourced offer
// (`source: "import"`, `discount_type: "price"`), which ends when the discount or the
// product leaves the catalogue. The import calls these operations inside the transaction of
// each batch of products, so an offer changes if and only if its product's change commits.
//
// The offers module implements this interface (src/modules/offers/imported-offers.ts, wired in
// src/context.ts); `noImportedOffers` lets a test run imports without offers.
import type { Tx } from '../../infra/db/index.js';

/** One product's discount, as the offer should show it. */
export interface ImportedDiscount {
  productId: number;
  /** The product's name: the offer's title (≤ 1000 characters; the offer may cut it to 255). */
  name: string;
  /** Exact decimal text, 4 places ("12.9900"): the price before the discount. */
  price: string;
  /** Exact decimal text, 4 places: the discounted price (discount_value of a "price" offer). */
  discountedPrice: string;
  /** ISO 4217 code as the feed gave it, or null. */
  currency: string | null;
  /** The product's categories (catalog category ids), for the offer's category_ids. */
  categoryIds: number[];
}

export interface ImportedOffers {
  /**
   * Creates the import-sourced offer of each product, or brings an existing one up to date
   * (title, price, discount, categories) and active again. Idempotent per product.
   */
  upsert(tx: Tx, partnerId: number, discounts: readonly ImportedDiscount[]): Promise<void>;
  /**
   * Ends the import-sourced offer of each product, if it has one (its discount is gone, or
   * the product became inactive). Products without one are ignored.
   */
  end(tx: Tx, partnerId: number, productIds: readonly number[]): Promise<void>;
}

/** Until the offers module is wired in: import-sourced offers are not kept anywhere. */
export const noImportedOffers: ImportedOffers = {
  upsert: async () => undefined,
  end: async () => undefined,
};
