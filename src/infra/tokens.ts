// JWTs for the three kinds of bearer: customers, partners and admins. HS256 with a
// key shared by every node (JWT_SECRET, or one generated once and kept in the database).
//
// Revocation (sign-out, password change) without a database round trip per request: each
// token carries an id (`jti`) and its issue time to the millisecond (`iat`); revocations
// are rows in the database, and every node keeps all the live ones in memory. A node hears
// of another node's revocation through PostgreSQL NOTIFY, delivered when the revoking
// transaction commits (the same channel mechanism API-key revocation uses); the revoking
// node updates its own memory before it answers. While a node's notification connection is
// down it cannot trust its memory, so it asks the database on every request until it is
// listening again and has re-read the table.
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import { errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../shared/crypto.js';
import type { Database, Db, Executor, Tx } from './db/index.js';
import { revokedTokens, tokenCutoffs } from './db/infra.tables.js';

export type TokenKind = 'customer' | 'partner' | 'admin';

export interface TokenClaims {
  kind: TokenKind;
  subject: number;
  /** Customer tokens from QR login are scoped to the partner whose till asked for them. */
  partnerId?: number;
}

/** What identifies one issued token, for revoking it. */
export interface IssuedToken {
  /** The `jti` claim (a digest of the token for tokens signed before ids were added). */
  id: string;
  kind: TokenKind;
  subject: number;
  /** Milliseconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
}

export type VerifyResult =
  | { ok: true; claims: TokenClaims; token: IssuedToken }
  | { ok: false; reason: 'malformed' | 'expired' | 'invalid' };

export interface TokenTtl {
  /** Partner and admin tokens, seconds. */
  access: number;
  /** The app's own customer tokens (OTP sign-in), seconds. */
  customer: number;
  /** Customer tokens from a QR login at a partner's till, seconds. */
  qrCustomer: number;
}

const ISSUER = 'loyalty';
const KINDS: readonly TokenKind[] = ['customer', 'partner', 'admin'];
export const TOKENS_CHANNEL = 'tokens_revoked';
const SWEEP_BATCH = 500;
const PRUNE_EVERY_MS = 60_000;

/**
 * The live revocations of every node, in memory. Both kinds only ever grow until they
 * expire, so whatever order notifications and re-reads arrive in, merging is correct.
 */
export class TokenRevocations {
  /** token id → its expiry (ms). */
  private readonly revoked = new Map<string, number>();
  /** `kind:subject` → tokens issued before this (ms) are refused; and when the row expires. */
  private readonly cutoffs = new Map<string, { notBefore: number; expiresAt: number }>();
  /** True while this node is listening and has read the table since it began to. */
  private ready = false;
  private epoch = 0;
  private prunedAt = 0;

  constructor(private readonly database: Database) {}

  async start(): Promise<void> {
    await this.database.listen(TOKENS_CHANNEL, (payload) => this.applyNotification(payload), (listening) => {
      this.epoch++;
      this.ready = false;
      if (listening) void this.reload(this.epoch);
    });
  }

  /** Re-reads every live revocation; only then is memory trusted (unless listening was lost meanwhile). */
  private async reload(epoch: number): Promise<void> {
    try {
      const db = this.database.db;
      const tokens = await db.select().from(revokedTokens).where(gt(revokedTokens.expiresAt, sql`now()`));
      const cutoffs = await db.select().from(tokenCutoffs).where(gt(tokenCutoffs.expiresAt, sql`now()`));
      for (const t of tokens) this.rememberToken(t.tokenId, t.expiresAt.getTime());
      for (const c of cutoffs) this.rememberCutoff(c.kind as TokenKind, c.subject, c.notBefore.getTime(), c.expiresAt.getTime());
      if (epoch === this.epoch) this.ready = true;
    } catch {
      // Not ready: requests keep asking the database; the next reconnect reads again.
    }
  }

  /** Payloads: `t <id> <expiresAtMs>` or `c <kind> <subject> <notBeforeMs> <expiresAtMs>`. */
  private applyNotification(payload: string): void {
    const parts = payload.split(' ');
    if (parts[0] === 't' && parts.length === 3) this.rememberToken(parts[1]!, Number(parts[2]));
    else if (parts[0] === 'c' && parts.length === 5 && KINDS.includes(parts[1] as TokenKind)) {
      this.rememberCutoff(parts[1] as TokenKind, Number(parts[2]), Number(parts[3]), Number(parts[4]));
    }
  }

  private rememberToken(id: string, expiresAt: number): void {
    if (Number.isFinite(expiresAt)) this.revoked.set(id, expiresAt);
  }

  private rememberCutoff(kind: TokenKind, subject: number, notBefore: number, expiresAt: number): void {
    if (!Number.isFinite(notBefore) || !Number.isFinite(expiresAt)) return;
    const key = `${kind}:${subject}`;
    const known = this.cutoffs.get(key);
    if (!known || known.notBefore < notBefore) this.cutoffs.set(key, { notBefore, expiresAt });
  }

  /**
   * Forgets what has expired. Called when something is added, which bounds the maps; at most
   * once a minute, so a burst of sign-outs does not walk them once each.
   */
  private prune(now = Date.now()): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    for (const [id, exp] of this.revoked) if (exp <= now) this.revoked.delete(id);
    for (const [key, c] of this.cutoffs) if (c.expiresAt <= now) this.cutoffs.delete(key);
  }

  isRevoked(token: IssuedToken): boolean | Promise<boolean> {
    if (!this.ready) return this.isRevokedInDatabase(token);
    if (this.revoked.has(token.id)) return true;
    const cutoff = this.cutoffs.get(`${token.kind}:${token.subject}`);
    return cutoff !== undefined && token.issuedAt < cutoff.notBefore;
  }

  private async isRevokedInDatabase(token: IssuedToken): Promise<boolean> {
    const db = this.database.db;
    const [byId] = await db.select({ id: revokedTokens.tokenId }).from(revokedTokens).where(eq(revokedTokens.tokenId, token.id));
    if (byId) return true;
    const [cutoff] = await db
      .select({ kind: tokenCutoffs.kind })
      .from(tokenCutoffs)
      .where(
        and(
          eq(tokenCutoffs.kind, token.kind),
          eq(tokenCutoffs.subject, token.subject),
          gt(tokenCutoffs.notBefore, new Date(token.issuedAt)),
        ),
      );
    return cutoff !== undefined;
  }

  /** Revokes one token at once on this node, and on the others when it commits. */
  async revoke(token: IssuedToken): Promise<void> {
    await this.database.db.transaction(async (tx) => {
      await tx
        .insert(revokedTokens)
        .values({ tokenId: token.id, expiresAt: new Date(token.expiresAt) })
        .onConflictDoNothing();
      await tx.execute(sql`select pg_notify(${TOKENS_CHANNEL}, ${`t ${token.id} ${token.expiresAt}`})`);
      await this.sweep(tx);
    });
    this.rememberToken(token.id, token.expiresAt);
    this.prune();
  }

  /**
   * Within the caller's transaction (the password change it belongs to): every token of the
   * account issued before `notBefore` is refused once that commits. Call `apply` after the
   * commit so this node refuses them before it answers.
   */
  async cutOff(
    tx: Executor,
    cutoff: { kind: TokenKind; subject: number; notBefore: number; expiresAt: number },
  ): Promise<{ apply(): void }> {
    const { kind, subject, notBefore, expiresAt } = cutoff;
    const values = { kind, subject, notBefore: new Date(notBefore), expiresAt: new Date(expiresAt) };
    await tx
      .insert(tokenCutoffs)
      .values(values)
      .onConflictDoUpdate({ target: [tokenCutoffs.kind, tokenCutoffs.subject], set: { notBefore: values.notBefore, expiresAt: values.expiresAt } });
    await tx.execute(sql`select pg_notify(${TOKENS_CHANNEL}, ${`c ${kind} ${subject} ${notBefore} ${expiresAt}`})`);
    await this.sweep(tx);
    return {
      apply: () => {
        this.rememberCutoff(kind, subject, notBefore, expiresAt);
        this.prune();
      },
    };
  }

  /** Drops rows that can no longer refuse anything (their tokens have expired anyway). */
  private async sweep(tx: Executor): Promise<void> {
    await tx.execute(
      sql`delete from ${revokedTokens} where ${revokedTokens.tokenId} in (select ${revokedTokens.tokenId} from ${revokedTokens} where ${lt(revokedTokens.expiresAt, sql`now()`)} limit ${SWEEP_BATCH})`,
    );
    await tx.delete(tokenCutoffs).where(lt(tokenCutoffs.expiresAt, sql`now()`));
  }
}

export class TokenService {
  private readonly key: Uint8Array;
  constructor(
    secret: string,
    private readonly ttl: TokenTtl,
    /** Absent where nothing is verified against revocations (never in the app). */
    readonly revocations?: TokenRevocations,
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  /** Seconds a token of this kind lives; a QR-login customer token is the till's, and shorter. */
  ttlOf(claims: Pick<TokenClaims, 'kind' | 'partnerId'>): number {
    if (claims.kind !== 'customer') return this.ttl.access;
    return claims.partnerId !== undefined ? this.ttl.qrCustomer : this.ttl.customer;
  }

  /** The longest a token of this kind issued now can live (how long a cutoff must be kept). */
  private longestTtl(kind: TokenKind): number {
    return kind === 'customer' ? Math.max(this.ttl.customer, this.ttl.qrCustomer) : this.ttl.access;
  }

  async sign(claims: TokenClaims): Promise<{ token: string; expiresAt: Date }> {
    const now = Date.now();
    // Whole seconds, so the `expires_at` a response shows is the token's own `exp`.
    const exp = Math.floor(now / 1000) + this.ttlOf(claims);
    const expiresAt = new Date(exp * 1000);
    const payload: Record<string, unknown> = { kind: claims.kind };
    if (claims.partnerId !== undefined) payload.pid = claims.partnerId;
    const token = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(String(claims.subject))
      .setJti(randomBytes(16).toString('base64url'))
      // Milliseconds (a NumericDate may have a fraction): a password change refuses the
      // tokens issued before it, and the one it hands out in the same second stays valid.
      .setIssuedAt(now / 1000)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt };
  }

  async verify(token: string): Promise<VerifyResult> {
    if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) return { ok: false, reason: 'malformed' };
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: 'expired' };
      if (err instanceof joseErrors.JWSInvalid || err instanceof joseErrors.JWTInvalid) {
        return { ok: false, reason: 'malformed' };
      }
      return { ok: false, reason: 'invalid' };
    }
    const kind = payload.kind as TokenKind;
    const subject = Number(payload.sub);
    if (!KINDS.includes(kind) || !Number.isSafeInteger(subject) || subject <= 0) return { ok: false, reason: 'invalid' };
    const issued: IssuedToken = {
      // Tokens signed before ids were added are named by their digest.
      id: typeof payload.jti === 'string' && payload.jti !== '' ? payload.jti : `sha256:${sha256Hex(token).slice(0, 32)}`,
      kind,
      subject,
      issuedAt: typeof payload.iat === 'number' ? payload.iat * 1000 : 0,
      expiresAt: typeof payload.exp === 'number' ? payload.exp * 1000 : Date.now() + this.longestTtl(kind) * 1000,
    };
    // A revoked token is refused like a forged one. A database failure on the fallback path
    // is not a verdict on the token: it propagates (a 5xx), it does not sign the caller out.
    if (this.revocations && (await this.revocations.isRevoked(issued))) return { ok: false, reason: 'invalid' };
    const pid = payload.pid;
    return {
      ok: true,
      claims: { kind, subject, ...(typeof pid === 'number' ? { partnerId: pid } : {}) },
      token: issued,
    };
  }

  /** Sign-out: this token is refused from now on, on every node. */
  async revoke(token: IssuedToken): Promise<void> {
    if (!this.revocations) throw new Error('token revocation is not configured');
    await this.revocations.revoke(token);
  }

  /**
   * A password change: `write` stores the new hash in one transaction with the cut-off that
   * refuses the account's tokens issued before now (when `write` found the account). Once it
   * commits this node refuses them at once, the others on NOTIFY. Returns what `write` returned.
   */
  async replacePassword<R>(db: Db, kind: TokenKind, subject: number, write: (tx: Tx) => Promise<R | undefined>): Promise<R | undefined> {
    const revocations = this.revocations;
    if (!revocations) throw new Error('token revocation is not configured');
    let cutOff: { apply(): void } | undefined;
    const row = await db.transaction(async (tx) => {
      const written = await write(tx);
      if (written !== undefined) {
        const notBefore = Date.now();
        cutOff = await revocations.cutOff(tx, { kind, subject, notBefore, expiresAt: notBefore + this.longestTtl(kind) * 1000 });
      }
      return written;
    });
    cutOff?.apply();
    return row;
  }
}
