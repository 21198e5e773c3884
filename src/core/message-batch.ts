import type { Transferable } from 'node:worker_threads';

/**
 * Messages between threads, sent together once per turn of the sender's event loop. Each
 * postMessage costs a copy and, when the other thread sleeps, a wake-up (tens of µs on a
 * virtual machine); a busy turn (a burst of calls starting, a worker answering a burst of
 * commands) then costs one of each instead of one per message. A batch goes out in the check
 * phase of the turn it was started in, so nothing waits for another turn. Order is kept; the
 * receiver handles a batch's messages in order, in one go. A message may carry objects that
 * move to the other thread rather than being copied (a MessagePort): they go in the batch's
 * transfer list.
 */
export class MessageBatch<T> {
  private queued: T[] = [];
  private transfer: Transferable[] = [];

  constructor(private readonly send: (messages: T[], transfer: Transferable[]) => void) {}

  push(message: T, transfer: readonly Transferable[] = []): void {
    if (this.queued.length === 0) setImmediate(this.flush);
    this.queued.push(message);
    if (transfer.length > 0) this.transfer.push(...transfer);
  }

  private readonly flush = (): void => {
    const messages = this.queued;
    const transfer = this.transfer;
    this.queued = [];
    this.transfer = [];
    this.send(messages, transfer);
  };
}
