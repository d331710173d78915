// The signed-in account of this console (partner or admin): the bearer token from
// `…/auth/login`, kept in localStorage until it expires, is revoked (401) or the user signs out.
export type ConsoleKind = 'partner' | 'admin';

export interface Session {
  token: string;
  expires_at: string;
  account: { id: number; name: string; email: string };
}

type Listener = () => void;

class SessionStore {
  private kind: ConsoleKind = 'partner';
  private value: Session | undefined;
  /** Why the last session ended, for the sign-in page ("expired"), once. */
  private reason: 'expired' | undefined;
  private listeners = new Set<Listener>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  private get key() {
    return `loyalty.${this.kind}.session`;
  }

  init(kind: ConsoleKind) {
    this.kind = kind;
    try {
      const stored = JSON.parse(localStorage.getItem(this.key) ?? 'null') as Session | null;
      if (stored && Date.parse(stored.expires_at) > Date.now()) this.set(stored);
      else if (stored) {
        localStorage.removeItem(this.key);
        this.reason = 'expired';
      }
    } catch {
      localStorage.removeItem(this.key);
    }
  }

  current(): Session | undefined {
    return this.value;
  }

  set(value: Session) {
    this.value = value;
    this.reason = undefined;
    localStorage.setItem(this.key, JSON.stringify(value));
    clearTimeout(this.timer);
    // A token that expires while the page is open ends the session then, not at the next click.
    const left = Date.parse(value.expires_at) - Date.now();
    if (left < 2 ** 31) this.timer = setTimeout(() => this.expire(), Math.max(0, left));
    this.emit();
  }

  signOut() {
    this.clear(undefined);
  }

  expire() {
    if (this.value) this.clear('expired');
  }

  takeReason() {
    const r = this.reason;
    this.reason = undefined;
    return r;
  }

  subscribe(listener: Listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private clear(reason: 'expired' | undefined) {
    this.value = undefined;
    this.reason = reason;
    clearTimeout(this.timer);
    localStorage.removeItem(this.key);
    this.emit();
  }

  private emit() {
    for (const l of this.listeners) l();
  }
}

export const session = new SessionStore();
