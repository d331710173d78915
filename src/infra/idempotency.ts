// Idempotency-Key (DESIGN.md §3). The key is stored in the primary database in the same
// transaction as the effect it guards: either both are committed or neither is, so a
// retry after a timeout never applies an effect twice and never loses one.
//
//   same key, same body, first one finished  → the first response replayed
//                                               (new request_id, Idempotent-Replayed: true)
//   same key, different body                 → 422 INVALID_VALUE
//   same key while the first is running      → 409 CONCURRENT_LIMIT_EXCEEDED
//
// "Running" is detected with a transaction-scoped advisory lock (across nodes) and an
// in-process set (PGlite serialises transactions, so the lock alone cannot see it there).
import { and, eq, gt, sql } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHmac } from 'node:crypto';
import { sha256Hex } from '../shared/crypto.js';
import { envelopeOf } from '../shared/envelope.js';
import { AppError, unwrap, type Result } from '../shared/errors.js';
import type { MessageKey } from '../shared/i18n.js';
import type { Principal } from './auth.js';
import type { Db, Executor, Tx } from './db/index.js';
import { idempotencyKeys } from './db/infra.tables.js';

export interface EffectResult<B extends { request_id: string }> {
  status: number;
  body: B;
}

/** How respond answers a success: the envelope's message and the HTTP status (and envelope code). */
export interface Answer {
  message: MessageKey;
  /** Default 201: most writing routes create something. */
  status?: number;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const TTL_MS = 24 * 3600 * 1000;

/** JSON with object keys sorted, so that key order does not make two bodies differ. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The caller a stored response belongs to. Routes name the account (`customer:7`); a customer
 * token from one partner's QR login is a caller of its own (DESIGN.md §3: the key is scoped to
 * the caller), so its keys never meet those of the app or of another partner's till — else a
 * replay would hand it a response its own scope check would have refused. Any principal the
 * route's scope does not already name is added, so no route can share keys by mistake.
 */
export function callerScope(scope: string, principal: Principal | undefined): string {
  let caller: string | undefined;
  switch (principal?.kind) {
    case 'api':
    case 'partner':
      caller = `partner:${principal.partnerId}`;
      break;
    case 'admin':
      caller = `admin:${principal.adminId}`;
      break;
    case 'customer':
      caller = principal.partnerId === undefined ? `customer:${principal.customerId}` : `customer:${principal.customerId}@partner:${principal.partnerId}`;
      break;
  }
  return caller === undefined || caller === scope ? scope : `${scope}|${caller}`;
}

export class Idempotency {
  private readonly inFlight = new Set<string>();

  /**
   * @param fingerprintKey server-side secret for the request fingerprint: bodies can carry
   *   passwords, so what is stored must not be a plain digest of them.
   */
  constructor(
    private readonly db: Db,
    private readonly fingerprintKey: string,
  ) {}

  /** The same request, whatever its response language and key order. */
  private fingerprint(req: FastifyRequest): string {
    const { locale: _locale, ...params } = (req.params ?? {}) as Record<string, unknown>;
    return createHmac('sha256', this.fingerprintKey)
      // An alias route (transactions/award-points) names the route it is an alias of, so a
      // retry through either path is the same request.
      .update(canonicalJson([req.method, req.routeOptions.config.idempotencyRoute ?? req.routeOptions.url, params, req.body ?? null]))
      .digest('hex');
  }

  /**
   * Run `effect` in one transaction, honouring the request's Idempotency-Key if it has one.
   * `scope` is the caller (e.g. `partner:12`), narrowed to the request's principal
   * (callerScope); keys of different callers never meet.
   */
  async run<B extends { request_id: string }>(
    req: FastifyRequest,
    reply: FastifyReply,
    scope: string,
    effect: (tx: Tx) => Promise<EffectResult<B>>,
  ): Promise<B> {
    const header = req.headers['idempotency-key'];
    if (header === undefined) {
      const result = await this.db.transaction(effect);
      reply.code(result.status);
      return result.body;
    }
    if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
      throw new AppError('INVALID_VALUE', {
        message: 'error.idempotency_key_invalid',
        items: [{ field: 'Idempotency-Key', code: 'INVALID_FORMAT', key: 'error.idempotency_key_invalid' }],
      });
    }
    scope = callerScope(scope, req.principal);
    const requestHash = this.fingerprint(req);
    const slot = `${scope}\u0000${header}`;
    if (this.inFlight.has(slot)) throw this.inProgress();
    this.inFlight.add(slot);
    try {
      const outcome = await this.db.transaction(async (tx) => {
        const lockKey = BigInt.asIntN(64, BigInt(`0x${sha256Hex(slot).slice(0, 16)}`)).toString();
        const lock = (await tx.execute(sql`select pg_try_advisory_xact_lock(${lockKey}::bigint) as locked`)) as unknown as {
          rows: Array<{ locked: boolean }>;
        };
        if (!lock.rows[0]?.locked) throw this.inProgress();
        const [stored] = await tx
          .select()
          .from(idempotencyKeys)
          .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, header), gt(idempotencyKeys.expiresAt, sql`now()`)));
        if (stored) {
          if (stored.requestHash !== requestHash) {
            throw new AppError('INVALID_VALUE', {
              message: 'error.idempotency_key_reused',
              items: [{ field: 'Idempotency-Key', code: 'INVALID_VALUE', key: 'error.idempotency_key_reused' }],
            });
          }
          return { replayed: true, status: stored.responseStatus, body: stored.responseBody as B };
        }
        const result = await effect(tx);
        if (result.status >= 200 && result.status < 300) {
          const { request_id: _omit, ...body } = result.body;
          const row = {
            scope,
            key: header,
            requestHash,
            responseStatus: result.status,
            responseBody: body,
            expiresAt: new Date(Date.now() + TTL_MS),
          };
          // An expired row with the same key is replaced.
          await tx
            .insert(idempotencyKeys)
            .values(row)
            .onConflictDoUpdate({ target: [idempotencyKeys.scope, idempotencyKeys.key], set: { ...row, createdAt: sql`now()` } });
        }
        return { replayed: false, ...result };
      });
      reply.code(outcome.status);
      if (outcome.replayed) {
        reply.header('idempotent-replayed', 'true');
        return { ...outcome.body, request_id: req.id };
      }
      return outcome.body;
    } finally {
      this.inFlight.delete(slot);
    }
  }

  /**
   * For an effect that is atomic on its own (one statement, or a transaction it opens itself):
   * without an Idempotency-Key it runs on the database directly — no BEGIN/COMMIT round trips;
   * with one it runs in the key's transaction (`inTransaction` true).
   */
  async runAtomic<B extends { request_id: string }>(
    req: FastifyRequest,
    reply: FastifyReply,
    scope: string,
    effect: (exec: Executor, inTransaction: boolean) => Promise<EffectResult<B>>,
  ): Promise<B> {
    if (req.headers['idempotency-key'] === undefined) {
      const result = await effect(this.db, false);
      reply.code(result.status);
      return result.body;
    }
    return this.run(req, reply, scope, (tx) => effect(tx, true));
  }

  /**
   * The usual writing route: `effect` in one transaction honouring the Idempotency-Key (run),
   * its value answered with `status` (201 unless said) in the success envelope with
   * `message`; a failed Result is thrown (unwrap), which rolls back the effect and the key.
   */
  respond<T>(req: FastifyRequest, reply: FastifyReply, scope: string, answer: Answer, effect: (tx: Tx) => Promise<Result<T>>) {
    const status = answer.status ?? 201;
    return this.run(req, reply, scope, async (tx) => ({ status, body: envelopeOf(req, unwrap(await effect(tx)), answer.message, status) }));
  }

  /** respond for an effect that is atomic on its own (runAtomic): one statement without a key. */
  respondAtomic<T>(req: FastifyRequest, reply: FastifyReply, scope: string, answer: Answer, effect: (exec: Executor, inTransaction: boolean) => Promise<Result<T>>) {
    const status = answer.status ?? 201;
    return this.runAtomic(req, reply, scope, async (exec, inTransaction) => ({ status, body: envelopeOf(req, unwrap(await effect(exec, inTransaction)), answer.message, status) }));
  }

  private inProgress() {
    return new AppError('CONCURRENT_LIMIT_EXCEEDED', {
      items: [{ field: 'Idempotency-Key', code: 'CONCURRENT_LIMIT_EXCEEDED', key: 'error.idempotency_in_progress' }],
    });
  }

  /** Drop expired keys; called by the periodic housekeeping job. */
  async purgeExpired(): Promise<number> {
    const res = await this.db.execute(sql`delete from idempotency_keys where expires_at < now()`);
    return (res as { rowCount?: number; affectedRows?: number }).rowCount ?? (res as { affectedRows?: number }).affectedRows ?? 0;
  }
}
