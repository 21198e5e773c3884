import type {
  CallbackDeliveryDelegate,
  CallbackLog,
  CallbackReport,
  SigningKeys,
} from '../../../src/callbacks/callback-delivery.js';
import type { SigningTokens } from '../../../src/callbacks/signature.js';

type Kind = 'delivered' | 'retry' | 'gaveUp' | 'dropped';
type Report = CallbackReport & { delayMs?: number };

/** Records what a CallbackDelivery reports, and lets a test wait for it. */
export class DeliveryEvents implements CallbackDeliveryDelegate {
  readonly events: Array<{ kind: Kind; report: Report }> = [];
  private readonly waiters = new Set<() => void>();

  onDelivered(report: CallbackReport): void {
    this.record('delivered', report);
  }
  onRetryScheduled(report: CallbackReport & { delayMs: number }): void {
    this.record('retry', report);
  }
  onGiveUp(report: CallbackReport): void {
    this.record('gaveUp', report);
  }
  onDropped(report: CallbackReport): void {
    this.record('dropped', report);
  }

  of(kind: Kind): Report[] {
    return this.events.filter((e) => e.kind === kind).map((e) => e.report);
  }

  /** The `count`-th report of `kind`, waiting for it up to a generous deadline. */
  async waitFor(kind: Kind, count = 1, timeoutMs = 15_000): Promise<Report> {
    const found = (): Report | undefined => this.of(kind)[count - 1];
    const now = found();
    if (now) return now;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no ${kind} report #${count} within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = (): void => {
        const report = found();
        if (!report) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(report);
      };
      this.waiters.add(check);
    });
  }

  private record(kind: Kind, report: Report): void {
    this.events.push({ kind, report });
    for (const wake of this.waiters) wake();
  }
}

/** Keeps every log line as text so a test can search it for secrets. */
export class RecordedLog implements CallbackLog {
  readonly lines: string[] = [];
  info(fields: Record<string, unknown>, message: string): void {
    this.lines.push(JSON.stringify({ level: 'info', message, ...fields }));
  }
  warn(fields: Record<string, unknown>, message: string): void {
    this.lines.push(JSON.stringify({ level: 'warn', message, ...fields }));
  }
}

/** Accounts and their tokens, as the state layer would resolve them. */
export class AccountKeys implements SigningKeys {
  readonly accounts = new Map<string, SigningTokens>();
  async keysFor(accountId: string): Promise<SigningTokens | null> {
    return this.accounts.get(accountId) ?? null;
  }
}
