import { createSocket } from 'node:dgram';
import { createServer, isIPv6 } from 'node:net';

/** `free`, or the system's code for why the port cannot be bound (EADDRINUSE, EACCES...). */
export type BindOutcome = 'free' | string;

/** Binds the port as the gateway would and lets it go at once. */
export function tryBind(protocol: 'tcp' | 'udp', host: string, port: number): Promise<BindOutcome> {
  return protocol === 'tcp' ? tryTcp(host, port) : tryUdp(host, port);
}

function tryTcp(host: string, port: number): Promise<BindOutcome> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve('free')));
  });
}

function tryUdp(host: string, port: number): Promise<BindOutcome> {
  return new Promise((resolve) => {
    const socket = createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4', reuseAddr: false });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.close();
      resolve(error.code ?? error.message);
    });
    socket.bind({ address: host, port, exclusive: true }, () =>
      socket.close(() => resolve('free')),
    );
  });
}

/** Where to reach a listener bound to `host`: a wildcard address is reached on loopback. */
export function reachableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

/** `host:port`, with brackets around an IPv6 address. */
export function hostPort(host: string, port: number): string {
  return `${isIPv6(host) ? `[${host}]` : host}:${port}`;
}
