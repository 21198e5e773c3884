import type { Scheduler } from '../../core/scheduler.js';
import { PeriodicSweep } from '../../core/periodic-sweep.js';
import type { SipDns } from '../../sip/dialog/server-locator.js';
import { askOptions } from '../options-probe.js';
import type { TransactionLayer } from '../../sip/transaction/transaction-layer.js';
import type { OriginationUriRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';

/** Probes in a row without an answer (no response, or 503) that mark a URI down. */
export const PROBE_FAILURES_TO_DOWN = 2;

/** The SIP URI an origination URI's text names: `host[:port]` becomes `sip:host[:port]`. */
export function originationSipUri(uri: string, user?: string): string {
  if (/^sips?:/i.test(uri)) return uri;
  return user ? `sip:${user}@${uri}` : `sip:${uri}`;
}

interface Health {
  failures: number;
  down: boolean;
  reason: string;
}

export interface OriginationProbesOptions {
  state: State;
  /** The gateway's main account: every trunk and URI is under it. */
  tenant: string;
  transactions: TransactionLayer;
  dns: SipDns;
  scheduler: Scheduler;
  publicHost: string;
  /** 0: no probing (every URI counts as up). */
  intervalMs: number;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
}

/**
 * OPTIONS probes of the origination URIs that trunks use, every interval. A URI that leaves
 * PROBE_FAILURES_TO_DOWN probes in a row unanswered (no response within the probe's time, a
 * transport error, a name that does not resolve, or 503) is down: trunk calls skip it. Any
 * other response (200, and also 404 or 405 from a PBX that does not serve OPTIONS itself)
 * shows the host is there, and puts the URI back up at once.
 */
export class OriginationProbes {
  private readonly health = new Map<string, Health>();
  private readonly sweep: PeriodicSweep | null;

  constructor(private readonly options: OriginationProbesOptions) {
    this.sweep =
      options.intervalMs > 0
        ? new PeriodicSweep(
            async () => {
              await this.probeAll();
              return 0;
            },
            options.scheduler,
            options.intervalMs,
            (error) => options.log.warn({ err: error }, 'probing origination URIs failed'),
          )
        : null;
  }

  start(): void {
    this.sweep?.start();
  }

  stop(): void {
    this.sweep?.stop();
  }

  /** Why a URI is skipped, or null when it is up (or was never probed). */
  downReason(uriUuid: string): string | null {
    const health = this.health.get(uriUuid);
    return health?.down ? health.reason : null;
  }

  /** Probes every URI some trunk names, at once. */
  async probeAll(): Promise<void> {
    const { state, tenant } = this.options;
    const trunks = await state.trunks.all(tenant);
    const used = new Set(
      trunks.flatMap((t) => [t.primary_uri_uuid, t.fallback_uri_uuid]).filter((u) => u !== null),
    );
    for (const uuid of this.health.keys()) if (!used.has(uuid)) this.health.delete(uuid);
    const uris = await Promise.all(
      [...used].map((uuid) => state.originationUris.get(tenant, uuid)),
    );
    await Promise.all(uris.filter((u) => u !== null).map((u) => this.probe(u)));
  }

  /** One OPTIONS to the URI's first located server; the outcome updates its health. */
  async probe(record: OriginationUriRecord): Promise<void> {
    const outcome = await this.ask(originationSipUri(record.uri)).catch(
      (error: Error) => error.message,
    );
    const health = this.health.get(record.uri_uuid) ?? { failures: 0, down: false, reason: '' };
    this.health.set(record.uri_uuid, health);
    if (outcome === null) {
      if (health.down)
        this.options.log.info({ uriUuid: record.uri_uuid }, 'origination URI answers again');
      health.failures = 0;
      health.down = false;
      return;
    }
    health.failures++;
    health.reason = outcome;
    if (!health.down && health.failures >= PROBE_FAILURES_TO_DOWN) {
      health.down = true;
      this.options.log.warn(
        { uriUuid: record.uri_uuid, reason: outcome },
        'origination URI is down: trunk calls skip it until it answers again',
      );
    }
  }

  private ask(uri: string): Promise<string | null> {
    return askOptions(uri, this.options);
  }
}
