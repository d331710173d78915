// Import-sourced offers (DESIGN.md §8, §9): the offers side of the catalog's ImportedOffers
// seam. A product whose feed price is discounted carries one offer (`source: "import"`,
// `discount_type: "price"`, `discount_value` = the discounted price), kept in step by every
// import batch in the batch's own transaction and ended when the discount or the product
// leaves the feed. One statement per call, whatever the batch size.
//
// - The offer is keyed by (partner, product) through a partial unique index, so an upsert is
//   idempotent and concurrent imports of one partner cannot make two.
// - An unchanged product leaves its offer's row alone (no new updated_at), so `last_sync` of
//   `GET shop/sync-status` moves only when an offer really changed.
// - An offer the partner deleted stays deleted: the partner decided against it, and removing
//   the discount from the feed is how to end it for good.
// - Ending sets `ends_at` to now: the offer drops out of the live lists and counts as expired;
//   coupons already claimed keep their own expiry.
import { sql } from 'drizzle-orm';
import type { Tx } from '../../infra/db/index.js';
import type { ImportedDiscount, ImportedOffers } from '../catalog/imported-offers.js';

const TITLE_MAX = 255;

/** "12.9900" → "12.99": the feed's decimal without the storage padding. */
const plain = (decimal: string) => decimal.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');

function details(d: ImportedDiscount): string {
  const currency = d.currency ? ` ${d.currency}` : '';
  return `${plain(d.price)}${currency} → ${plain(d.discountedPrice)}${currency}`;
}

export const importedOffers: ImportedOffers = {
  async upsert(tx: Tx, partnerId: number, discounts: readonly ImportedDiscount[]): Promise<void> {
    if (discounts.length === 0) return;
    const rows = discounts.map((d) => ({
      product_id: d.productId,
      title: [...d.name].slice(0, TITLE_MAX).join(''),
      discounted: d.discountedPrice,
      details: details(d),
      category_ids: d.categoryIds,
    }));
    await tx.execute(sql`
      insert into offers (partner_id, title, discount_type, discount_value, reward_type, reward_details,
                          product_ids, category_ids, source, source_product_id)
      select ${partnerId}, d.title, 'price', d.discounted, 'coupon', d.details,
             array[d.product_id],
             coalesce((select array_agg(c::int order by c::int) from jsonb_array_elements_text(d.category_ids) c), '{}'),
             'import', d.product_id
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as d(product_id int, title text, discounted numeric, details text, category_ids jsonb)
      on conflict (partner_id, source_product_id) where source = 'import' do update set
        title = excluded.title,
        discount_value = excluded.discount_value,
        reward_details = excluded.reward_details,
        category_ids = excluded.category_ids,
        is_active = true,
        ends_at = null,
        updated_at = now()
      where offers.deleted_at is null and (
        offers.title is distinct from excluded.title
        or offers.discount_value is distinct from excluded.discount_value
        or offers.reward_details is distinct from excluded.reward_details
        or offers.category_ids is distinct from excluded.category_ids
        or not offers.is_active
        or offers.ends_at is not null)`);
  },

  async end(tx: Tx, partnerId: number, productIds: readonly number[]): Promise<void> {
    if (productIds.length === 0) return;
    await tx.execute(sql`
      update offers set ends_at = now(), updated_at = now()
      where partner_id = ${partnerId} and source = 'import' and deleted_at is null
        and source_product_id = any(${`{${productIds.map(Number).join(',')}}`}::int[])
        and (ends_at is null or ends_at > now())`);
  },
};
