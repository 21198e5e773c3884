import { Worker, type Transferable } from 'node:worker_threads';
import { MessageBatch } from '../../core/message-batch.js';
import { workerEntry, workerScript } from '../../core/worker-script.js';
import type {
  Command,
  LatencyReport,
  QuietCommand,
  QuietFailure,
  Request,
  Results,
  SessionEvent,
  WorkerMessage,
  WorkerSettings,
} from './protocol.js';

export interface ChannelUser {
  onEvent(sessionId: string, event: SessionEvent): void;
  /** The worker died without being asked to (an exception, an abort, a kill). */
  onCrash(error: Error): void;
  /** RTP ports the worker bound ahead, each reservable once by naming it in createSession. */
  onPortsReady?(ports: number[]): void;
  /** Stream latencies the worker observed since its last report. */
  onLatency?(report: LatencyReport): void;
  /** A command sent with tell() failed. */
  onFailed?(failure: QuietFailure): void;
}

const ENTRY = workerEntry('media-worker', import.meta.url);

/**
 * One media worker thread as the main thread sees it: request() sends a command and
 * resolves with its reply (STYLE.md, the mediasoup channel); events go to the user. When
 * the thread dies, every pending request is rejected and the user is told, once. Both ways,
 * messages travel in batches, one per turn of the sender's event loop (MessageBatch).
 */
export class MediaWorkerChannel {
  private readonly worker: Worker;
  private readonly pending = new Map<
    number,
    { resolve(v: unknown): void; reject(e: Error): void }
  >();
  private readonly outbox: MessageBatch<Request>;
  private sequence = 0;
  private closing = false;
  private dead = false;
  private readonly id: number;

  constructor(
    settings: WorkerSettings,
    private readonly user: ChannelUser,
  ) {
    this.worker = new Worker(workerScript(ENTRY), { workerData: settings });
    this.id = this.worker.threadId;
    this.outbox = new MessageBatch((requests, transfer) => {
      if (!this.dead) this.worker.postMessage(requests, transfer);
    });
    this.worker.on('message', (messages: WorkerMessage[]) => {
      for (const message of messages) this.receive(message);
    });
    this.worker.on('error', (error) => this.die(error));
    this.worker.on('exit', (code) => this.die(new Error(`media worker exited with code ${code}`)));
  }

  /** The thread's id, kept: Node's Worker.threadId reads -1 once the thread has exited. */
  get threadId(): number {
    return this.id;
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** `transfer`: what the command carries that moves to the worker (a MessagePort). */
  request<C extends Command>(
    command: C,
    transfer: readonly Transferable[] = [],
  ): Promise<Results[C['type']]> {
    if (this.dead) return Promise.reject(new Error('media worker is not running'));
    const id = ++this.sequence;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.outbox.push({ ...command, id } as Request, transfer);
    });
  }

  /**
   * Sends a command nobody waits for: the worker answers it only if it fails (onFailed), which
   * spares a message back, and often a wake-up of this thread, per command. False when the
   * thread is not running (the command was not sent).
   */
  tell(command: QuietCommand): boolean {
    if (this.dead) return false;
    this.outbox.push({ ...command, id: ++this.sequence, quiet: true });
    return true;
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.worker.terminate();
  }

  /** Ends the thread as a crash would (for supervision tests and forced restarts). */
  async kill(): Promise<void> {
    await this.worker.terminate();
  }

  private receive(message: WorkerMessage): void {
    if (message.kind === 'event') {
      this.user.onEvent(message.sessionId, message.event);
      return;
    }
    if (message.kind === 'ports') {
      this.user.onPortsReady?.(message.ports);
      return;
    }
    if (message.kind === 'latency') {
      this.user.onLatency?.(message);
      return;
    }
    if (message.kind === 'failed') {
      this.user.onFailed?.(message);
      return;
    }
    const waiter = this.pending.get(message.id);
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.ok) waiter.resolve(message.result);
    else waiter.reject(new Error(message.error));
  }

  private die(error: Error): void {
    if (this.dead) return;
    this.dead = true;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
    if (!this.closing) this.user.onCrash(error);
  }
}
