import { spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * The carrier's media address: a UDP socket in a child process that reads and drops every
 * packet, so the calls' RTP costs the benchmark's own event loop nothing (its CPU is counted on
 * its own). Ending its stdin makes it print how many packets it read and exit.
 */
const SINK_SCRIPT = `
const socket = require('node:dgram').createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
let packets = 0;
socket.on('message', () => packets++);
socket.bind(0, process.argv[1], () => process.stdout.write(socket.address().port + '\\n'));
process.stdin.on('data', () => {});
process.stdin.on('end', () => { process.stdout.write(packets + '\\n'); process.exit(0); });
`;

export interface RtpSink {
  pid: number;
  port: number;
  /** Stops the sink; resolves with the packets it read. */
  stop(): Promise<number>;
}

/** Starts the sink on a free UDP port of `host`. */
export async function startRtpSink(host = '127.0.0.1'): Promise<RtpSink> {
  const child = spawn(process.execPath, ['-e', SINK_SCRIPT, host], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let waiting: (() => void) | null = null;
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    waiting?.();
  });
  const nextLine = async () => {
    while (lines.length === 0) {
      if (child.exitCode !== null) throw new Error('the RTP sink exited');
      await new Promise<void>((resolve) => {
        waiting = resolve;
        setTimeout(resolve, 100);
      });
    }
    return lines.shift()!;
  };
  const port = Number(await nextLine());
  return {
    pid: child.pid ?? 0,
    port,
    stop: async () => {
      const exited = once(child, 'exit');
      child.stdin.end();
      const packets = Number(await nextLine());
      await exited;
      return packets;
    },
  };
}
