// The wallet's crypto off the request thread (DESIGN.md §15 "Bounded work", docs/wallet.md
// "Limits"): checking an uploaded certificate, key, .p12 or service-account file and signing a
// pass (node-forge's PKCS#7 is plain JavaScript: ~230 ms of CPU for a 2,048-bit key, ~630 ms
// for 4,096) and a Google save link run in a small pool of worker threads. The thread that
// serves requests only posts the inputs and awaits the result.
//
// The pool: at most WALLET_WORKERS threads (2), started when the first task comes (a server
// that never signs a pass never starts one) and ended by close() (the app's onClose); idle
// threads do not hold the process open (unref). Tasks wait in a queue of at most MAX_QUEUED;
// past that a task is refused at once (WalletBusy: the route answers 429) instead of
// piling up. A task that outlives TASK_TIMEOUT_MS ends its thread (started again on demand).
// Each thread's heap has its own small limits (WORKER_LIMITS).
//
// This module is also the worker's entry (the pattern of catalog/feed-worker.ts): the built
// .js file itself, or under tsx a bootstrap that registers tsx first.
import { fileURLToPath } from 'node:url';
import { parentPort, Worker, workerData, type ResourceLimits } from 'node:worker_threads';
import type { CouponView } from '../coupons/coupons.service.js';
import type { LoyaltyCardView } from '../loyalty-cards/loyalty-cards.service.js';
import { cardPass, couponPass, type AppleSigning, type Locale } from './apple-pass.js';
import { cardSaveUrl, couponSaveUrl } from './google-pass.js';
import { capKeyDerivation, checkAppleCredentials, checkServiceAccount, type AppleCredentials, type AppleInput, type Checked, type ServiceAccount } from './wallet-credentials.js';
import type { PassFacts } from './wallet.repository.js';

export const WALLET_WORKERS = 2;
export const MAX_QUEUED = 64;
export const TASK_TIMEOUT_MS = 30_000;
export const WORKER_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 };

type PassOpts = { locale: Locale; token: string; webServiceURL: string };

export type WalletTask =
  | { op: 'checkApple'; input: AppleInput; nowMs: number }
  | { op: 'checkGoogle'; value: unknown }
  | { op: 'cardPass'; signing: AppleSigning; card: LoyaltyCardView; facts: PassFacts; opts: PassOpts }
  | { op: 'couponPass'; signing: AppleSigning; coupon: CouponView; facts: PassFacts; opts: PassOpts }
  | { op: 'cardSaveUrl'; account: ServiceAccount; issuerId: string; card: LoyaltyCardView; facts: PassFacts; locale: Locale }
  | { op: 'couponSaveUrl'; account: ServiceAccount; issuerId: string; coupon: CouponView; facts: PassFacts; locale: Locale };

type Results = {
  checkApple: Checked<AppleCredentials>;
  checkGoogle: Checked<ServiceAccount>;
  cardPass: Buffer;
  couponPass: Buffer;
  cardSaveUrl: string;
  couponSaveUrl: string;
};

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

/** A buffer the worker owns, to transfer (passkit-generator's may be a view of a shared pool). */
function transferable(buf: Buffer): Uint8Array {
  const out = new Uint8Array(buf.byteLength);
  out.set(buf);
  return out;
}

async function perform(task: WalletTask): Promise<unknown> {
  switch (task.op) {
    case 'checkApple':
      return checkAppleCredentials(task.input, new Date(task.nowMs));
    case 'checkGoogle':
      return checkServiceAccount(task.value);
    case 'cardPass':
      return transferable(cardPass(task.signing, task.card, task.facts, task.opts));
    case 'couponPass':
      return transferable(couponPass(task.signing, task.coupon, task.facts, task.opts));
    case 'cardSaveUrl':
      return cardSaveUrl(task.account, task.issuerId, task.card, task.facts, task.locale);
    case 'couponSaveUrl':
      return couponSaveUrl(task.account, task.issuerId, task.coupon, task.facts, task.locale);
  }
}

if (parentPort && (workerData as { walletWorker?: boolean } | undefined)?.walletWorker) {
  const port = parentPort;
  capKeyDerivation();
  port.on('message', (msg: { id: number; task: WalletTask }) => {
    perform(msg.task).then(
      (value) => port.postMessage({ id: msg.id, ok: true, value } satisfies Reply, value instanceof Uint8Array ? [value.buffer as ArrayBuffer] : []),
      (err: unknown) => port.postMessage({ id: msg.id, ok: false, message: err instanceof Error ? err.message : String(err) } satisfies Reply),
    );
  });
}

function workerEntry(): { entry: string; eval: boolean } {
  const url = import.meta.url;
  if (!url.endsWith('.ts')) return { entry: fileURLToPath(url), eval: false };
  return { entry: `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url)}); });`, eval: true };
}

/** The queue is full: the caller answers 429 (try again in a moment). */
export class WalletBusy extends Error {}
/** The task failed in the worker, timed out, or its thread died. */
export class WalletWorkerError extends Error {}

interface Job {
  id: number;
  task: WalletTask;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

export interface WalletWorkersOptions {
  size?: number;
  maxQueued?: number;
  timeoutMs?: number;
  limits?: ResourceLimits;
}

export class WalletWorkers {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly opts: WalletWorkersOptions = {}) {}

  /** Threads running now (tests: lazily started, ended on close). */
  get threads(): number {
    return this.slots.length;
  }

  run<K extends WalletTask['op']>(task: Extract<WalletTask, { op: K }>): Promise<Results[K]> {
    if (this.closed) return Promise.reject(new WalletWorkerError('the wallet workers are closed'));
    if (this.queue.length >= (this.opts.maxQueued ?? MAX_QUEUED)) return Promise.reject(new WalletBusy('the wallet workers are busy'));
    return new Promise<unknown>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, task, resolve, reject });
      this.dispatch();
    }).then((value) => (value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value) as Results[K]);
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.job === undefined);
      if (!slot) {
        if (this.slots.length >= (this.opts.size ?? WALLET_WORKERS)) return;
        slot = this.spawn();
      }
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.ref();
      const s = slot;
      s.timer = setTimeout(() => {
        this.fail(s, new WalletWorkerError(`a wallet task took over ${this.opts.timeoutMs ?? TASK_TIMEOUT_MS} ms`));
      }, this.opts.timeoutMs ?? TASK_TIMEOUT_MS);
      s.worker.postMessage({ id: job.id, task: job.task });
    }
  }

  private spawn(): Slot {
    const { entry, eval: isEval } = workerEntry();
    const worker = new Worker(entry, {
      eval: isEval,
      workerData: { walletWorker: true },
      resourceLimits: this.opts.limits ?? WORKER_LIMITS,
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker, job: undefined, timer: undefined };
    worker.on('message', (reply: Reply) => {
      const job = slot.job;
      if (!job || job.id !== reply.id) return;
      clearTimeout(slot.timer);
      slot.job = undefined;
      slot.timer = undefined;
      worker.unref();
      if (reply.ok) job.resolve(reply.value);
      else job.reject(new WalletWorkerError(reply.message));
      this.dispatch();
    });
    worker.on('error', (err: Error) => this.fail(slot, new WalletWorkerError(err.message)));
    worker.on('exit', () => this.fail(slot, new WalletWorkerError('the wallet worker exited')));
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  /** The slot's thread is gone (or is ended now): its task fails, the others go on in new threads. */
  private fail(slot: Slot, err: Error): void {
    const i = this.slots.indexOf(slot);
    if (i === -1) return;
    this.slots.splice(i, 1);
    clearTimeout(slot.timer);
    slot.worker.removeAllListeners('exit');
    void slot.worker.terminate();
    slot.job?.reject(err);
    slot.job = undefined;
    if (!this.closed) this.dispatch();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new WalletWorkerError('the wallet workers are closed'));
    const slots = this.slots.splice(0);
    await Promise.all(
      slots.map(async (s) => {
        clearTimeout(s.timer);
        s.worker.removeAllListeners('exit');
        s.job?.reject(new WalletWorkerError('the wallet workers are closed'));
        await s.worker.terminate();
      }),
    );
  }
}
