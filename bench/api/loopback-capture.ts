import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPcapPackets, type CapturedPacket } from '../../test/support/pcap.js';

/** What tcpdump saw on loopback, with the kernel's timestamps. */
export interface LoopbackCapture {
  /** The packets captured so far. */
  packets(): CapturedPacket[];
  /**
   * Stops tcpdump (which writes out what it still held) and resolves with every packet it
   * captured and those the kernel dropped (0 unless overloaded).
   */
  stop(): Promise<{ droppedPackets: number; packets: CapturedPacket[] }>;
}

export type LoopbackCaptureStart =
  { ok: true; capture: LoopbackCapture } | { ok: false; reason: string };

const READY_MS = 5_000;

/**
 * Starts tcpdump on loopback with a BPF `filter` (it needs CAP_NET_RAW; as root it keeps root
 * rather than dropping to its own user, so it can write where we can). Resolves `ok: false`
 * with the reason when it cannot.
 */
export async function startLoopbackCapture(filter: string): Promise<LoopbackCaptureStart> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-capture-'));
  const file = join(dir, 'capture.pcap');
  // Immediate mode: each packet reaches the file as it comes, so none is still in the kernel's
  // buffer when tcpdump is stopped.
  const args = ['-i', 'lo', '-n', '--immediate-mode', '-U', '-s', '0', '-w', file];
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
      packets: () => readPcapPackets(file),
      async stop() {
        child.kill('SIGINT');
        await exited;
        const packets = readPcapPackets(file);
        rmSync(dir, { recursive: true, force: true });
        const dropped = /(\d+) packets? dropped by kernel/.exec(stderr);
        return { droppedPackets: dropped ? Number(dropped[1]) : 0, packets };
      },
    },
  };
}

/** BPF: a TCP segment to `port` whose data starts with the four ASCII characters `start`. */
export function tcpDataStarts(port: number, start: string): string {
  return `(tcp dst port ${port} and tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x${hex4(start)})`;
}

/** BPF: a UDP datagram to `port` whose data starts with the four ASCII characters `start`. */
export function udpDataStarts(port: number, start: string): string {
  return `(udp dst port ${port} and udp[8:4] = 0x${hex4(start)})`;
}

function hex4(start: string): string {
  if (start.length !== 4) throw new Error(`Expected four characters but received ${start}`);
  return Buffer.from(start, 'latin1').toString('hex');
}
