import type { Config } from '../config/config.js';
import { gatewayListeners, type Listener } from '../config/listeners.js';
import { fail, ok, type CheckResult } from './check-result.js';
import { answersSip, voxgateHealth } from './gateway-probes.js';
import { hostPort, reachableHost, tryBind } from './port-binding.js';

/**
 * One line per listener: its port is free to bind, or a running voxgate answers on it (its
 * /health on the HTTP port answers as voxgate, and the SIP ports answer SIP). Anything else
 * holding it would stop the gateway's start.
 */
export async function checkListeners(config: Config): Promise<CheckResult[]> {
  const listeners = gatewayListeners(config);
  const http = listeners[0]!;
  const health = http.port === 0 ? null : await voxgateHealth(reachableHost(http.host), http.port);
  return Promise.all(
    listeners.map((listener, k) => {
      const clash = listeners
        .slice(0, k)
        .find((l) => l.port !== 0 && l.port === listener.port && l.protocol === listener.protocol);
      if (clash)
        return fail(
          listener.name,
          `port ${listener.port} is also ${clash.portSetting}'s (${clash.name}): give ` +
            `${listener.portSetting} a port of its own`,
        );
      return checkListener(listener, health, http);
    }),
  );
}

async function checkListener(
  listener: Listener,
  health: string | null,
  http: Listener,
): Promise<CheckResult> {
  const { name, protocol, host, port, portSetting, hostSetting } = listener;
  const where = `${protocol.toUpperCase()} ${hostPort(host, port)}`;
  if (port === 0) return ok(name, `${portSetting} is 0: the system picks a free port at start`);
  const outcome = await tryBind(protocol, host, port);
  if (outcome === 'free') return ok(name, `${where} is free`);
  if (outcome === 'EACCES')
    return fail(
      name,
      `${where} may not be bound by this user (EACCES: ports below 1024 need root or ` +
        `CAP_NET_BIND_SERVICE): change ${portSetting} or run as the gateway's user`,
    );
  if (outcome === 'EADDRNOTAVAIL' || outcome === 'ENOTFOUND' || outcome === 'EAI_AGAIN')
    return fail(
      name,
      `${host} is not an address of this machine (${outcome}): change ${hostSetting}`,
    );
  if (outcome !== 'EADDRINUSE') return fail(name, `${where} cannot be bound (${outcome})`);

  const target = reachableHost(host);
  if (listener.speaks === 'http')
    return health !== null
      ? ok(name, `${where} is answered by a running voxgate (GET /health: ${health})`)
      : fail(
          name,
          `${where} is held by another program (GET /health does not answer as voxgate): ` +
            `stop it or change ${portSetting}`,
        );
  const sip = await answersSip(listener.speaks, target, port);
  if (sip && health !== null)
    return ok(
      name,
      `${where} is answered by a running voxgate (SIP OPTIONS answered over ` +
        `${listener.speaks.toUpperCase()}; voxgate on ${http.portSetting} ${http.port})`,
    );
  const who = sip
    ? `a SIP server that is not this configuration's voxgate (no voxgate answers on ` +
      `${http.portSetting} ${http.port})`
    : `another program (it does not answer SIP OPTIONS over ${listener.speaks.toUpperCase()})`;
  return fail(name, `${where} is held by ${who}: stop it or change ${portSetting}`);
}
