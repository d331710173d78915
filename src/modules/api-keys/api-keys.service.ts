// API credentials: a public key and a 256-bit secret shown once and stored as SHA-256.
//
// Every API request authenticates, so the lookup is cached in process. A revoke must
// still take effect at once: it removes the entry on this node synchronously and
// NOTIFYs the others through the database, delivered when the revoke commits. A cached
// entry also carries its partner's status, name and limits: a change to those (an operator
// suspending the partner) drops the partner's entries on every node through the database's
// own notification (infra/account-cache.ts). While a node is not listening (connection
// lost) it does not cache at all. A generation counter stops a lookup that raced with a
// revoke from re-caching the stale row.
import type { Static } from 'typebox';
import { ACCOUNTS_CHANNEL, parseAccountChange } from '../../infra/account-cache.js';
import type { ApiKeyAuthenticator, ApiPrincipal } from '../../infra/auth.js';
import type { Database, Executor } from '../../infra/db/index.js';
import { timingSafeEqual } from 'node:crypto';
import { randomToken, sha256, sha256Hex } from '../../shared/crypto.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import { API_KEYS_CHANNEL, apiKeysRepository as repo, type ApiKeyRow } from './api-keys.repository.js';
import type { ApiKey } from './api-keys.schemas.js';

interface CacheEntry {
  /** SHA-256 of the secret, as bytes (the row keeps it as hex). */
  secretDigest: Buffer;
  principal: ApiPrincipal;
  expiresAt: number;
}

export type ApiKeyView = Static<typeof ApiKey>;

const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 10_000;

const view = (row: ApiKeyRow): ApiKeyView => ({ id: row.id, name: row.name, key: row.key, created_at: iso(row.createdAt) });

export class ApiKeysService implements ApiKeyAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  /** Cached entries are trusted only while both channels are heard. */
  private listeningKeys = false;
  private listeningAccounts = false;
  private generation = 0;

  constructor(private readonly database: Database) {}

  private get listening(): boolean {
    return this.listeningKeys && this.listeningAccounts;
  }

  async start(): Promise<void> {
    await this.database.listen(
      API_KEYS_CHANNEL,
      (key) => this.invalidate(key),
      (listening) => {
        this.listeningKeys = listening;
        this.invalidate();
      },
    );
    await this.database.listen(
      ACCOUNTS_CHANNEL,
      (payload) => {
        const change = parseAccountChange(payload);
        if (!change) this.invalidate();
        else if (change.kind === 'partner') this.invalidatePartner(change.id);
      },
      (listening) => {
        this.listeningAccounts = listening;
        this.invalidate();
      },
    );
  }

  private invalidate(key?: string) {
    this.generation++;
    if (key === undefined) this.cache.clear();
    else this.cache.delete(key);
  }

  /** The partner's status, name or limits changed: its keys are read again. */
  private invalidatePartner(partnerId: number) {
    this.generation++;
    for (const [key, entry] of this.cache) if (entry.principal.partnerId === partnerId) this.cache.delete(key);
  }

  async create(partnerId: number, name: string, tx: Executor = this.database.db): Promise<ApiKeyView & { secret: string }> {
    const key = `lk_${randomToken(18)}`;
    const secret = `lsk_${randomToken(32)}`;
    const row = await repo.insert(tx, { partnerId, name, key, secretHash: sha256Hex(secret) });
    return { ...view(row), secret };
  }

  async list(partnerId: number, page: PageWindow): Promise<{ items: ApiKeyView[]; total: number }> {
    const { rows, total } = await repo.listActive(this.database.db, partnerId, page.perPage, page.offset);
    return { items: rows.map(view), total };
  }

  /** Returns false when the key does not exist, is another partner's, or is already revoked. */
  async revoke(partnerId: number, id: number): Promise<boolean> {
    const row = await this.database.db.transaction((tx) => repo.revoke(tx, partnerId, id));
    if (row) this.invalidate(row.key);
    return row !== undefined;
  }

  async authenticate(key: string, secret: string): Promise<ApiPrincipal | undefined> {
    if (key.length > 128 || secret.length > 256) return undefined;
    const presented = sha256(secret);
    const now = Date.now();
    let entry = this.listening ? this.cache.get(key) : undefined;
    if (!entry || entry.expiresAt < now) {
      const generation = this.generation;
      const row = await repo.findActiveByKey(this.database.db, key);
      if (!row) return undefined;
      entry = {
        secretDigest: Buffer.from(row.secretHash, 'hex'),
        expiresAt: now + CACHE_TTL_MS,
        principal: {
          kind: 'api',
          apiKeyId: row.id,
          partnerId: row.partnerId,
          partnerName: row.partnerName,
          ...(row.rateLimitPerMinute !== null
            ? { rateLimit: { perMinute: row.rateLimitPerMinute, perHour: row.rateLimitPerHour ?? 0 } }
            : {}),
        },
      };
      if (this.listening && generation === this.generation) {
        if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
        this.cache.set(key, entry);
      }
    }
    const stored = entry.secretDigest;
    return stored.length === presented.length && timingSafeEqual(stored, presented) ? entry.principal : undefined;
  }
}
