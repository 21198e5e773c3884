/**
 * Messages between threads, sent together once per turn of the sender's event loop. Each
 * postMessage costs a copy and, when the other thread sleeps, a wake-up (tens of µs on a
 * virtual machine); a busy turn (a burst of calls starting, a worker answering a burst of
 * commands) then costs one of each instead of one per message. A batch goes out in the check
 * phase of the turn it was started in, so nothing waits for another turn. Order is kept.
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

/**
 * The receiving end of MessageBatch: handles the messages of each batch in order, one per
 * step, each step after the promise reactions of the one before have run, as they would
 * have if each message had come alone (a command that opens a session has finished before
 * the next one, naming that session, runs).
 */
export class BatchReader<T> {
  private queue: T[] = [];
  private next = 0;
  private scheduled = false;

  constructor(private readonly handle: (message: T) => void) {}

  read(messages: T[]): void {
    if (messages.length === 0) return;
    this.queue.push(...messages);
    if (!this.scheduled) this.step();
  }

  private readonly step = (): void => {
    this.scheduled = false;
    const message = this.queue[this.next++] as T;
    if (this.next === this.queue.length) {
      this.queue = [];
      this.next = 0;
    } else {
      this.scheduled = true;
      setImmediate(this.step);
    }
    this.handle(message);
  };
}
