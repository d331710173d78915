import { Redis } from 'ioredis';

/**
 * Connect to Redis when REDIS_URL is set. A node that cannot reach Redis at boot still
 * starts (health reports it) and its rate limiter falls back to in-process counting.
 */
export async function connectRedis(url: string, log: { warn: (o: object, m: string) => void }): Promise<Redis> {
  const redis = new Redis(url, {
    // Commands fail fast while disconnected instead of queueing behind a dead link;
    // callers have fallbacks (see rate-limit.ts).
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: true,
  });
  redis.on('error', (err: Error) => log.warn({ err: { message: err.message } }, 'redis error'));
  try {
    await redis.connect();
  } catch (err) {
    log.warn({ err: { message: (err as Error).message } }, 'redis unreachable at start; will keep retrying');
  }
  return redis;
}
