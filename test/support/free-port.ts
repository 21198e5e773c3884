import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports a test hands to a server it starts (in another process, or later): drawn at random below
 * the kernel's ephemeral range. A port that listen(0) found free is one of that range, where any
 * other test's listen(0) or outgoing connection may take it before the server binds it (seen as
 * EADDRINUSE at a gateway's start). Below 20000, where the tests' RTP ranges start.
 */
const TEST_PORTS = { min: 10000, max: Math.min(19999, ephemeralRangeStart() - 1) };

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
  } catch {
    return 32768; // Linux's default
  }
}

/**
 * Ports handed out in this process: each goes once (two asked for in a row, before either is
 * bound, would otherwise both be found free).
 */
const handedOut = new Set<number>();

/** A port free for TCP and UDP on loopback now, from TEST_PORTS, never one given before. */
export function freePort(): Promise<number> {
  return freePortBlock(1, ['tcp', 'udp']);
}

/**
 * The first of `size` consecutive ports, the first a multiple of `size`, each free on loopback
 * now for every protocol of `kinds`, from TEST_PORTS, none given before.
 */
export async function freePortBlock(
  size: number,
  kinds: readonly ('tcp' | 'udp')[],
): Promise<number> {
  const blocks = Math.floor((TEST_PORTS.max - TEST_PORTS.min + 1) / size);
  const first = Math.ceil(TEST_PORTS.min / size) * size;
  for (let tried = 0; tried < 100; tried++) {
    const base = first + size * Math.floor(Math.random() * (blocks - 1));
    const ports = Array.from({ length: size }, (_, i) => base + i);
    if (ports.some((port) => handedOut.has(port))) continue;
    if (await allFree(ports, kinds)) {
      for (const port of ports) handedOut.add(port);
      return base;
    }
  }
  throw new Error(`no ${size} free port(s) in ${TEST_PORTS.min}-${TEST_PORTS.max} after 100 tries`);
}

async function allFree(ports: number[], kinds: readonly ('tcp' | 'udp')[]): Promise<boolean> {
  for (const port of ports)
    for (const kind of kinds) if (!(await canBind(port, kind))) return false;
  return true;
}

function canBind(port: number, kind: 'tcp' | 'udp'): Promise<boolean> {
  return new Promise((resolve) => {
    if (kind === 'udp') {
      const socket = createSocket('udp4');
      socket.once('error', () => {
        socket.close();
        resolve(false);
      });
      socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
      return;
    }
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
