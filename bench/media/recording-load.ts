import { createSocket, type Socket } from 'node:dgram';
import { numberedPayloads } from './recording-frames.js';

/**
 * The phones of the recording bench, in a child process of their own (so the gateway process
 * holds only the media worker): one UDP socket per call, each sending its numbered PCMU
 * stream to its session's port, one frame every 20 ms on a drift-free schedule. Reports how
 * late its own ticks ran, so a gap the sender made is told from one the worker made.
 *
 * Messages (process.send): {type: 'open', count} → ports; {type: 'start', targets} → null;
 * {type: 'stop'} → {sent, ticks, lateTicks, maxLateMs, late}.
 */
type Request =
  { type: 'open'; count: number } | { type: 'start'; targets: number[] } | { type: 'stop' };

const payloads = numberedPayloads();
const sockets: Socket[] = [];
let timer: NodeJS.Timeout | null = null;
const counts = {
  sent: 0,
  ticks: 0,
  lateTicks: 0,
  maxLateMs: 0,
  /** When (epoch ms) a tick ran over 10 ms late, and by how much: the first 500. */
  late: [] as { at: number; ms: number }[],
};

function header(seq: number, ssrc: number): Buffer {
  const h = Buffer.alloc(12);
  h[0] = 0x80;
  h[1] = 0; // PCMU
  h.writeUInt16BE(seq & 0xffff, 2);
  h.writeUInt32BE((seq * 160) >>> 0, 4);
  h.writeUInt32BE(ssrc, 8);
  return h;
}

function start(targets: number[]): void {
  const began = performance.now();
  let frame = 0;
  const tick = () => {
    const late = performance.now() - (began + frame * 20);
    counts.ticks++;
    if (late > 10) {
      counts.lateTicks++;
      if (counts.late.length < 500) counts.late.push({ at: Date.now(), ms: Math.round(late) });
    }
    counts.maxLateMs = Math.max(counts.maxLateMs, late);
    targets.forEach((port, i) => {
      const packet = Buffer.concat([header(frame, 0x5000 + i), payloads[frame % payloads.length]!]);
      sockets[i]!.send(packet, port, '127.0.0.1');
      counts.sent++;
    });
    frame++;
    timer = setTimeout(tick, Math.max(0, began + frame * 20 - performance.now()));
  };
  tick();
}

async function open(count: number): Promise<number[]> {
  for (let i = 0; i < count; i++) {
    const socket = createSocket('udp4');
    // Whatever the session sends back is not looked at.
    socket.on('message', () => {});
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    sockets.push(socket);
  }
  return sockets.map((s) => s.address().port);
}

process.on('message', (message: { id: number; request: Request }) => {
  const { id, request } = message;
  const reply = (value: unknown) => process.send!({ id, reply: value });
  if (request.type === 'open') void open(request.count).then(reply);
  else if (request.type === 'start') {
    start(request.targets);
    reply(null);
  } else {
    if (timer) clearTimeout(timer);
    for (const socket of sockets) socket.close();
    reply(counts);
  }
});
