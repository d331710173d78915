// Wallet passes (DESIGN.md §15): each partner's Apple and Google configuration (private keys
// encrypted with LOYALTY_SECRETS_KEY), the passes handed out with their authentication
// tokens (hashed), and the devices Apple Wallet registered for updates.
import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { partners } from '../partners/partners.tables.js';

const tz = (name: string) => timestamp(name, { withTimezone: true });

export const walletConfigs = pgTable('wallet_configs', {
  partnerId: integer('partner_id')
    .primaryKey()
    .references(() => partners.id, { onDelete: 'cascade' }),
  applePassTypeIdentifier: text('apple_pass_type_identifier'),
  appleTeamIdentifier: text('apple_team_identifier'),
  /** The Pass Type ID certificate and Apple's WWDR certificate, PEM (public, shown as subjects and expiry). */
  appleCertificate: text('apple_certificate'),
  appleWwdrCertificate: text('apple_wwdr_certificate'),
  /** The certificate's private key (unencrypted PKCS#8 PEM) sealed with the secrets key (secret-box.ts). */
  appleKeySealed: text('apple_key_sealed'),
  appleUpdatedAt: tz('apple_updated_at'),
  googleIssuerId: text('google_issuer_id'),
  googleClientEmail: text('google_client_email'),
  /** The whole service-account JSON key file, sealed with the secrets key. */
  googleServiceAccountSealed: text('google_service_account_sealed'),
  googleUpdatedAt: tz('google_updated_at'),
});

/**
 * An Apple pass handed out, with its authenticationToken's SHA-256 (how a device's token is
 * found). One current pass per card or coupon, pass type and language (`token_sealed` set,
 * unique): downloading again hands out the same token, so storage stays bounded and no
 * device's pass stops working. Rows without `token_sealed` are from before (one per download)
 * or were retired when the secrets key changed: they only authenticate the tokens devices hold.
 */
export const walletPasses = pgTable(
  'wallet_passes',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    kind: text({ enum: ['card', 'coupon'] }).notNull(),
    /** loyalty_cards.id or coupons.id (no foreign key: the pass outlives nothing it shows, and both tables keep their rows). */
    subjectId: integer('subject_id').notNull(),
    passTypeIdentifier: text('pass_type_identifier').notNull(),
    serialNumber: text('serial_number').notNull(),
    tokenHash: text('token_hash').notNull(),
    /** The token itself, sealed with the secrets key (secret-box.ts), to put in the pass again; null on rows that only authenticate. */
    tokenSealed: text('token_sealed'),
    /** The language the pass was made in (the path's locale); updates keep it. */
    locale: text({ enum: ['en', 'lt'] }).notNull(),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('wallet_passes_token_idx').on(t.passTypeIdentifier, t.serialNumber, t.tokenHash),
    index('wallet_passes_subject_idx').on(t.kind, t.subjectId),
    uniqueIndex('wallet_passes_current_key').on(t.kind, t.subjectId, t.passTypeIdentifier, t.locale).where(sql`${t.tokenSealed} is not null`),
  ],
);

/** A device that asked for a pass's updates (Apple's web service "register"). */
export const walletRegistrations = pgTable(
  'wallet_registrations',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    passId: integer('pass_id')
      .notNull()
      .references(() => walletPasses.id, { onDelete: 'cascade' }),
    deviceLibraryIdentifier: text('device_library_identifier').notNull(),
    /** As the device registered it: a newer download of the same pass takes over the registration. */
    passTypeIdentifier: text('pass_type_identifier').notNull(),
    serialNumber: text('serial_number').notNull(),
    pushToken: text('push_token').notNull(),
    /** The pass's modification stamp (wallet.repository.ts `modifiedAt`) the device was last told about, or registered at. */
    pushedModifiedAt: tz('pushed_modified_at').notNull(),
    lastPushAt: tz('last_push_at'),
    attempts: integer().notNull().default(0),
    nextAttemptAt: tz('next_attempt_at'),
    lastError: text('last_error'),
    createdAt: tz('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('wallet_registrations_device_serial_key').on(t.deviceLibraryIdentifier, t.passTypeIdentifier, t.serialNumber),
    index('wallet_registrations_pass_idx').on(t.passId),
    index('wallet_registrations_due_idx').on(t.nextAttemptAt).where(sql`${t.nextAttemptAt} is not null`),
  ],
);

/** Google Wallet objects to patch: one per card or coupon saved through a save link, with the stamp last sent. */
export const walletGoogleObjects = pgTable(
  'wallet_google_objects',
  {
    id: integer().primaryKey().generatedAlwaysAsIdentity(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id, { onDelete: 'cascade' }),
    kind: text({ enum: ['card', 'coupon'] }).notNull(),
    subjectId: integer('subject_id').notNull(),
    objectId: text('object_id').notNull(),
    locale: text({ enum: ['en', 'lt'] }).notNull(),
    pushedModifiedAt: tz('pushed_modified_at').notNull(),
    lastPushAt: tz('last_push_at'),
    attempts: integer().notNull().default(0),
    nextAttemptAt: tz('next_attempt_at'),
    lastError: text('last_error'),
  },
  (t) => [uniqueIndex('wallet_google_objects_subject_key').on(t.kind, t.subjectId)],
);
