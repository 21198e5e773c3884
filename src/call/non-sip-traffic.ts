import { Counter, type Registry } from 'prom-client';
import type { Scheduler, TimerHandle } from '../core/scheduler.js';
import type { Flow } from '../sip/transport/flow.js';
import type { SipLogger } from './sip-service.js';

/** At most one log line about non-SIP traffic in this long. */
export const NON_SIP_LOG_EVERY_MS = 10_000;

/**
 * What reaches the SIP ports and is not SIP (scans, STUN, stray HTTP, single bytes): the stack
 * drops it unanswered; here each is counted on /metrics, and the log is told at most once per
 * NON_SIP_LOG_EVERY_MS with the count since its last line, so a flood cannot flood the log.
 */
export class NonSipTraffic {
  private readonly counter: Counter;
  private lastLineAt = -Infinity;
  private unreported = 0;
  private lastSource = '';
  private pending: TimerHandle | null = null;

  constructor(
    registry: Registry,
    private readonly scheduler: Scheduler,
    private readonly log: SipLogger,
  ) {
    this.counter = new Counter({
      name: 'voxgate_sip_non_sip_received_total',
      help: 'Messages on the SIP ports that are not SIP, by transport: dropped unanswered',
      labelNames: ['transport'],
      registers: [registry],
    });
  }

  received(flow: Flow): void {
    this.counter.inc({ transport: flow.protocol });
    this.unreported++;
    const { address, port } = flow.remote;
    this.lastSource = `${flow.protocol} ${address.includes(':') ? `[${address}]` : address}:${port}`;
    const wait = this.lastLineAt + NON_SIP_LOG_EVERY_MS - this.scheduler.now();
    if (wait <= 0) this.report();
    else this.pending ??= this.scheduler.after(wait, () => this.report());
  }

  /** Stops the pending line (shutdown). */
  close(): void {
    this.pending?.cancel();
    this.pending = null;
  }

  private report(): void {
    this.close();
    this.log.warn(
      {
        sip: true,
        count: this.unreported,
        last: this.lastSource,
        everyS: NON_SIP_LOG_EVERY_MS / 1000,
      },
      'dropped non-SIP messages on the SIP ports without answering',
    );
    this.unreported = 0;
    this.lastLineAt = this.scheduler.now();
  }
}
