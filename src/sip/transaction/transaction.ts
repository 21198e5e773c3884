import type { Scheduler, TimerHandle } from '../../core/scheduler.js';
import { timerTable, type TimerSettings, type TimerTable } from './timers.js';

/** Sends a transaction's bytes to its fixed destination; throws when the transport fails. */
export interface TransactionSender {
  send(data: Buffer): void;
}

export interface TransactionOptions {
  scheduler: Scheduler;
  sender: TransactionSender;
  /** TCP, TLS and WebSocket are reliable; UDP is not (no retransmissions on reliable ones). */
  reliable: boolean;
  timers: TimerSettings;
}

/** What every transaction tells its user (the TU) besides its own kind's events. */
export interface TransactionUserBase {
  onTimeout?(): void;
  onTransportError?(error: Error): void;
  onTerminated?(): void;
}

export class IllegalTransition extends Error {
  constructor(kind: string, from: string, to: string) {
    super(`${kind}: illegal state transition ${from} -> ${to}`);
    this.name = 'IllegalTransition';
  }
}

/**
 * The common machinery of the four RFC 3261 17 state machines: the state with its legal moves,
 * named timers on the injected scheduler, and sending with transport-error handling.
 */
export abstract class Transaction<State extends string> {
  protected readonly timers: TimerTable;
  private readonly running = new Map<string, TimerHandle>();
  private current: State;

  protected constructor(
    protected readonly options: TransactionOptions,
    initial: State,
    private readonly moves: Readonly<Record<State, readonly State[]>>,
    private readonly user: TransactionUserBase,
  ) {
    this.current = initial;
    this.timers = timerTable(options.timers, options.reliable);
  }

  get state(): State {
    return this.current;
  }

  protected abstract readonly kind: string;

  protected transition(to: State): void {
    if (!this.moves[this.current].includes(to))
      throw new IllegalTransition(this.kind, this.current, to);
    this.current = to;
    if (to === ('terminated' as State)) {
      for (const timer of this.running.values()) timer.cancel();
      this.running.clear();
      this.user.onTerminated?.();
    }
  }

  /** Starts (or restarts) the named timer. */
  protected startTimer(name: string, ms: number, fire: () => void): void {
    this.running.get(name)?.cancel();
    this.running.set(
      name,
      this.options.scheduler.after(ms, () => {
        this.running.delete(name);
        fire();
      }),
    );
  }

  protected stopTimer(name: string): void {
    this.running.get(name)?.cancel();
    this.running.delete(name);
  }

  /** A timer of 0 (reliable transports) moves on at once rather than through the scheduler. */
  protected afterOrNow(name: string, ms: number, fire: () => void): void {
    if (ms === 0) fire();
    else this.startTimer(name, ms, fire);
  }

  /** Sends; a transport failure terminates the transaction and tells the TU (RFC 3261 17.1.4). */
  protected send(data: Buffer): boolean {
    try {
      this.options.sender.send(data);
      return true;
    } catch (error) {
      if (this.current !== ('terminated' as State)) {
        this.transition('terminated' as State);
        this.user.onTransportError?.(error as Error);
      }
      return false;
    }
  }

  /** A send that failed after the fact (a connection that could not be opened). */
  transportFailed(error: Error): void {
    if (this.current === ('terminated' as State)) return;
    this.transition('terminated' as State);
    this.user.onTransportError?.(error);
  }

  /** Ends the transaction at once, without telling the TU anything but onTerminated. */
  terminate(): void {
    if (this.current !== ('terminated' as State)) this.transition('terminated' as State);
  }

  protected timeout(): void {
    this.transition('terminated' as State);
    this.user.onTimeout?.();
  }
}
