import { Worker } from 'node:worker_threads';
import { MessageBatch } from '../core/message-batch.js';
import { OutboundRefused, type OutboundGuard } from '../core/outbound-guard.js';
import { workerEntry, workerScript } from '../core/worker-script.js';
import type {
  ExchangeOrder,
  ExchangeOutcome,
  FromWorker,
  PinQuestion,
  PinVerdict,
  ToWorker,
} from './http-worker-protocol.js';

const ENTRY = workerEntry('http-worker', import.meta.url);

/** An order as the caller gives it: the channel numbers it and the guard. */
export type Order = Omit<ExchangeOrder, 'kind' | 'id' | 'guard'>;

/**
 * The main thread's side of the HTTP worker: exchange() hands it a request and resolves with
 * what the request gave; the worker asks back for the guard's verdict on each connection it
 * opens. The thread keeps the process alive only while a request is out. When it dies, every
 * request out fails with the reason and the next one starts a new thread.
 */
export class HttpWorkerChannel {
  private readonly worker: Worker;
  private readonly outbox: MessageBatch<ToWorker>;
  private readonly pending = new Map<number, (outcome: ExchangeOutcome) => void>();
  /** Guards by the number the worker knows them by; held weakly, as gateways come and go. */
  private readonly guards = new Map<number, WeakRef<OutboundGuard>>();
  private readonly guardNumbers = new WeakMap<OutboundGuard, number>();
  /** A guard collected takes its connection pools in the worker with it. */
  private readonly forgotten = new FinalizationRegistry<number>((guard) => {
    this.guards.delete(guard);
    this.outbox.push({ kind: 'forget', guard });
  });
  private guardSequence = 0;
  private sequence = 0;
  private dead = false;

  constructor(
    /** Told once when the thread dies, with the reason and how many requests it had. */
    private readonly onDeath: (
      channel: HttpWorkerChannel,
      reason: string,
      inFlight: number,
    ) => void,
  ) {
    this.worker = new Worker(workerScript(ENTRY));
    this.worker.unref();
    this.outbox = new MessageBatch((messages) => {
      if (!this.dead) this.worker.postMessage(messages);
    });
    this.worker.on('message', (messages: FromWorker[]) => {
      for (const message of messages) {
        if (message.kind === 'pin') this.pin(message);
        else this.done(message.id, message.outcome);
      }
    });
    this.worker.on('error', (error) => this.die(`the HTTP worker failed: ${error.message}`));
    this.worker.on('exit', (code) => this.die(`the HTTP worker exited with code ${code}`));
  }

  /** Requests handed to the thread and not answered yet. */
  get inFlight(): number {
    return this.pending.size;
  }

  exchange(order: Order, guard: OutboundGuard | null): Promise<ExchangeOutcome> {
    if (this.dead) return Promise.resolve({ ok: false, error: 'the HTTP worker is not running' });
    const id = ++this.sequence;
    return new Promise((resolve) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, resolve);
      this.outbox.push({
        kind: 'exchange',
        id,
        guard: guard === null ? null : this.numberOf(guard),
        ...order,
      });
    });
  }

  /** Ends the thread (tests: the next request starts another). */
  async terminate(): Promise<void> {
    await this.worker.terminate();
  }

  private numberOf(guard: OutboundGuard): number {
    let number = this.guardNumbers.get(guard);
    if (number === undefined) {
      number = ++this.guardSequence;
      this.guardNumbers.set(guard, number);
      this.guards.set(number, new WeakRef(guard));
      this.forgotten.register(guard, number);
    }
    return number;
  }

  private done(id: number, outcome: ExchangeOutcome): void {
    const resolve = this.pending.get(id);
    if (!resolve) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
    resolve(outcome);
  }

  private pin(question: PinQuestion): void {
    const answer = (verdict: PinVerdict): void =>
      this.outbox.push({ kind: 'pinned', id: question.id, verdict });
    const guard = this.guards.get(question.guard)?.deref();
    if (!guard) return answer({ ok: false, error: 'the outbound guard is gone' });
    guard.pin(new URL(question.origin), false).then(
      (target) => answer({ ok: true, address: target.address }),
      (error: NodeJS.ErrnoException) =>
        answer(
          error instanceof OutboundRefused
            ? { ok: false, refused: { refusal: error.refusal, host: error.host, port: error.port } }
            : { ok: false, error: error.message, ...(error.code ? { code: error.code } : {}) },
        ),
    );
  }

  private die(reason: string): void {
    if (this.dead) return;
    this.dead = true;
    this.onDeath(this, reason, this.pending.size);
    for (const resolve of this.pending.values()) resolve({ ok: false, error: reason });
    this.pending.clear();
  }
}
