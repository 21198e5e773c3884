import type { Scheduler } from '../../core/scheduler.js';
import type { SipDns } from '../../sip/dialog/server-locator.js';
import type { TransactionLayer } from '../../sip/transaction/transaction-layer.js';
import { CarrierDialling } from './carrier-dialling.js';
import { CarrierProbes } from './carrier-probes.js';
import { CarrierRoutes } from './carrier-routes.js';
import type { CarrierSettings } from './sip-carrier.js';

export interface OutboundCarriersDeps {
  transactions: TransactionLayer;
  dns: SipDns;
  scheduler: Scheduler;
  publicHost: string;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
}

/**
 * The carriers' working parts, built once by the composition root: the dialling policy that
 * calls to numbers use (null without carriers) and the gateways' probes, started and stopped
 * with the gateway.
 */
export class OutboundCarriers {
  readonly dialling: CarrierDialling | null;
  readonly probes: CarrierProbes;

  constructor(settings: CarrierSettings, deps: OutboundCarriersDeps) {
    this.probes = new CarrierProbes({
      ...deps,
      carriers: settings.carriers,
      intervalMs: settings.probeIntervalMs,
    });
    const routes = new CarrierRoutes({
      carriers: settings.carriers,
      dns: deps.dns,
      publicHost: deps.publicHost,
      downReason: (carrier, gateway) => this.probes.downReason(carrier, gateway),
    });
    this.dialling =
      settings.carriers.length === 0
        ? null
        : new CarrierDialling({
            routes,
            responseTimeoutMs: settings.responseTimeoutMs,
            answerTimeoutMs: settings.answerTimeoutMs,
            log: deps.log,
          });
  }

  start(): void {
    this.probes.start();
  }

  stop(): void {
    this.probes.stop();
  }
}
