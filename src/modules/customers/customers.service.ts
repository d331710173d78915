// Customers: one account per phone number (DESIGN.md §2). Accounts are created by the
// first successful sign-in (otp.service.ts); here they are read and their profile kept.
import type { Static } from 'typebox';
import type { Db, Executor } from '../../infra/db/index.js';
import { fail, ok, type Result } from '../../shared/errors.js';
import { iso, systemClock, type Clock } from '../../shared/time.js';
import { customersRepository as repo, partnerCustomersRepository, type CustomerRow, type ProfileFields } from './customers.repository.js';
import type { PageWindow } from '../../shared/pagination.js';
import type { Customer } from './customers.schemas.js';

export type CustomerView = Static<typeof Customer>;

export interface ProfileInput {
  name?: string | null;
  email?: string | null;
  birth_date?: string | null;
  language?: 'lt' | 'en' | null;
}

export function customerView(row: CustomerRow): CustomerView {
  return {
    id: row.id,
    phone: row.phone,
    name: row.name,
    email: row.email,
    birth_date: row.birthDate,
    language: row.language,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

export class CustomersService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {}

  async get(id: number, tx: Executor = this.db): Promise<CustomerView | undefined> {
    const row = await repo.findById(tx, id);
    return row && customerView(row);
  }

  /** For the auth plugin: a customer token is only good while its account exists. */
  async exists(id: number): Promise<boolean> {
    return (await repo.findById(this.db, id)) !== undefined;
  }

  async findOrCreateByPhone(tx: Executor, phone: string): Promise<CustomerView> {
    return customerView(await repo.findOrCreateByPhone(tx, phone, this.clock.now()));
  }

  async updateProfile(id: number, input: ProfileInput): Promise<Result<CustomerView | undefined>> {
    if (typeof input.birth_date === 'string') {
      const born = Date.parse(`${input.birth_date}T00:00:00Z`);
      if (born > this.clock.now().getTime()) return fail('VALIDATION', { fields: { birth_date: [{ key: 'validation.date_in_future' }] } });
      if (born < Date.parse('1900-01-01T00:00:00Z')) {
        return fail('VALIDATION', { fields: { birth_date: [{ key: 'validation.minimum', params: { limit: '1900-01-01' } }] } });
      }
    }
    const fields: ProfileFields = {};
    if (input.name !== undefined) fields.name = input.name === null ? null : input.name.trim();
    if (input.email !== undefined) fields.email = input.email === null ? null : input.email.trim().toLowerCase();
    if (input.birth_date !== undefined) fields.birthDate = input.birth_date;
    if (input.language !== undefined) fields.language = input.language;
    const row = await repo.updateProfile(this.db, id, fields, this.clock.now());
    return ok(row && customerView(row));
  }

  /** The partner's customers: those holding one of its cards. */
  async listForPartner(partnerId: number, search: string | undefined, page: PageWindow): Promise<{ items: CustomerView[]; total: number }> {
    const { rows, total } = await partnerCustomersRepository.list(this.db, partnerId, search, page.perPage, page.offset);
    return { items: rows.map(customerView), total };
  }
}
