import type { Scheduler, TimerHandle } from '../../core/scheduler.js';

export interface CollectOptions {
  /** Seconds to wait for the first digit. */
  timeout: number;
  /** Seconds to wait between digits. */
  digitTimeout: number;
  /** Ends the input (not part of it); null for none. */
  finishOnKey: string | null;
  /** The input ends once it has this many digits. */
  numDigits: number;
  /** Seconds the whole input may take from the start of collecting (GetInput's executionTimeout). */
  maxSeconds?: number;
}

/** Why collecting stopped, and what was typed. */
export interface Collected {
  digits: string;
  reason: 'finish-key' | 'num-digits' | 'timeout' | 'call-ended';
}

/**
 * The digits a caller presses, from RTP, tones or SIP INFO: kept from the moment listening
 * starts (so keys pressed during a prompt count), and collected by GetDigits' rules.
 */
export class DigitCollector {
  private buffer: string[] = [];
  private waiter: (() => void) | null = null;
  private listening = false;
  private closed = false;

  constructor(private readonly scheduler: Scheduler) {}

  /** Starts keeping digits, forgetting any pressed before. */
  listen(): void {
    this.buffer = [];
    this.listening = true;
  }

  stop(): void {
    this.listening = false;
  }

  /** A digit arrived from the call. */
  press(digit: string): void {
    if (!this.listening || this.closed) return;
    this.buffer.push(digit);
    this.waiter?.();
  }

  /** The call ended: any collection in progress finishes. */
  close(): void {
    this.closed = true;
    this.waiter?.();
  }

  get pressed(): number {
    return this.buffer.length;
  }

  /** Collects by the rules, starting from the digits already pressed. */
  async collect(options: CollectOptions): Promise<Collected> {
    let digits = '';
    let first = true;
    const deadline =
      options.maxSeconds === undefined
        ? Infinity
        : this.scheduler.now() + options.maxSeconds * 1000;
    for (;;) {
      const left = (deadline - this.scheduler.now()) / 1000;
      const wait = Math.min(first ? options.timeout : options.digitTimeout, left);
      const next = this.buffer.shift() ?? (wait > 0 ? await this.next(wait) : null);
      if (this.closed) return { digits, reason: 'call-ended' };
      if (next === null) return { digits, reason: 'timeout' };
      first = false;
      if (options.finishOnKey !== null && next === options.finishOnKey) {
        return { digits, reason: 'finish-key' };
      }
      digits += next;
      if (digits.length >= options.numDigits) return { digits, reason: 'num-digits' };
    }
  }

  private next(seconds: number): Promise<string | null> {
    return new Promise((resolve) => {
      let timer: TimerHandle | null = null;
      const done = (value: string | null): void => {
        timer?.cancel();
        this.waiter = null;
        resolve(value);
      };
      this.waiter = () => done(this.closed ? null : (this.buffer.shift() ?? null));
      timer = this.scheduler.after(seconds * 1000, () => done(null));
    });
  }
}
