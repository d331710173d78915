// JWTs for the three kinds of bearer: customers, partners and admins. HS256 with a
// key shared by every node (JWT_SECRET, or one generated once and kept in the database).
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';

export type TokenKind = 'customer' | 'partner' | 'admin';

export interface TokenClaims {
  kind: TokenKind;
  subject: number;
  /** Customer tokens from QR login are scoped to the partner whose till asked for them. */
  partnerId?: number;
}

export type VerifyResult =
  | { ok: true; claims: TokenClaims }
  | { ok: false; reason: 'malformed' | 'expired' | 'invalid' };

const ISSUER = 'loyalty';
const KINDS: readonly TokenKind[] = ['customer', 'partner', 'admin'];

export class TokenService {
  private readonly key: Uint8Array;
  constructor(
    secret: string,
    private readonly ttl: { access: number; customer: number },
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  async sign(claims: TokenClaims): Promise<{ token: string; expiresAt: Date }> {
    const ttl = claims.kind === 'customer' ? this.ttl.customer : this.ttl.access;
    const expiresAt = new Date(Date.now() + ttl * 1000);
    const payload: Record<string, unknown> = { kind: claims.kind };
    if (claims.partnerId !== undefined) payload.pid = claims.partnerId;
    const token = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(String(claims.subject))
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.key);
    return { token, expiresAt };
  }

  async verify(token: string): Promise<VerifyResult> {
    if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) return { ok: false, reason: 'malformed' };
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] });
      const kind = payload.kind as TokenKind;
      const subject = Number(payload.sub);
      if (!KINDS.includes(kind) || !Number.isSafeInteger(subject) || subject <= 0) return { ok: false, reason: 'invalid' };
      const pid = payload.pid;
      return {
        ok: true,
        claims: { kind, subject, ...(typeof pid === 'number' ? { partnerId: pid } : {}) },
      };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: 'expired' };
      if (err instanceof joseErrors.JWSInvalid || err instanceof joseErrors.JWTInvalid) {
        return { ok: false, reason: 'malformed' };
      }
      return { ok: false, reason: 'invalid' };
    }
  }
}
