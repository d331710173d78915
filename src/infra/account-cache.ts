// Whether the account behind a valid bearer token still exists and may act (a partner is
// active, an admin or a customer exists), remembered per node so that a bearer request does
// not ask the database every time (issue 31: one query per request was a third of its cost).
//
// A suspended partner, or a deleted admin or customer, must still be refused on the next
// request on every node. Nothing in the service suspends or deletes accounts (an operator
// does it in SQL), so the database says so itself: triggers (migration 0024) NOTIFY
// `accounts_changed` with `<kind> <id>` when a partner's status changes or an account row is
// deleted, delivered to every node's LISTEN when that transaction commits — the channel
// mechanism API-key and token revocation already use (api-keys.service.ts, tokens.ts). Like
// them: while a node is not listening (connection lost) it caches nothing and asks the
// database on every request, and a generation counter stops a lookup that raced with a
// notification from caching the answer it read before the change. Only "yes" is cached: a
// refusal is rare and already costs the caller's IP a rate-limit point.
import type { Database } from './db/index.js';
import type { TokenKind } from './tokens.js';

export const ACCOUNTS_CHANNEL = 'accounts_changed';

/** Whether the account behind a valid token still exists and may act. */
export type AccountLookup = (id: number) => Promise<boolean>;

const KINDS: readonly TokenKind[] = ['customer', 'partner', 'admin'];
/** A safety net only: a change is applied through the notification, at once. */
const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 50_000;

/** Parses a notification payload `<kind> <id>` (undefined when it is not one). */
export function parseAccountChange(payload: string): { kind: TokenKind; id: number } | undefined {
  const [kind, raw, extra] = payload.split(' ');
  const id = Number(raw);
  if (extra !== undefined || !KINDS.includes(kind as TokenKind) || !Number.isSafeInteger(id) || id <= 0) return undefined;
  return { kind: kind as TokenKind, id };
}

export class AccountStatusCache {
  /** `kind:id` → when the "yes" was read expires (ms). */
  private readonly active = new Map<string, number>();
  private listening = false;
  private generation = 0;

  constructor(
    private readonly database: Database,
    private readonly lookups: Record<TokenKind, AccountLookup>,
  ) {}

  async start(): Promise<void> {
    await this.database.listen(
      ACCOUNTS_CHANNEL,
      (payload) => {
        const change = parseAccountChange(payload);
        // An unknown payload (a newer node's format) drops everything rather than nothing.
        this.invalidate(change && `${change.kind}:${change.id}`);
      },
      (listening) => {
        this.listening = listening;
        this.invalidate();
      },
    );
  }

  private invalidate(key?: string): void {
    this.generation++;
    if (key === undefined) this.active.clear();
    else this.active.delete(key);
  }

  /** True when the account may act; from memory when this node has asked since the last change. */
  async isActive(kind: TokenKind, id: number): Promise<boolean> {
    const key = `${kind}:${id}`;
    const now = Date.now();
    if (this.listening) {
      const expiresAt = this.active.get(key);
      if (expiresAt !== undefined && expiresAt > now) return true;
    }
    const generation = this.generation;
    const active = await this.lookups[kind](id);
    if (active && this.listening && generation === this.generation) {
      if (this.active.size >= CACHE_MAX && !this.active.has(key)) this.active.delete(this.active.keys().next().value!);
      this.active.set(key, now + CACHE_TTL_MS);
    }
    return active;
  }
}
