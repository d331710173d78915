// WEB_CONCURRENCY=N (N > 1): this process supervises N workers (Node's cluster module) that
// share the listening port and serve requests and realtime alike. Every shared state lives in
// PostgreSQL or Redis (config refuses N > 1 without both). The background jobs (SMS dispatch,
// the outboxes, imports, expiry sweeps) run in one of them, the jobs worker: N dispatchers on
// one database each woke for their own process's sends and raced for the same rows, which
// halved one partner's SMS accept rate (docs/decisions.md "Several processes"). The others
// tell it through the supervisor when they queue SMS; the outboxes and imports wake it through
// PostgreSQL notifications as they would any node. Several machines still each run their own.
//
// The first worker starts alone — it migrates and seeds the demo data — and the others
// follow once it listens. A worker that dies is replaced (after a pause that grows while
// they keep dying); SIGTERM / SIGINT are passed on to every worker, and the supervisor exits
// when they have finished their in-flight requests (0 if all of them exited cleanly).
import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.js';

interface ReadyMessage {
  type: 'loyalty:ready';
  banner: string;
}

const isReady = (m: unknown): m is ReadyMessage =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'loyalty:ready';

/** SMS were queued in a worker without the jobs: the jobs worker's dispatcher should look now. */
const SMS_QUEUED = 'loyalty:sms-queued';
const isSmsQueued = (m: unknown) => typeof m === 'object' && m !== null && (m as { type?: unknown }).type === SMS_QUEUED;

/** In a worker: tell the supervisor this worker listens (its banner for the first one). */
export function announceReady(banner: string): void {
  process.send?.({ type: 'loyalty:ready', banner } satisfies ReadyMessage);
}

/** The part a process plays: the whole service (no cluster), or a cluster worker with or without the jobs. */
export type Role = 'single' | 'jobs' | 'requests';

export function roleOfThisProcess(): Role {
  if (!cluster.isWorker) return 'single';
  // Set by the supervisor when it forks the worker (below), not a setting of the service.
  // eslint-disable-next-line no-restricted-properties
  return process.env.LOYALTY_WORKER_ROLE === 'jobs' ? 'jobs' : 'requests';
}

let smsQueuedPending = false;
/**
 * In a worker without the jobs: SMS were queued. Messages of one event-loop turn make one
 * notice; a lost notice only delays the message to the dispatcher's next poll.
 */
export function tellJobsWorkerSmsQueued(): void {
  if (smsQueuedPending) return;
  smsQueuedPending = true;
  setImmediate(() => {
    smsQueuedPending = false;
    if (process.connected) process.send?.({ type: SMS_QUEUED });
  });
}

/** In the jobs worker: call `onSmsQueued` when another worker queued SMS. */
export function onOtherWorkersSmsQueued(onSmsQueued: () => void): void {
  process.on('message', (m: unknown) => {
    if (isSmsQueued(m)) onSmsQueued();
  });
}

/** One JSON log line, in the shape of the workers' pino lines. */
function log(level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void {
  const levels = { info: 30, warn: 40, error: 50 };
  process.stdout.write(`${JSON.stringify({ level: levels[level], time: Date.now(), pid: process.pid, ...fields, msg })}\n`);
}

const RESTART_MIN_MS = 500;
const RESTART_MAX_MS = 30_000;

export async function runSupervisor(config: Config): Promise<void> {
  const n = config.webConcurrency;
  let stopping = false;
  let restartDelay = RESTART_MIN_MS;
  const workers = new Set<Worker>();
  let jobsWorker: Worker | undefined;

  /** The first worker, and the replacement of a jobs worker that died, run the jobs. */
  const fork = (role: 'jobs' | 'requests'): Worker => {
    const worker = cluster.fork({ LOYALTY_WORKER_ROLE: role });
    workers.add(worker);
    if (role === 'jobs') jobsWorker = worker;
    worker.on('message', (m: unknown) => {
      if (isSmsQueued(m) && jobsWorker?.isConnected()) jobsWorker.send({ type: SMS_QUEUED });
    });
    return worker;
  };
  const ready = (worker: Worker) =>
    new Promise<string>((resolve, reject) => {
      const onMessage = (m: unknown) => {
        if (!isReady(m)) return;
        worker.off('exit', onExit);
        resolve(m.banner);
      };
      const onExit = (code: number | null, signal: string | null) => {
        worker.off('message', onMessage);
        reject(new Error(`worker ${worker.process.pid} exited (${signal ?? `code ${code}`}) before it was ready`));
      };
      worker.on('message', onMessage);
      worker.once('exit', onExit);
    });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log('info', 'shutting down: passing the signal to every worker', { signal, workers: workers.size });
    for (const w of workers) w.process.kill(signal);
    const force = setTimeout(() => {
      log('error', 'workers did not stop in time; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 5_000);
    force.unref();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  let exitCode = 0;
  cluster.on('exit', (worker, code, signal) => {
    workers.delete(worker);
    if (stopping) {
      if (code !== 0) exitCode = 1;
      if (workers.size === 0) process.exit(exitCode);
      return;
    }
    log('error', 'worker died; starting another', { worker_pid: worker.process.pid, code, signal, restart_in_ms: restartDelay });
    const delay = restartDelay;
    restartDelay = Math.min(RESTART_MAX_MS, restartDelay * 2);
    const role = worker === jobsWorker ? 'jobs' : 'requests';
    setTimeout(() => {
      if (stopping) return;
      const replacement = fork(role);
      ready(replacement).then(
        () => {
          restartDelay = RESTART_MIN_MS;
          log('info', 'worker started', { worker_pid: replacement.process.pid });
        },
        () => undefined, // its exit is handled above
      );
    }, delay).unref();
  });

  // The first worker migrates and seeds alone, then the others start. A failure on the way
  // (a taken port, a bad database) stops every worker and ends the supervisor.
  let banner: string;
  try {
    banner = await ready(fork('jobs'));
    await Promise.all(Array.from({ length: n - 1 }, () => ready(fork('requests'))));
  } catch (err) {
    stopping = true;
    for (const w of workers) w.process.kill('SIGTERM');
    throw err;
  }
  for (const w of workers) log('info', 'worker started', { worker_pid: w.process.pid });
  const line = `  Processes:     ${n} workers (WEB_CONCURRENCY), supervisor pid ${process.pid}\n`;
  process.stdout.write(banner.replace(/(\n {2}Store: [^\n]*\n)/, `$1${line}`));
}
