import { PeriodicSweep } from '../core/periodic-sweep.js';
import type { Scheduler } from '../core/scheduler.js';

/** Probes in a row without an answer (no response, or 503) that mark a target down. */
export const PROBE_FAILURES_TO_DOWN = 2;

interface Health {
  failures: number;
  down: boolean;
  reason: string;
}

export interface ProbeHealthOptions {
  scheduler: Scheduler;
  /** 0: no probing (every target counts as up). */
  intervalMs: number;
  /** Probes every target once; each outcome goes to record(). */
  probeAll(): Promise<void>;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
  /** What the log lines say of a target: 'carrier gateway', 'origination URI'. */
  target: string;
  /** What a target that is down is skipped by: 'calls', 'trunk calls'. */
  skippedBy: string;
}

/**
 * The health of targets probed with OPTIONS every interval: a target that leaves
 * PROBE_FAILURES_TO_DOWN probes in a row unanswered (no response within the probe's time, a
 * transport error, a name that does not resolve, or 503) is down; any other response (200,
 * and also 404 or 405 from a host that does not serve OPTIONS itself) shows the host is
 * there, and puts it back up at once. Each change is logged once.
 */
export class ProbeHealth {
  private readonly health = new Map<string, Health>();
  private readonly sweep: PeriodicSweep | null;

  constructor(private readonly options: ProbeHealthOptions) {
    this.sweep =
      options.intervalMs > 0
        ? new PeriodicSweep(
            async () => {
              await options.probeAll();
              return 0;
            },
            options.scheduler,
            options.intervalMs,
            (error) => options.log.warn({ err: error }, `probing ${options.target}s failed`),
          )
        : null;
  }

  start(): void {
    this.sweep?.start();
  }

  stop(): void {
    this.sweep?.stop();
  }

  /** Why a target is skipped, or null when it is up (or was never probed). */
  downReason(key: string): string | null {
    const health = this.health.get(key);
    return health?.down ? health.reason : null;
  }

  /** Forgets every target but these (those no longer probed). */
  keepOnly(keys: ReadonlySet<string>): void {
    for (const key of this.health.keys()) if (!keys.has(key)) this.health.delete(key);
  }

  /** One probe's outcome: null when answered, else why not. `fields` name it in log lines. */
  record(key: string, outcome: string | null, fields: object): void {
    const health = this.health.get(key) ?? { failures: 0, down: false, reason: '' };
    this.health.set(key, health);
    const { log, target, skippedBy } = this.options;
    if (outcome === null) {
      if (health.down) log.info(fields, `${target} answers again`);
      health.failures = 0;
      health.down = false;
      return;
    }
    health.failures++;
    health.reason = outcome;
    if (!health.down && health.failures >= PROBE_FAILURES_TO_DOWN) {
      health.down = true;
      log.warn(
        { ...fields, reason: outcome },
        `${target} is down: ${skippedBy} skip it until it answers again`,
      );
    }
  }
}
