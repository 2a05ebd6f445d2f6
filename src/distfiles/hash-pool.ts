import { Worker } from 'node:worker_threads';
import os from 'node:os';
import type { HashJob, HashOutcome, HashReply } from './hash-protocol.js';

interface Pending {
  id: number;
  path: string;
  sizeHint: number;
  resolve: (outcome: HashOutcome) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  job?: Pending;
}

/** Workers started ahead of need (prewarmHashWorkers), waiting for a pool to adopt them. */
const warm: { worker: Worker; failed: boolean }[] = [];

/**
 * Start `count` hash workers now, for a pool created later to adopt: a worker
 * takes 40-90 ms to boot (a new V8 isolate and Node's bootstrap), which the
 * `manifest` command, sure to hash, spends while it is still loading the
 * manifest and scanning the overlay instead of after. Parked workers are
 * unref'd (they never keep the process alive) and one that fails before
 * it is adopted is dropped.
 */
export function prewarmHashWorkers(count = defaultConcurrency()): void {
  for (let i = warm.length; i < count; i++) {
    const entry = { worker: new Worker(new URL('./hash-worker.js', import.meta.url)), failed: false };
    entry.worker.unref();
    const drop = () => (entry.failed = true);
    entry.worker.once('error', drop);
    entry.worker.once('exit', drop);
    warm.push(entry);
  }
}

function adoptWarmWorker(): Worker | undefined {
  while (warm.length > 0) {
    const entry = warm.shift()!;
    entry.worker.removeAllListeners('error');
    entry.worker.removeAllListeners('exit');
    if (!entry.failed) return entry.worker;
    void entry.worker.terminate();
  }
  return undefined;
}

function defaultConcurrency(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

export class HashError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'HashError';
  }
}

/**
 * Worker threads that hash whole files, one file per worker at a time.
 * Waiting files are taken largest first (longest-processing-time-first), so a
 * big tarball starts early instead of being the lone straggler at the end
 * while the other cores sit idle.
 */
export class HashPool {
  private readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(concurrency?: number) {
    this.size = Math.max(1, Math.floor(concurrency ?? defaultConcurrency()));
  }

  hash(path: string, sizeHint = 0): Promise<HashOutcome> {
    if (this.closed) return Promise.reject(new HashError('hash pool is closed'));
    return new Promise((resolve, reject) => {
      const job: Pending = { id: this.nextId++, path, sizeHint, resolve, reject };
      // Insert keeping the queue sorted by descending size; equal sizes stay FIFO.
      let i = this.queue.length;
      while (i > 0 && this.queue[i - 1]!.sizeHint < sizeHint) i--;
      this.queue.splice(i, 0, job);
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new HashError('hash pool closed before the file was hashed'));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.job);
      if (!slot) {
        if (this.slots.length >= this.size) return;
        slot = this.spawn();
      }
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.ref();
      const message: HashJob = { id: job.id, path: job.path };
      slot.worker.postMessage(message);
    }
  }

  private spawn(): Slot {
    const worker = adoptWarmWorker() ?? new Worker(new URL('./hash-worker.js', import.meta.url));
    const slot: Slot = { worker };
    worker.on('message', (reply: HashReply) => {
      const job = slot.job;
      if (!job || job.id !== reply.id) return;
      slot.job = undefined;
      // An idle worker must not keep the process alive if the caller forgets close().
      worker.unref();
      if (reply.ok) {
        const { id: _id, ok: _ok, ...outcome } = reply;
        job.resolve(outcome);
      } else {
        job.reject(new HashError(reply.message, reply.code));
      }
      this.dispatch();
    });
    const fail = (err: Error) => {
      const index = this.slots.indexOf(slot);
      if (index >= 0) this.slots.splice(index, 1);
      slot.job?.reject(new HashError(`hash worker failed: ${err.message}`));
      slot.job = undefined;
      if (!this.closed) this.dispatch();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!this.closed && this.slots.includes(slot)) fail(new Error(`exited with code ${code}`));
    });
    this.slots.push(slot);
    return slot;
  }
}
