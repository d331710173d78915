import type { Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import { isUniqueViolation } from '../../infra/db/index.js';
import type { IssuedToken, TokenService } from '../../infra/tokens.js';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../../shared/crypto.js';
import { fail, missing, notFound, ok, type DomainError, type Result } from '../../shared/errors.js';
import type { PageWindow } from '../../shared/pagination.js';
import { iso } from '../../shared/time.js';
import { partnersRepository as repo, type PartnerRow } from './partners.repository.js';
import type { Partner } from './partners.schemas.js';

export type PartnerView = Static<typeof Partner>;

export function partnerView(row: PartnerRow): PartnerView {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    status: row.status,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/** A password change with the wrong current password: a field error, not a 401 (the session is fine). */
export const wrongCurrentPassword = <T>(): Result<T> =>
  fail('VALIDATION', { fields: { current_password: [{ key: 'error.current_password_wrong' }] } });

/** The failure of a password change whose current_password was wrong (it counts towards the sign-in lock). */
export const isWrongCurrentPassword = (failure: DomainError): boolean =>
  failure.error === 'VALIDATION' && failure.options?.fields?.current_password !== undefined;

/**
 * Runs a password change's check under the account's sign-in lock (the route's SignInLock),
 * keyed by the account's e-mail: by default, no lock (services used without one, tests).
 */
export type PasswordGuard = <T>(email: string, change: () => Promise<Result<T>>) => Promise<Result<T>>;
export const unguarded: PasswordGuard = (_email, change) => change();

/**
 * An account's own password change (partner or admin): the current password is checked under
 * the guard (the account's sign-in lock), then `replace` stores the new one.
 */
export function changeOwnPassword<T>(
  account: { email: string; passwordHash: string } | undefined,
  currentPassword: string,
  guard: PasswordGuard,
  replace: () => Promise<Result<T>>,
): Promise<Result<T>> {
  if (!account) return Promise.resolve(wrongCurrentPassword());
  return guard(account.email, async () => ((await verifyPassword(account.passwordHash, currentPassword)) ? replace() : wrongCurrentPassword()));
}

export class PartnersService {
  constructor(
    private readonly db: Db,
    private readonly tokens: TokenService,
  ) {}

  async create(input: { name: string; email: string; password: string }, tx: Executor = this.db): Promise<Result<PartnerView>> {
    const email = normaliseEmail(input.email);
    try {
      const row = await repo.insert(tx, { name: input.name.trim(), email, passwordHash: await hashPassword(input.password) });
      return ok(partnerView(row));
    } catch (err) {
      if (isUniqueViolation(err)) {
        return fail('DUPLICATE_VALUE', {
          message: 'error.email_taken',
          items: [{ field: 'email', code: 'DUPLICATE_VALUE', key: 'error.email_taken' }],
        });
      }
      throw err;
    }
  }

  async login(email: string, password: string): Promise<Result<{ token: string; expires_at: string; partner: PartnerView }>> {
    const row = await repo.findByEmail(this.db, normaliseEmail(email));
    // Verify against a dummy hash when the account is missing, so timing does not tell.
    const valid = await verifyPassword(row?.passwordHash ?? (await dummyPasswordHash()), password);
    if (!row || !valid || row.status !== 'active') return fail('INVALID_CREDENTIALS');
    const { token, expiresAt } = await this.tokens.sign({ kind: 'partner', subject: row.id });
    return ok({ token, expires_at: iso(expiresAt), partner: partnerView(row) });
  }

  async get(id: number, tx: Executor = this.db): Promise<PartnerView | undefined> {
    const row = await repo.findById(tx, id);
    return row && partnerView(row);
  }

  async isActive(id: number): Promise<boolean> {
    const row = await repo.findById(this.db, id);
    return row?.status === 'active';
  }

  count(tx: Executor = this.db): Promise<number> {
    return repo.count(tx);
  }

  /** Sign-out: the token presented is refused from now on, on every node. */
  signOut(token: IssuedToken): Promise<void> {
    return this.tokens.revoke(token);
  }

  /**
   * The partner's own password change. Every token issued before it is refused from now on —
   * the one used for the change too — and a fresh token is returned, so the caller stays
   * signed in while any copy of an older token (another browser, a leak) stops working.
   */
  async changePassword(
    id: number,
    currentPassword: string,
    newPassword: string,
    guard: PasswordGuard = unguarded,
  ): Promise<Result<{ token: string; expires_at: string; partner: PartnerView }>> {
    return changeOwnPassword(await repo.findById(this.db, id), currentPassword, guard, async () => {
      const updated = await this.setPassword(id, newPassword);
      if (!updated) return missing('resource.partner');
      const { token, expiresAt } = await this.tokens.sign({ kind: 'partner', subject: id });
      return ok({ token, expires_at: iso(expiresAt), partner: updated });
    });
  }

  /**
   * Sets a new password (the partner's own change, or an admin's reset) and refuses every
   * token of the partner issued before it. Undefined when there is no such partner.
   */
  async setPassword(id: number, password: string): Promise<PartnerView | undefined> {
    const passwordHash = await hashPassword(password);
    const row = await this.tokens.replacePassword(this.db, 'partner', id, (tx) => repo.setPasswordHash(tx, id, passwordHash));
    return row && partnerView(row);
  }

  async list(page: PageWindow): Promise<{ items: PartnerView[]; total: number }> {
    const { rows, total } = await repo.list(this.db, page.perPage, page.offset);
    return { items: rows.map(partnerView), total };
  }
}

/** Route helper for admin routes that take a partner id: the partner, or the 404 a client sees. */
export async function existingPartner(partners: PartnersService, id: number, field = 'id'): Promise<PartnerView> {
  const partner = await partners.get(id);
  if (!partner) throw notFound('resource.partner', field);
  return partner;
}
