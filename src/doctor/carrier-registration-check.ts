import { registerUser } from '../call/carriers/carrier-registration.js';
import { gatewayName, type SipCarrier } from '../call/carriers/sip-carrier.js';
import type { Config } from '../config/config.js';
import { gatewayListeners } from '../config/listeners.js';
import { ok, warn, type CheckResult } from './check-result.js';
import { PROBE_TIMEOUT_MS, voxgateHealth } from './gateway-probes.js';
import { hostPort, reachableHost } from './port-binding.js';

/**
 * One line per carrier with `register`. The registration lives in the running gateway, not
 * in the configuration: when a voxgate answers on the HTTP port, its /metrics says whether
 * each carrier is registered now (voxgate_carrier_registered) and how many attempts failed;
 * otherwise the line says what will be registered and where to look once it runs. A carrier
 * without auth is worth a warning: a registrar that challenges refuses it.
 */
export async function checkCarrierRegistrations(config: Config): Promise<CheckResult[]> {
  const registering = config.carriers.carriers.filter((c) => c.register !== null);
  if (registering.length === 0) return [];
  const metrics = await runningMetrics(config);
  return registering.map((carrier) => {
    const name = `register:${carrier.name}`;
    const what = `${registerUser(carrier)} with ${gatewayName(preferred(carrier))}`;
    const bare = carrier.auth === null ? ' (no auth: a registrar that challenges refuses it)' : '';
    if (metrics === null)
      return (bare ? warn : ok)(
        name,
        `registers ${what}${bare}; the gateway is not running here: once it is, /metrics shows ` +
          `voxgate_carrier_registered{carrier="${carrier.name}"}`,
      );
    const registered = series(metrics, 'voxgate_carrier_registered', carrier.name);
    const failures = series(metrics, 'voxgate_carrier_register_failures_total', carrier.name);
    const count = failures ?? 0;
    if (registered === 1)
      return ok(name, `registered ${what} (the running gateway's /metrics)${bare}`);
    return warn(
      name,
      `not registered ${what}: ${count} failed attempt${count === 1 ? '' : 's'} so far${bare}; ` +
        `the gateway's ` +
        `warn lines "carrier ${carrier.name} registration failed" say why`,
    );
  });
}

/** /metrics of a voxgate running on the configured HTTP port, or null. */
async function runningMetrics(config: Config): Promise<string | null> {
  const http = gatewayListeners(config)[0]!;
  if (http.port === 0) return null;
  const host = reachableHost(http.host);
  if ((await voxgateHealth(host, http.port)) === null) return null;
  try {
    const response = await fetch(`http://${hostPort(host, http.port)}/metrics`, {
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    return response.ok ? await response.text() : null;
  } catch {
    return null;
  }
}

function series(metrics: string, name: string, carrier: string): number | null {
  const prefix = `${name}{carrier="${carrier}"} `;
  const line = metrics.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? null : Number(line.slice(prefix.length));
}

const preferred = (carrier: SipCarrier) =>
  [...carrier.gateways].sort((a, b) => a.priority - b.priority)[0]!;
