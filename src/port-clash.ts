import type { Config } from './config/config.js';
import { gatewayListeners, type Listener } from './config/listeners.js';

/** The system's codes for a listener that could not be bound where its settings place it. */
const BIND_FAILURES = new Set(['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL']);

/**
 * What to tell an operator when a listener could not be bound at start: the port or address
 * and the setting to change ("port 8080 is in use (VOXGATE_HTTP_PORT)"). Null when the error
 * is not such a failure, or names no port this configuration asks for.
 */
export function describeBindFailure(config: Config, error: unknown): string | null {
  const failure = error as NodeJS.ErrnoException & { port?: number; address?: string };
  if (!failure || !BIND_FAILURES.has(failure.code ?? '') || typeof failure.port !== 'number')
    return null;
  const { port } = failure;
  // UDP reports a failed bind, TCP a failed listen; the SIP UDP and TCP listeners share a port.
  const protocol = failure.syscall === 'bind' ? 'udp' : 'tcp';
  const all = gatewayListeners(config).filter((l) => l.port === port && port !== 0);
  const placed = all.filter((l) => l.protocol === protocol);
  const listeners = placed.length > 0 ? placed : all;
  if (listeners.length === 0) return null;
  const settings = (pick: (l: Listener) => string) => [...new Set(listeners.map(pick))].join(', ');
  const shared =
    listeners.length > 1 && new Set(listeners.map((l) => l.portSetting)).size > 1
      ? `; ${settings((l) => l.portSetting)} all ask for it: give each a port of its own`
      : '';
  if (failure.code === 'EACCES')
    return (
      `port ${port} may not be bound by this user (${settings((l) => l.portSetting)}): ports ` +
      `below 1024 need root or CAP_NET_BIND_SERVICE${shared}`
    );
  if (failure.code === 'EADDRNOTAVAIL')
    return (
      `${failure.address ?? 'the address'} is not an address of this machine ` +
      `(${settings((l) => l.hostSetting)})`
    );
  return `port ${port} is in use (${settings((l) => l.portSetting)})${shared}`;
}
