import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { seededRandom } from './prng.js';
import type { SipTarget } from './sipp.js';

/**
 * A UDP relay on a random loopback port that loses datagrams on purpose: every datagram from a
 * client goes to the target and every answer goes back to that client, except a fraction that is
 * dropped in each direction. Each client address gets its own upstream socket, so the target sees
 * one peer per client and its answers find their way back.
 *
 * Drops come from a seeded PRNG per direction: the n-th datagram in a direction is dropped or not
 * the same way on every run, so a failure can be replayed (the interleaving of clients can still
 * differ between runs).
 */
export interface LossyUdpRelayOptions {
  target: SipTarget;
  /** Fraction dropped in each direction, 0 (none) to 1 (all). */
  dropRate: number;
  seed?: number;
}

export interface RelayCounts {
  /** Client to target. */
  upstream: { forwarded: number; dropped: number };
  /** Target to client. */
  downstream: { forwarded: number; dropped: number };
}

export interface LossyUdpRelay {
  host: string;
  port: number;
  counts(): RelayCounts;
  stop(): Promise<void>;
}

const LOOPBACK = '127.0.0.1';

export async function startLossyUdpRelay(options: LossyUdpRelayOptions): Promise<LossyUdpRelay> {
  const { target, dropRate, seed = 1 } = options;
  if (!(dropRate >= 0 && dropRate <= 1))
    throw new Error(`Expected a number between 0 and 1 for dropRate but received ${dropRate}`);
  if (!Number.isInteger(seed)) throw new Error(`Expected an integer seed but received ${seed}`);
  const dropUp = seededRandom(seed);
  const dropDown = seededRandom(seed ^ 0x5bd1e995);
  const counts: RelayCounts = {
    upstream: { forwarded: 0, dropped: 0 },
    downstream: { forwarded: 0, dropped: 0 },
  };
  const front = await bound(createSocket('udp4'));
  const upstreams = new Map<string, Promise<Socket>>();

  const upstreamFor = (client: RemoteInfo): Promise<Socket> => {
    const key = `${client.address}:${client.port}`;
    let socket = upstreams.get(key);
    if (!socket) {
      socket = bound(createSocket('udp4')).then((up) => {
        up.on('message', (datagram) => {
          if (dropDown() < dropRate) {
            counts.downstream.dropped++;
            return;
          }
          counts.downstream.forwarded++;
          front.send(datagram, client.port, client.address);
        });
        return up;
      });
      upstreams.set(key, socket);
    }
    return socket;
  };

  front.on('message', (datagram, client) => {
    // Decide before the upstream socket exists, so the sequence of decisions follows arrivals.
    if (dropUp() < dropRate) {
      counts.upstream.dropped++;
      void upstreamFor(client); // the target may still answer later datagrams of this client
      return;
    }
    counts.upstream.forwarded++;
    void upstreamFor(client).then((up) => up.send(datagram, target.port, target.host));
  });

  return {
    host: LOOPBACK,
    port: front.address().port,
    counts: () => structuredClone(counts),
    stop: async () => {
      const sockets = [front, ...(await Promise.all(upstreams.values()))];
      await Promise.all(sockets.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}

/** Binds a UDP socket to a free loopback port; later errors (ICMP unreachable) are ignored. */
export function bound(socket: Socket): Promise<Socket> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, LOOPBACK, () => {
      socket.off('error', reject);
      socket.on('error', () => {}); // ICMP port unreachable from a stopped peer
      resolve(socket);
    });
  });
}
