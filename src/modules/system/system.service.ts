import type { Redis } from 'ioredis';
import type { Database } from '../../infra/db/index.js';

export type CheckStatus = 'ok' | 'error' | 'disabled';

export interface HealthReport {
  status: 'ok' | 'degraded';
  version: string;
  checks: { database: CheckStatus; redis: CheckStatus };
}

const TIMEOUT_MS = 2000;

function withTimeout<T>(p: Promise<T>): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), TIMEOUT_MS).unref())]);
}

export class SystemService {
  constructor(
    private readonly deps: { database: Database; redis: Redis | undefined; version: string; migrated: () => boolean },
  ) {}

  async health(): Promise<HealthReport> {
    const [database, redis] = await Promise.all([
      withTimeout(this.deps.database.ping()).then(
        () => 'ok' as const,
        () => 'error' as const,
      ),
      this.deps.redis
        ? withTimeout(this.deps.redis.ping()).then(
            () => 'ok' as const,
            () => 'error' as const,
          )
        : Promise.resolve('disabled' as const),
    ]);
    return {
      status: database === 'ok' && redis !== 'error' ? 'ok' : 'degraded',
      version: this.deps.version,
      checks: { database, redis },
    };
  }

  /** Readiness for load balancers: the database answers and the schema is current. */
  async ready(): Promise<boolean> {
    if (!this.deps.migrated()) return false;
    return withTimeout(this.deps.database.ping()).then(
      () => true,
      () => false,
    );
  }
}
