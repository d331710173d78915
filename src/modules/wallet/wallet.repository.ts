// SQL of the wallet module. The pass's modification stamp is read from the rows that make up
// what a pass shows — the card (every ledger write and tier move sets updated_at), its
// programme (title, design) and its tier (name, colour); for a coupon, the coupon and its
// programme — so that no other module needs a hook: the update worker and Apple's "updated
// since" tag and Last-Modified all compare that stamp, in microseconds since the epoch.
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { Executor } from '../../infra/db/index.js';
import type { CardDesign } from '../partner-cards/partner-cards.tables.js';
import { walletConfigs, walletPasses, walletRegistrations } from './wallet.tables.js';

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

export type WalletConfigRow = typeof walletConfigs.$inferSelect;
export type PassKind = 'card' | 'coupon';

/** What a pass shows besides the card or coupon view: the programme and the partner, and the stamp. */
export interface PassFacts {
  partnerId: number;
  partnerName: string;
  partnerCardId: number;
  title: { en: string; lt: string };
  design: CardDesign;
  /** Microseconds since the epoch, as text (exact). */
  modified: string;
}

const MODIFIED = {
  card: sql`greatest(lc.updated_at, pc.updated_at, coalesce(t.updated_at, lc.updated_at))`,
  coupon: sql`greatest(c.updated_at, pc.updated_at)`,
};
const micros = (expr: ReturnType<typeof sql>) => sql`(floor(extract(epoch from ${expr}) * 1000000))::bigint::text`;
/** Exact (integer microseconds; to_timestamp goes through a double). */
const fromMicros = (value: string) => sql`(timestamptz 'epoch' + ${value}::bigint * interval '1 microsecond')`;

export const walletRepository = {
  async config(db: Executor, partnerId: number): Promise<WalletConfigRow | undefined> {
    const [row] = await db.select().from(walletConfigs).where(eq(walletConfigs.partnerId, partnerId));
    return row;
  },

  async saveConfig(db: Executor, partnerId: number, fields: Partial<Omit<WalletConfigRow, 'partnerId'>>): Promise<void> {
    await db.insert(walletConfigs).values({ partnerId, ...fields }).onConflictDoUpdate({ target: walletConfigs.partnerId, set: fields });
  },

  /** The facts of a card or coupon of the partner (tenant check by the caller's view already done; the partner id is checked again here). */
  async facts(db: Executor, kind: PassKind, partnerId: number, subjectId: number): Promise<PassFacts | undefined> {
    const result =
      kind === 'card'
        ? await db.execute(sql`
            select lc.partner_id, p.name as partner_name, pc.id as partner_card_id, pc.title, pc.card_design, ${micros(MODIFIED.card)} as modified
            from loyalty_cards lc join partner_cards pc on pc.id = lc.partner_card_id join partners p on p.id = lc.partner_id
            left join tiers t on t.id = lc.tier_id
            where lc.id = ${subjectId} and lc.partner_id = ${partnerId}`)
        : await db.execute(sql`
            select c.partner_id, p.name as partner_name, pc.id as partner_card_id, pc.title, pc.card_design, ${micros(MODIFIED.coupon)} as modified
            from coupons c join loyalty_cards lc on lc.id = c.card_id join partner_cards pc on pc.id = lc.partner_card_id
            join partners p on p.id = c.partner_id
            where c.id = ${subjectId} and c.partner_id = ${partnerId}`);
    const [r] = rowsOf<{ partner_id: number; partner_name: string; partner_card_id: number; title: { en: string; lt: string }; card_design: CardDesign; modified: string }>(result);
    if (!r) return undefined;
    return {
      partnerId: Number(r.partner_id),
      partnerName: r.partner_name,
      partnerCardId: Number(r.partner_card_id),
      title: r.title,
      design: r.card_design ?? {},
      modified: String(r.modified),
    };
  },

  /** The current pass of a card or coupon in this pass type and language (the one a download hands out again). */
  async currentPass(db: Executor, kind: PassKind, subjectId: number, passTypeIdentifier: string, locale: 'en' | 'lt') {
    const [row] = await db
      .select()
      .from(walletPasses)
      .where(
        and(
          eq(walletPasses.kind, kind),
          eq(walletPasses.subjectId, subjectId),
          eq(walletPasses.passTypeIdentifier, passTypeIdentifier),
          eq(walletPasses.locale, locale),
          isNotNull(walletPasses.tokenSealed),
        ),
      );
    return row;
  },

  /** A new current pass; false when another request made one first (then read that one). */
  async insertCurrentPass(db: Executor, row: typeof walletPasses.$inferInsert & { tokenSealed: string }): Promise<boolean> {
    const result = await db.execute(sql`
      insert into wallet_passes (partner_id, kind, subject_id, pass_type_identifier, serial_number, token_hash, token_sealed, locale)
      values (${row.partnerId}, ${row.kind}, ${row.subjectId}, ${row.passTypeIdentifier}, ${row.serialNumber}, ${row.tokenHash}, ${row.tokenSealed}, ${row.locale})
      on conflict (kind, subject_id, pass_type_identifier, locale) where token_sealed is not null do nothing
      returning id`);
    return rowsOf<{ id: number }>(result).length > 0;
  },

  /**
   * A current pass whose token can no longer be put in a pass (sealed with another secrets
   * key, or its card's number changed) stops being current; it keeps authenticating the token
   * devices hold.
   */
  async retirePass(db: Executor, id: number): Promise<void> {
    await db.update(walletPasses).set({ tokenSealed: null }).where(eq(walletPasses.id, id));
  },

  /** The pass of this type and serial whose token hashes to this (an index lookup: never a scan of the serial's rows). */
  async passByToken(db: Executor, passTypeIdentifier: string, serialNumber: string, tokenHash: string) {
    const [row] = await db
      .select()
      .from(walletPasses)
      .where(and(eq(walletPasses.passTypeIdentifier, passTypeIdentifier), eq(walletPasses.serialNumber, serialNumber), eq(walletPasses.tokenHash, tokenHash)))
      .orderBy(walletPasses.id)
      .limit(1);
    return row;
  },

  /** 'created' or 'updated' (the device had registered this serial before: its push token and pass are refreshed). */
  async register(
    db: Executor,
    r: { passId: number; device: string; passTypeIdentifier: string; serialNumber: string; pushToken: string; modifiedMicros: string },
  ): Promise<'created' | 'updated'> {
    const result = await db.execute(sql`
      insert into wallet_registrations (pass_id, device_library_identifier, pass_type_identifier, serial_number, push_token, pushed_modified_at)
      values (${r.passId}, ${r.device}, ${r.passTypeIdentifier}, ${r.serialNumber}, ${r.pushToken}, ${fromMicros(r.modifiedMicros)})
      on conflict (device_library_identifier, pass_type_identifier, serial_number)
      do update set pass_id = excluded.pass_id, push_token = excluded.push_token
      returning (xmax = 0) as inserted`);
    return rowsOf<{ inserted: boolean }>(result)[0]!.inserted ? 'created' : 'updated';
  },

  async unregister(db: Executor, device: string, passTypeIdentifier: string, serialNumber: string): Promise<void> {
    await db
      .delete(walletRegistrations)
      .where(
        and(
          eq(walletRegistrations.deviceLibraryIdentifier, device),
          eq(walletRegistrations.passTypeIdentifier, passTypeIdentifier),
          eq(walletRegistrations.serialNumber, serialNumber),
        ),
      );
  },

  /** The device's passes of this type with their stamps, changed after `since` (µs) when given. */
  async devicePasses(db: Executor, device: string, passTypeIdentifier: string): Promise<Array<{ serialNumber: string; modified: string }>> {
    const result = await db.execute(sql`
      select r.serial_number, case when wp.kind = 'card' and lc.id is not null then ${micros(MODIFIED.card)} when wp.kind = 'coupon' and c.id is not null then ${micros(MODIFIED.coupon)} end as modified
      from wallet_registrations r join wallet_passes wp on wp.id = r.pass_id
      left join loyalty_cards lc on wp.kind = 'card' and lc.id = wp.subject_id and lc.partner_id = wp.partner_id
      left join tiers t on t.id = lc.tier_id
      left join coupons c on wp.kind = 'coupon' and c.id = wp.subject_id and c.partner_id = wp.partner_id
      left join loyalty_cards clc on clc.id = c.card_id
      left join partner_cards pc on pc.id = coalesce(lc.partner_card_id, clc.partner_card_id)
      where r.device_library_identifier = ${device} and r.pass_type_identifier = ${passTypeIdentifier}`);
    return rowsOf<{ serial_number: string; modified: string | null }>(result)
      .filter((r) => r.modified !== null)
      .map((r) => ({ serialNumber: r.serial_number, modified: String(r.modified) }));
  },

  /**
   * Registrations whose card changed after the device was last told, not told in the last
   * 10 s (one push per card per 10 s), not waiting for a retry: claimed for `leaseSeconds`
   * (SKIP LOCKED: nodes share the work, never do it twice).
   */
  async claimDuePushes(db: Executor, limit: number, leaseSeconds: number) {
    const result = await db.execute(sql`
      with due as (
        select r.id, ${MODIFIED.card} as modified, ${micros(MODIFIED.card)} as modified_us
        from wallet_registrations r join wallet_passes wp on wp.id = r.pass_id and wp.kind = 'card'
        join loyalty_cards lc on lc.id = wp.subject_id and lc.partner_id = wp.partner_id
        join partner_cards pc on pc.id = lc.partner_card_id
        left join tiers t on t.id = lc.tier_id
        where ${MODIFIED.card} > r.pushed_modified_at
          and (r.last_push_at is null or r.last_push_at <= now() - interval '10 seconds')
          and (r.next_attempt_at is null or r.next_attempt_at <= now())
        order by r.id
        limit ${limit}
        for update of r skip locked
      )
      update wallet_registrations r set next_attempt_at = now() + ${leaseSeconds} * interval '1 second'
      from due join wallet_passes wp on true
      where r.id = due.id and wp.id = r.pass_id
      returning r.id, r.push_token, r.attempts, wp.partner_id, wp.pass_type_identifier, due.modified_us as modified`);
    return rowsOf<{ id: number; push_token: string; attempts: number; partner_id: number; pass_type_identifier: string; modified: string }>(result).map(
      (r) => ({
        id: Number(r.id),
        pushToken: r.push_token,
        attempts: Number(r.attempts),
        partnerId: Number(r.partner_id),
        passTypeIdentifier: r.pass_type_identifier,
        modified: String(r.modified),
      }),
    );
  },

  async pushed(db: Executor, id: number, modified: string): Promise<void> {
    await db.execute(sql`
      update wallet_registrations set pushed_modified_at = ${fromMicros(modified)}, last_push_at = now(), attempts = 0, next_attempt_at = null, last_error = null
      where id = ${id}`);
  },

  async pushFailed(db: Executor, id: number, error: string, retryInSeconds: number): Promise<void> {
    await db.execute(sql`
      update wallet_registrations set attempts = attempts + 1, last_error = ${error.slice(0, 500)}, next_attempt_at = now() + ${retryInSeconds} * interval '1 second'
      where id = ${id}`);
  },

  async dropRegistration(db: Executor, id: number): Promise<void> {
    await db.delete(walletRegistrations).where(eq(walletRegistrations.id, id));
  },

  /** A card or coupon saved to Google Wallet through a save link: its object is patched when it changes. */
  async rememberGoogleObject(db: Executor, r: { partnerId: number; kind: PassKind; subjectId: number; objectId: string; locale: 'en' | 'lt'; modifiedMicros: string }): Promise<void> {
    await db.execute(sql`
      insert into wallet_google_objects (partner_id, kind, subject_id, object_id, locale, pushed_modified_at)
      values (${r.partnerId}, ${r.kind}, ${r.subjectId}, ${r.objectId}, ${r.locale}, ${fromMicros(r.modifiedMicros)})
      on conflict (kind, subject_id) do update set object_id = excluded.object_id, locale = excluded.locale`);
  },

  async claimDueGoogle(db: Executor, limit: number, leaseSeconds: number) {
    const result = await db.execute(sql`
      with due as (
        select g.id, ${MODIFIED.card} as modified, ${micros(MODIFIED.card)} as modified_us
        from wallet_google_objects g
        join loyalty_cards lc on g.kind = 'card' and lc.id = g.subject_id and lc.partner_id = g.partner_id
        join partner_cards pc on pc.id = lc.partner_card_id
        left join tiers t on t.id = lc.tier_id
        where ${MODIFIED.card} > g.pushed_modified_at
          and (g.last_push_at is null or g.last_push_at <= now() - interval '10 seconds')
          and (g.next_attempt_at is null or g.next_attempt_at <= now())
        order by g.id
        limit ${limit}
        for update of g skip locked
      )
      update wallet_google_objects g set next_attempt_at = now() + ${leaseSeconds} * interval '1 second'
      from due where g.id = due.id
      returning g.id, g.partner_id, g.subject_id, g.object_id, g.locale, g.attempts, due.modified_us as modified`);
    return rowsOf<{ id: number; partner_id: number; subject_id: number; object_id: string; locale: 'en' | 'lt'; attempts: number; modified: string }>(result).map((r) => ({
      locale: r.locale,
      id: Number(r.id),
      partnerId: Number(r.partner_id),
      cardId: Number(r.subject_id),
      objectId: r.object_id,
      attempts: Number(r.attempts),
      modified: String(r.modified),
    }));
  },

  async googlePushed(db: Executor, id: number, modified: string): Promise<void> {
    await db.execute(sql`
      update wallet_google_objects set pushed_modified_at = ${fromMicros(modified)}, last_push_at = now(), attempts = 0, next_attempt_at = null, last_error = null
      where id = ${id}`);
  },

  async googleFailed(db: Executor, id: number, error: string, retryInSeconds: number): Promise<void> {
    await db.execute(sql`
      update wallet_google_objects set attempts = attempts + 1, last_error = ${error.slice(0, 500)}, next_attempt_at = now() + ${retryInSeconds} * interval '1 second'
      where id = ${id}`);
  },
};
