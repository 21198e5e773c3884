/**
 * The relay of socket-floor.c written on Node with the gateway's own means, and nothing more:
 * RTP sockets read through the thread's datagram reader (the addon's epoll and recvmmsg), a
 * plain `net` connection per stream written with one `write` per message, datagrams sent with
 * `dgram`. No WebSocket framing, no JSON, no codec. What a stream's socket work costs before
 * any of the gateway's own work, when it is done from JavaScript.
 *
 *   node --import tsx bench/streams/socket-floor-node.ts N
 *
 * Speaks socket-floor.c's relay protocol, so that its `peers` role drives either: prints
 * "ready <tcp port> <udp port>..." and takes the connections in any order, each saying first
 * which stream it is (a 32-bit integer in this machine's order).
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { endianness } from 'node:os';
import { readThroughReader } from '../../src/media/net/datagram-reader.js';

const RTP_BYTES = 172;
const MEDIA_BYTES = 330;
const REPLY_BYTES = 300;
const HOST = '127.0.0.1';

interface Stream {
  udp: UdpSocket;
  callerPort: number;
  callerAddress: string;
  tcp: Socket | null;
  /** Bytes of a reply split across reads. */
  partial: number;
}

async function main(): Promise<void> {
  const count = Number(process.argv[2]);
  if (!Number.isInteger(count) || count < 1) throw new Error('usage: socket-floor-node.ts N');
  const media = Buffer.alloc(MEDIA_BYTES, 'm');
  const rtp = Buffer.alloc(RTP_BYTES, 0x80);
  const streams: Stream[] = [];
  for (let i = 0; i < count; i++) {
    const udp = createSocket('udp4');
    udp.bind(0, HOST);
    await once(udp, 'listening');
    const stream: Stream = { udp, callerPort: 0, callerAddress: '', tcp: null, partial: 0 };
    const reading = readThroughReader(udp, (_data, port, address) => {
      stream.callerPort = port;
      stream.callerAddress = address;
      stream.tcp?.write(media);
    });
    if (!reading) throw new Error('the datagram reader could not take an RTP socket');
    streams.push(stream);
  }
  let open = 0;
  const server = createServer((tcp) => {
    tcp.setNoDelay(true);
    open++;
    let stream: Stream | null = null;
    let head = Buffer.alloc(0);
    tcp.on('data', (chunk: Buffer) => {
      if (!stream) {
        head = Buffer.concat([head, chunk]);
        if (head.length < 4) return;
        const index = endianness() === 'LE' ? head.readInt32LE(0) : head.readInt32BE(0);
        stream = streams[index] ?? null;
        if (!stream) return void tcp.destroy();
        stream.tcp = tcp;
        chunk = head.subarray(4);
      }
      const total = stream.partial + chunk.length;
      stream.partial = total % REPLY_BYTES;
      for (let m = Math.floor(total / REPLY_BYTES); m > 0 && stream.callerPort !== 0; m--) {
        stream.udp.send(rtp, stream.callerPort, stream.callerAddress);
      }
    });
    tcp.on('close', () => {
      if (--open === 0) process.exit(0);
    });
  });
  server.listen(0, HOST);
  await once(server, 'listening');
  const ports = streams.map((s) => s.udp.address().port);
  process.stdout.write(`ready ${(server.address() as AddressInfo).port} ${ports.join(' ')}\n`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
