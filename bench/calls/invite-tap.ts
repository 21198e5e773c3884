import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { performance } from 'node:perf_hooks';

/**
 * A UDP relay in front of the SIPp carrier that notes when each INVITE reaches it: everything
 * from the gateway goes on to the carrier and every answer comes back, unchanged. An INVITE is
 * recognised by the `X-PH-bench: <n>` header the benchmark asked for with sip_headers, so the
 * time can be matched with the request that placed the call. The ACK and the BYE go straight to
 * the carrier (its Contact), past the tap, when the bench listens on loopback; on another
 * address the carrier's Contact names the tap, which relays them too (sipp-on-host.ts).
 */
export interface InviteTap {
  port: number;
  /** performance.now() when the first INVITE of call n arrived. */
  arrivals: Map<number, number>;
  /** INVITEs seen again for a call already seen: the gateway retransmitting. */
  retransmissions: number;
  /** Where datagrams go from now on. */
  setTarget(port: number): void;
  stop(): Promise<void>;
}

const BENCH_HEADER = /\r\nX-PH-bench:\s*(\d+)/i;
/** Where the carrier listens, whatever address the gateway sends to. */
const LOOPBACK = '127.0.0.1';

/** Binds a UDP socket to a free port on `host`; later errors (ICMP unreachable) are ignored. */
function bound(socket: Socket, host: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, host, () => {
      socket.off('error', reject);
      socket.on('error', () => {});
      resolve(socket);
    });
  });
}

/** The gateway sends to the tap on `host`; the tap to the carrier on loopback. */
export async function startInviteTap(host = LOOPBACK): Promise<InviteTap> {
  let targetPort = 0;
  const arrivals = new Map<number, number>();
  const counts = { retransmissions: 0 };
  const front = await bound(createSocket({ type: 'udp4', recvBufferSize: 4 << 20 }), host);
  const upstreams = new Map<string, Socket>();
  const pending = new Map<string, Promise<Socket>>();

  const upstreamFor = async (client: RemoteInfo): Promise<Socket> => {
    const key = `${client.address}:${client.port}`;
    const ready = upstreams.get(key);
    if (ready) return ready;
    let making = pending.get(key);
    if (!making) {
      making = bound(createSocket({ type: 'udp4', recvBufferSize: 4 << 20 }), LOOPBACK).then(
        (up) => {
          up.on('message', (datagram) => front.send(datagram, client.port, client.address));
          upstreams.set(key, up);
          return up;
        },
      );
      pending.set(key, making);
    }
    return making;
  };

  front.on('message', (datagram, client) => {
    const at = performance.now();
    if (datagram.subarray(0, 7).toString('latin1') === 'INVITE ') {
      const match = BENCH_HEADER.exec(datagram.toString('latin1'));
      if (match) {
        const n = Number(match[1]);
        if (arrivals.has(n)) counts.retransmissions++;
        else arrivals.set(n, at);
      }
    }
    const up = upstreams.get(`${client.address}:${client.port}`);
    if (up) up.send(datagram, targetPort, LOOPBACK);
    else void upstreamFor(client).then((s) => s.send(datagram, targetPort, LOOPBACK));
  });

  return {
    port: front.address().port,
    arrivals,
    get retransmissions() {
      return counts.retransmissions;
    },
    setTarget: (port) => {
      targetPort = port;
    },
    stop: async () => {
      const sockets = [front, ...upstreams.values()];
      await Promise.all(sockets.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}
