import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPcapPackets } from '../../test/support/pcap.js';

/**
 * Post-dial delay as the wire shows it: tcpdump on loopback records, with the kernel's
 * timestamps, every POST sent to the gateway's REST port and every INVITE sent to the tap,
 * and call n's delay is from its POST (`sip_headers=bench=n` in the body) to its INVITE
 * (`X-PH-bench: n`). Unlike the generator's clock, this does not count the time the
 * generator's own process waits for a core before it writes a request or reads an INVITE,
 * which at real-time priority for the gateway is most of the tail it would report.
 */
export interface WireCapture {
  /** Delay of each call numbered n whose POST and INVITE have both been captured, ms. */
  postDialDelays(): Map<number, number>;
  /** Stops tcpdump; resolves with the packets the kernel dropped (0 unless overloaded). */
  stop(): Promise<{ droppedPackets: number }>;
}

export type WireCaptureStart = { ok: true; capture: WireCapture } | { ok: false; reason: string };

const POST_IN_BODY = /"sip_headers":"bench=(\d+)"/;
const BENCH_HEADER = /\r\nX-PH-bench:\s*(\d+)/i;
const READY_MS = 5_000;

/**
 * Starts tcpdump (it needs CAP_NET_RAW; as root it keeps root rather than dropping to its own
 * user, so it can write where we can). Resolves `ok: false` with the reason when it cannot.
 */
export async function startWireCapture(ports: {
  api: number;
  tap: number;
}): Promise<WireCaptureStart> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-pdd-'));
  const file = join(dir, 'pdd.pcap');
  // A TCP segment whose data starts "POST" to the API; a UDP datagram starting "INVI" to the tap.
  const filter =
    `(tcp dst port ${ports.api} and tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x504f5354)` +
    ` or (udp dst port ${ports.tap} and udp[8:4] = 0x494e5649)`;
  const args = ['-i', 'lo', '-n', '-U', '-s', '0', '-w', file];
  if (process.getuid?.() === 0) args.push('-Z', 'root');
  let child: ChildProcess;
  try {
    child = spawn('tcpdump', [...args, filter], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { ok: false, reason: `tcpdump did not start: ${(error as Error).message}` };
  }
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  const ready = await new Promise<string | null>((resolve) => {
    const timer = setTimeout(
      () => resolve(`tcpdump was not listening after ${READY_MS} ms`),
      READY_MS,
    );
    child.stderr?.on('data', (text: string) => {
      stderr += text;
      if (stderr.includes('listening on')) {
        clearTimeout(timer);
        resolve(null);
      }
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve(`tcpdump did not start: ${error.message}`);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(`tcpdump exited with ${code}: ${stderr.trim().split('\n').pop() ?? ''}`);
    });
  });
  if (ready !== null) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    return { ok: false, reason: ready };
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    ok: true,
    capture: {
      postDialDelays: () => delaysIn(file),
      async stop() {
        child.kill('SIGINT');
        await exited;
        rmSync(dir, { recursive: true, force: true });
        const dropped = /(\d+) packets? dropped by kernel/.exec(stderr);
        return { droppedPackets: dropped ? Number(dropped[1]) : 0 };
      },
    },
  };
}

function delaysIn(file: string): Map<number, number> {
  const posts = new Map<number, number>();
  const invites = new Map<number, number>();
  for (const packet of readPcapPackets(file)) {
    const text = packet.payload.toString('latin1');
    const [pattern, seen] =
      packet.protocol === 'tcp' ? [POST_IN_BODY, posts] : [BENCH_HEADER, invites];
    const match = pattern.exec(text);
    if (!match) continue;
    const n = Number(match[1]);
    // The first one counts: a retransmitted INVITE is not the moment the call went out.
    if (!seen.has(n)) seen.set(n, packet.atMicros);
  }
  const delays = new Map<number, number>();
  for (const [n, postAt] of posts) {
    const inviteAt = invites.get(n);
    if (inviteAt !== undefined) delays.set(n, (inviteAt - postAt) / 1000);
  }
  return delays;
}
