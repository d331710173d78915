// Authentication, kind checks and rate limiting, declared per route:
//   config: { auth: 'api' }                       X-API-Key + X-API-Secret
//   config: { auth: 'partner' | 'admin' | 'customer' }   bearer JWT of that kind
//   config: { auth: ['customer', 'api'] }         either, tried in that order
//   config: { rateLimit: false }                  liveness, metrics, docs
// Failures follow DESIGN.md §3: 1004 / 1001 for API credentials, the string codes for
// bearer tokens, 403 INSUFFICIENT_PERMISSIONS for a valid token of the wrong kind. A signed-out
// or superseded token (src/infra/tokens.ts) is refused like a forged one: 401 INVALID_CREDENTIALS.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config, RateLimitRule } from '../config.js';
import { sha256Hex } from '../shared/crypto.js';
import { AppError } from '../shared/errors.js';
import type { LimitClass, LimitDecision, RateLimiter } from './rate-limit.js';
import type { IssuedToken, TokenKind, TokenService } from './tokens.js';

export type AuthKind = 'api' | TokenKind;

export interface ApiPrincipal {
  kind: 'api';
  partnerId: number;
  partnerName: string;
  apiKeyId: number;
  /** Enterprise override of the API rate limit, if the partner has one. */
  rateLimit?: RateLimitRule;
}
export interface PartnerPrincipal {
  kind: 'partner';
  partnerId: number;
  /** The bearer token presented (what sign-out revokes). */
  token: IssuedToken;
}
export interface AdminPrincipal {
  kind: 'admin';
  adminId: number;
  token: IssuedToken;
}
export interface CustomerPrincipal {
  kind: 'customer';
  customerId: number;
  /** Set when the token came from a partner's QR login: only that partner's data is visible. */
  partnerId?: number;
  token: IssuedToken;
}
export type Principal = ApiPrincipal | PartnerPrincipal | AdminPrincipal | CustomerPrincipal;

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthKind | readonly AuthKind[];
    rateLimit?: boolean;
    /** For Idempotency-Key: the route this one is an alias of (same request, same key). */
    idempotencyRoute?: string;
  }
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

export interface ApiKeyAuthenticator {
  authenticate(key: string, secret: string): Promise<ApiPrincipal | undefined>;
}

/** Whether the account behind a valid token still exists and may act. */
export type AccountCheck = (id: number) => Promise<boolean>;

export interface AuthOptions {
  tokens: TokenService;
  apiKeys: ApiKeyAuthenticator;
  accounts: Partial<Record<TokenKind, AccountCheck>>;
  rateLimiter: RateLimiter;
  rateLimit: Config['rateLimit'];
}

/** Narrow the principal for handlers of routes that declared the auth kind. */
export function principalOf<K extends Principal['kind']>(req: FastifyRequest, kind: K): Extract<Principal, { kind: K }> {
  const p = req.principal;
  if (!p || p.kind !== kind) throw new AppError('INSUFFICIENT_PERMISSIONS');
  return p as Extract<Principal, { kind: K }>;
}

/**
 * The partner a route acts for when it takes API credentials or the partner's own JWT (the
 * console's XML import and realtime, docs/decisions.md "Dashboard").
 */
export function actingPartnerOf(req: FastifyRequest): number {
  const p = req.principal;
  if (p?.kind === 'api' || p?.kind === 'partner') return p.partnerId;
  throw new AppError('INSUFFICIENT_PERMISSIONS');
}

function setLimitHeaders(reply: FastifyReply, d: LimitDecision) {
  reply.header('x-ratelimit-limit', d.limit);
  reply.header('x-ratelimit-remaining', d.remaining);
  reply.header('x-ratelimit-reset', d.resetSeconds);
}

async function authPlugin(app: FastifyInstance, opts: AuthOptions) {
  app.decorateRequest('principal', undefined);
  const limits = opts.rateLimit;

  async function limit(reply: FastifyReply, cls: LimitClass, key: string, rule: RateLimitRule) {
    if (limits.disabled) return;
    const decision = await opts.rateLimiter.consume(cls, key, rule);
    setLimitHeaders(reply, decision);
    if (!decision.allowed) {
      throw new AppError('RATE_LIMIT_EXCEEDED', {
        params: { seconds: decision.retryAfterSeconds },
        headers: { 'retry-after': String(decision.retryAfterSeconds) },
      });
    }
  }

  /** A failed authentication costs the caller's IP one request, which bounds guessing. */
  async function rejectAuth(req: FastifyRequest, reply: FastifyReply, error: AppError): Promise<never> {
    await limit(reply, 'ip', req.ip, limits.ip);
    throw error;
  }

  async function authenticateApi(req: FastifyRequest, reply: FastifyReply): Promise<ApiPrincipal> {
    const key = req.headers['x-api-key'];
    const secret = req.headers['x-api-secret'];
    if (typeof key !== 'string' || typeof secret !== 'string' || key === '' || secret === '') {
      return rejectAuth(req, reply, new AppError('API_CREDENTIALS_MISSING'));
    }
    const principal = await opts.apiKeys.authenticate(key, secret);
    if (!principal) return rejectAuth(req, reply, new AppError('API_CREDENTIALS_INVALID'));
    return principal;
  }

  async function authenticateBearer(
    req: FastifyRequest,
    reply: FastifyReply,
    kinds: readonly TokenKind[],
  ): Promise<Principal> {
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === '') {
      return rejectAuth(req, reply, new AppError('MISSING_AUTHENTICATION'));
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return rejectAuth(req, reply, new AppError('INVALID_TOKEN_FORMAT'));
    const result = await opts.tokens.verify(match[1]!);
    if (!result.ok) {
      const name = result.reason === 'expired' ? 'EXPIRED_TOKEN' : result.reason === 'malformed' ? 'INVALID_TOKEN_FORMAT' : 'INVALID_TOKEN';
      return rejectAuth(req, reply, new AppError(name));
    }
    const { claims, token } = result;
    if (!kinds.includes(claims.kind)) {
      // A valid token of the wrong kind still spends its own per-token budget (same key as below).
      if (req.routeOptions.config.rateLimit !== false) {
        await limit(reply, claims.kind, sha256Hex(match[1]!).slice(0, 32), limits[claims.kind]);
      }
      throw new AppError('INSUFFICIENT_PERMISSIONS');
    }
    const check = opts.accounts[claims.kind];
    if (!check || !(await check(claims.subject))) return rejectAuth(req, reply, new AppError('INVALID_TOKEN'));
    switch (claims.kind) {
      case 'admin':
        return { kind: 'admin', adminId: claims.subject, token };
      case 'partner':
        return { kind: 'partner', partnerId: claims.subject, token };
      case 'customer':
        return {
          kind: 'customer',
          customerId: claims.subject,
          ...(claims.partnerId !== undefined ? { partnerId: claims.partnerId } : {}),
          token,
        };
    }
  }

  app.addHook('onRequest', async (req, reply) => {
    const config = req.routeOptions.config;
    const declared = config.auth;
    if (declared === undefined) {
      // Public API routes (logins) are limited per IP; probes, metrics and the docs
      // (everything outside /{locale}/) are not.
      if (config.rateLimit !== false && req.routeOptions.url?.startsWith('/:locale/')) await limit(reply, 'ip', req.ip, limits.ip);
      return;
    }
    const kinds: readonly AuthKind[] = typeof declared === 'string' ? [declared] : declared;
    const tokenKinds = kinds.filter((k): k is TokenKind => k !== 'api');
    const hasApiHeaders = req.headers['x-api-key'] !== undefined || req.headers['x-api-secret'] !== undefined;
    const hasBearer = req.headers.authorization !== undefined;

    let principal: Principal;
    if (kinds.includes('api') && (hasApiHeaders || !hasBearer || tokenKinds.length === 0)) {
      principal = await authenticateApi(req, reply);
    } else {
      principal = await authenticateBearer(req, reply, tokenKinds);
    }
    req.principal = principal;

    if (config.rateLimit === false) return;
    switch (principal.kind) {
      case 'api':
        return limit(reply, 'api', `k${principal.apiKeyId}`, principal.rateLimit ?? limits.api);
      case 'partner':
      case 'admin':
      case 'customer': {
        // Per token (DESIGN.md §7); the digest keeps tokens themselves out of Redis.
        const token = /^Bearer\s+(\S+)/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
        return limit(reply, principal.kind, sha256Hex(token).slice(0, 32), limits[principal.kind]);
      }
    }
  });
}

export default fp(authPlugin, { name: 'auth', dependencies: ['http-core'], fastify: '5.x' });
