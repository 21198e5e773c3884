import { PeriodicSweep } from '../../core/periodic-sweep.js';
import { askOptions, type OptionsProbeDeps } from '../options-probe.js';
import { PROBE_FAILURES_TO_DOWN } from '../trunks/origination-probes.js';
import { gatewayUri } from './carrier-routes.js';
import { gatewayName, type CarrierGateway, type SipCarrier } from './sip-carrier.js';

interface Health {
  failures: number;
  down: boolean;
  reason: string;
}

export interface CarrierProbesOptions extends OptionsProbeDeps {
  carriers: readonly SipCarrier[];
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
}

/**
 * OPTIONS probes of every carrier gateway, every interval (VOXGATE_CARRIER_PROBE_INTERVAL), as
 * trunk origination URIs are probed: a gateway that leaves PROBE_FAILURES_TO_DOWN probes in a
 * row unanswered (or answered 503) is down and calls skip it; any other answer puts it back
 * up. A carrier whose gateways are all down is skipped.
 */
export class CarrierProbes {
  private readonly health = new Map<string, Health>();
  private readonly sweep: PeriodicSweep | null;

  constructor(private readonly options: CarrierProbesOptions) {
    this.sweep =
      options.intervalMs > 0 && options.carriers.length > 0
        ? new PeriodicSweep(
            async () => {
              await this.probeAll();
              return 0;
            },
            options.scheduler,
            options.intervalMs,
            (error) => options.log.warn({ err: error }, 'probing carrier gateways failed'),
          )
        : null;
  }

  start(): void {
    this.sweep?.start();
  }

  stop(): void {
    this.sweep?.stop();
  }

  /** Why a gateway is skipped, or null when it is up (or was never probed). */
  downReason(carrier: SipCarrier, gateway: CarrierGateway): string | null {
    const health = this.health.get(key(carrier, gateway));
    return health?.down ? health.reason : null;
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
    const id = key(carrier, gateway);
    const health = this.health.get(id) ?? { failures: 0, down: false, reason: '' };
    this.health.set(id, health);
    const fields = { carrier: carrier.name, gateway: gatewayName(gateway) };
    if (outcome === null) {
      if (health.down) this.options.log.info(fields, 'carrier gateway answers again');
      health.failures = 0;
      health.down = false;
      return;
    }
    health.failures++;
    health.reason = outcome;
    if (!health.down && health.failures >= PROBE_FAILURES_TO_DOWN) {
      health.down = true;
      this.options.log.warn(
        { ...fields, reason: outcome },
        'carrier gateway is down: calls skip it until it answers again',
      );
    }
  }
}

const key = (carrier: SipCarrier, gateway: CarrierGateway) =>
  `${carrier.name} ${gatewayName(gateway)}`;
