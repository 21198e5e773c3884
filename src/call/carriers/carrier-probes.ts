import { askOptions, type OptionsProbeDeps } from '../options-probe.js';
import { ProbeHealth } from '../probe-health.js';
import { gatewayUri } from './carrier-routes.js';
import { gatewayName, type CarrierGateway, type SipCarrier } from './sip-carrier.js';

export interface CarrierProbesOptions extends OptionsProbeDeps {
  carriers: readonly SipCarrier[];
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
}

/**
 * OPTIONS probes of every carrier gateway, every interval (VOXGATE_CARRIER_PROBE_INTERVAL), as
 * trunk origination URIs are probed (ProbeHealth): a gateway that is down is skipped by calls,
 * and a carrier whose gateways are all down is skipped.
 */
export class CarrierProbes {
  private readonly health: ProbeHealth;

  constructor(private readonly options: CarrierProbesOptions) {
    this.health = new ProbeHealth({
      scheduler: options.scheduler,
      intervalMs: options.carriers.length > 0 ? options.intervalMs : 0,
      probeAll: () => this.probeAll(),
      log: options.log,
      target: 'carrier gateway',
      skippedBy: 'calls',
    });
  }

  start(): void {
    this.health.start();
  }

  stop(): void {
    this.health.stop();
  }

  /** Why a gateway is skipped, or null when it is up (or was never probed). */
  downReason(carrier: SipCarrier, gateway: CarrierGateway): string | null {
    return this.health.downReason(key(carrier, gateway));
  }

  async probeAll(): Promise<void> {
    await Promise.all(
      this.options.carriers.flatMap((carrier) =>
        carrier.gateways.map((gateway) => this.probe(carrier, gateway)),
      ),
    );
  }

  private async probe(carrier: SipCarrier, gateway: CarrierGateway): Promise<void> {
    const outcome = await askOptions(gatewayUri(carrier, gateway), this.options).catch(
      (error: Error) => error.message,
    );
    this.health.record(key(carrier, gateway), outcome, {
      carrier: carrier.name,
      gateway: gatewayName(gateway),
    });
  }
}

const key = (carrier: SipCarrier, gateway: CarrierGateway) =>
  `${carrier.name} ${gatewayName(gateway)}`;
