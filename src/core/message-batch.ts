/**
 * Messages between threads, sent together once per turn of the sender's event loop. Each
 * postMessage costs a copy and, when the other thread sleeps, a wake-up (tens of µs on a
 * virtual machine); a busy turn (a burst of calls starting, a worker answering a burst of
 * commands) then costs one of each instead of one per message. A batch goes out in the check
 * phase of the turn it was started in, so nothing waits for another turn. Order is kept; the
 * receiver handles a batch's messages in order, in one go.
 */
export class MessageBatch<T> {
  private queued: T[] = [];

  constructor(private readonly send: (messages: T[]) => void) {}

  push(message: T): void {
    if (this.queued.length === 0) setImmediate(this.flush);
    this.queued.push(message);
  }

  private readonly flush = (): void => {
    const messages = this.queued;
    this.queued = [];
    this.send(messages);
  };
}
