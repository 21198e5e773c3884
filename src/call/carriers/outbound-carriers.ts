import type { Scheduler } from '../../core/scheduler.js';
import type { SipDns } from '../../sip/dialog/server-locator.js';
import type { Registry } from 'prom-client';
import type { TransactionLayer } from '../../sip/transaction/transaction-layer.js';
import type { TransportLayer } from '../../sip/transport/transport-layer.js';
import { CarrierDialling } from './carrier-dialling.js';
import { CarrierProbes } from './carrier-probes.js';
import { CarrierRegistrations } from './carrier-registrations.js';
import { CarrierRoutes } from './carrier-routes.js';
import type { CarrierSettings } from './sip-carrier.js';

export interface OutboundCarriersDeps {
  transactions: TransactionLayer;
  /** Our Contact in REGISTERs is this layer's address on the registrar's transport. */
  transport: TransportLayer;
  registry?: Registry;
  dns: SipDns;
  scheduler: Scheduler;
  publicHost: string;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
}

/**
 * The carriers' working parts, built once by the composition root: the dialling policy that
 * calls to numbers use (null without carriers), the gateways' probes and the carriers'
 * outbound registrations, started and stopped with the gateway. A carrier with `register` is
 * skipped by calls while it is not registered: a registrar-only carrier refuses calls from an
 * unregistered account, so the next carrier is tried instead (or the call ends 5020).
 */
export class OutboundCarriers {
  readonly dialling: CarrierDialling | null;
  readonly probes: CarrierProbes;
  readonly registrations: CarrierRegistrations;

  constructor(settings: CarrierSettings, deps: OutboundCarriersDeps) {
    this.registrations = new CarrierRegistrations(settings.carriers, {
      ...deps,
      answerWaitMs: settings.responseTimeoutMs,
    });
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
      notRegistered: (carrier) => this.registrations.notRegistered(carrier),
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
    this.registrations.start();
  }

  /** Stops probing and refreshing, and removes the registrations (Expires 0). */
  async stop(): Promise<void> {
    this.probes.stop();
    await this.registrations.stop();
  }
}
