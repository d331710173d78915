import type { Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import type { IssuedToken, TokenService } from '../../infra/tokens.js';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../../shared/crypto.js';
import { fail, ok, type Result } from '../../shared/errors.js';
import { iso } from '../../shared/time.js';
import { changeOwnPassword, normaliseEmail, unguarded, type PasswordGuard } from '../partners/partners.service.js';
import { adminRepository as repo, type AdminRow } from './admin.repository.js';
import type { Admin } from './admin.schemas.js';

export type AdminView = Static<typeof Admin>;

const adminView = (row: AdminRow): AdminView => ({ id: row.id, email: row.email, name: row.name, created_at: iso(row.createdAt) });

export class AdminService {
  constructor(
    private readonly db: Db,
    private readonly tokens: TokenService,
  ) {}

  /**
   * Create an admin unless one with this e-mail exists (bootstrap from env or CLI).
   * Returns whether it was created; an existing admin's password is left alone.
   */
  async ensure(
    input: { email: string; password: string; name?: string },
    tx: Executor = this.db,
  ): Promise<{ admin: AdminView; created: boolean }> {
    const email = normaliseEmail(input.email);
    const inserted = await repo.insert(tx, {
      email,
      name: input.name ?? 'Administrator',
      passwordHash: await hashPassword(input.password),
    });
    if (inserted) return { admin: adminView(inserted), created: true };
    const existing = await repo.findByEmail(tx, email);
    return { admin: adminView(existing!), created: false };
  }

  async login(email: string, password: string): Promise<Result<{ token: string; expires_at: string; admin: AdminView }>> {
    const row = await repo.findByEmail(this.db, normaliseEmail(email));
    const valid = await verifyPassword(row?.passwordHash ?? (await dummyPasswordHash()), password);
    if (!row || !valid) return fail('INVALID_CREDENTIALS');
    const { token, expiresAt } = await this.tokens.sign({ kind: 'admin', subject: row.id });
    return ok({ token, expires_at: iso(expiresAt), admin: adminView(row) });
  }

  async exists(id: number): Promise<boolean> {
    return (await repo.findById(this.db, id)) !== undefined;
  }

  count(): Promise<number> {
    return repo.count(this.db);
  }

  /** Sign-out: the token presented is refused from now on, on every node. */
  signOut(token: IssuedToken): Promise<void> {
    return this.tokens.revoke(token);
  }

  /**
   * The admin's own password change: every token of this admin issued before it is refused
   * (the one used too) and a fresh token is returned (see PartnersService.changePassword).
   */
  async changePassword(
    id: number,
    currentPassword: string,
    newPassword: string,
    guard: PasswordGuard = unguarded,
  ): Promise<Result<{ token: string; expires_at: string; admin: AdminView }>> {
    return changeOwnPassword(await repo.findById(this.db, id), currentPassword, guard, async () => {
      const passwordHash = await hashPassword(newPassword);
      const updated = await this.tokens.replacePassword(this.db, 'admin', id, (tx) => repo.setPasswordHash(tx, id, passwordHash));
      // Removed meanwhile: its token is no longer good either.
      if (!updated) return fail('INVALID_TOKEN');
      const { token, expiresAt } = await this.tokens.sign({ kind: 'admin', subject: id });
      return ok({ token, expires_at: iso(expiresAt), admin: adminView(updated) });
    });
  }
}
