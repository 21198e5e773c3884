import type { Scheduler } from '../../core/scheduler.js';
import type { SipDns } from '../../sip/dialog/server-locator.js';
import { askOptions } from '../options-probe.js';
import { ProbeHealth } from '../probe-health.js';
import type { TransactionLayer } from '../../sip/transaction/transaction-layer.js';
import type { OriginationUriRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';

/** The SIP URI an origination URI's text names: `host[:port]` becomes `sip:host[:port]`. */
export function originationSipUri(uri: string, user?: string): string {
  if (/^sips?:/i.test(uri)) return uri;
  return user ? `sip:${user}@${uri}` : `sip:${uri}`;
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
 * OPTIONS probes of the origination URIs that trunks use, every interval (ProbeHealth says
 * when a URI is down): trunk calls skip a URI that is down.
 */
export class OriginationProbes {
  private readonly health: ProbeHealth;

  constructor(private readonly options: OriginationProbesOptions) {
    this.health = new ProbeHealth({
      scheduler: options.scheduler,
      intervalMs: options.intervalMs,
      probeAll: () => this.probeAll(),
      log: options.log,
      target: 'origination URI',
      skippedBy: 'trunk calls',
    });
  }

  start(): void {
    this.health.start();
  }

  stop(): void {
    this.health.stop();
  }

  /** Why a URI is skipped, or null when it is up (or was never probed). */
  downReason(uriUuid: string): string | null {
    return this.health.downReason(uriUuid);
  }

  /** Probes every URI some trunk names, at once. */
  async probeAll(): Promise<void> {
    const { state, tenant } = this.options;
    const trunks = await state.trunks.all(tenant);
    const used = new Set(
      trunks.flatMap((t) => [t.primary_uri_uuid, t.fallback_uri_uuid]).filter((u) => u !== null),
    );
    this.health.keepOnly(used);
    const uris = await Promise.all(
      [...used].map((uuid) => state.originationUris.get(tenant, uuid)),
    );
    await Promise.all(uris.filter((u) => u !== null).map((u) => this.probe(u)));
  }

  /** One OPTIONS to the URI's first located server; the outcome updates its health. */
  async probe(record: OriginationUriRecord): Promise<void> {
    const outcome = await askOptions(originationSipUri(record.uri), this.options).catch(
      (error: Error) => error.message,
    );
    this.health.record(record.uri_uuid, outcome, { uriUuid: record.uri_uuid });
  }
}
