import { Counter, Gauge, type Registry } from 'prom-client';
import { CarrierRegistration, type CarrierRegistrationDeps } from './carrier-registration.js';
import type { SipCarrier } from './sip-carrier.js';

export type CarrierRegistrationsDeps = Omit<CarrierRegistrationDeps, 'onFailure'> & {
  registry?: Registry;
};

/**
 * The registrations of every carrier with `register` set, and their state on /metrics:
 * `voxgate_carrier_registered{carrier}` (1 while the registrar holds our binding) and
 * `voxgate_carrier_register_failures_total{carrier}` (refused or unanswered attempts). The
 * series carry the carrier's name only, never its user or credentials.
 */
export class CarrierRegistrations {
  private readonly byName = new Map<string, CarrierRegistration>();

  constructor(carriers: readonly SipCarrier[], deps: CarrierRegistrationsDeps) {
    const { registry, ...rest } = deps;
    const failures = registry
      ? new Counter({
          name: 'voxgate_carrier_register_failures_total',
          help: 'Outbound REGISTERs to a carrier that were refused or went unanswered',
          labelNames: ['carrier'],
          registers: [registry],
        })
      : null;
    for (const carrier of carriers) {
      if (!carrier.register) continue;
      this.byName.set(
        carrier.name,
        new CarrierRegistration(carrier, {
          ...rest,
          onFailure: (name) => failures?.inc({ carrier: name }),
        }),
      );
      failures?.inc({ carrier: carrier.name }, 0);
    }
    if (registry && this.byName.size > 0) {
      const all = this.byName;
      new Gauge({
        name: 'voxgate_carrier_registered',
        help: 'Whether a carrier with register holds our binding now (1) or not (0)',
        labelNames: ['carrier'],
        registers: [registry],
        collect() {
          for (const [name, registration] of all)
            this.set({ carrier: name }, registration.registered ? 1 : 0);
        },
      });
    }
  }

  /** Why a carrier that registers is not registered now; null when it is, or never registers. */
  notRegistered(carrier: SipCarrier): string | null {
    return this.byName.get(carrier.name)?.notRegisteredReason ?? null;
  }

  /** The carrier whose Contact user this is (an INVITE to it comes through that carrier). */
  carrierOfContactUser(user: string): string | null {
    for (const [name, registration] of this.byName)
      if (registration.contactUser === user) return name;
    return null;
  }

  start(): void {
    for (const registration of this.byName.values()) registration.start();
  }

  /** Ends every registration: Expires 0 for each binding still held. */
  async stop(): Promise<void> {
    await Promise.all([...this.byName.values()].map((r) => r.stop()));
  }
}
