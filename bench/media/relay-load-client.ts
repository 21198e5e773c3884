import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { IceCredentials } from '../../src/media/webrtc/ice/index.js';
import type { WebrtcPeerIdentity } from './relay-load-webrtc.js';

/** How the load process sends: a total rate spread over the targets, flat out, or 20 ms paced. */
export type LoadMode =
  { kind: 'rate'; packetsPerSecond: number } | { kind: 'max' } | { kind: 'paced'; everyMs: number };

/** What the load process has done since it opened its sockets. */
export interface LoadCounts {
  /** RTP packets sent to the gateway. */
  sent: number;
  /** RTP audio packets received (RTCP and anything else not counted). */
  received: number;
  /** Packets a rate plan could not send in time and gave up on (the sender fell behind). */
  skipped: number;
  /** Inter-arrival gaps per sending port over 30 ms, and all gaps (paced mode only). */
  lateGaps: number;
  gaps: number;
  maxGapMs: number;
  /** The load process's own CPU (user + system), seconds. */
  cpuSeconds: number;
}

/** A leg whose first RTP the load process awaits, connecting it first if it is WebRTC's. */
export interface LegToConnect {
  port: number;
  /** The socket that checks it and then sends to it: a sender or a sink, by index. */
  via: 'sender' | 'sink';
  index: number;
  webrtc?: { ice: IceCredentials; fingerprint: string };
}

/** When a leg connected (WebRTC, DTLS done) and its first RTP arrived: absolute ms, or null. */
export interface LegArrival {
  port: number;
  connectedAt: number | null;
  firstPacketAt: number | null;
}

export type LoadRequest =
  | { type: 'open'; sockets: number }
  | { type: 'connect'; legs: LegToConnect[] }
  | { type: 'forget'; ports: number[] }
  | { type: 'start'; targets: number[]; mode: LoadMode }
  | { type: 'counts' }
  | { type: 'stop' };

export interface LoadReplies {
  open: { senderPorts: number[]; sinkPorts: number[]; webrtc: WebrtcPeerIdentity };
  connect: LegArrival[];
  forget: null;
  start: LoadCounts;
  counts: LoadCounts;
  stop: LoadCounts;
}

const ENTRY = fileURLToPath(new URL('./relay-load.ts', import.meta.url));

/**
 * The RTP load generator and sinks, in a child process of their own so that the gateway
 * process holds only the media worker pool and the worker's CPU can be read apart.
 */
export class LoadProcess {
  private readonly pending = new Map<number, (reply: unknown) => void>();
  private sequence = 0;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: { id: number; reply: unknown }) => {
      this.pending.get(message.id)?.(message.reply);
      this.pending.delete(message.id);
    });
  }

  static start(): LoadProcess {
    return new LoadProcess(fork(ENTRY, [], { execArgv: ['--import', 'tsx'] }));
  }

  get pid(): number {
    return this.child.pid!;
  }

  request<R extends LoadRequest>(request: R): Promise<LoadReplies[R['type']]> {
    const id = ++this.sequence;
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`load process exited with code ${code}`));
      this.child.once('exit', onExit);
      this.pending.set(id, (reply) => {
        this.child.off('exit', onExit);
        resolve(reply as LoadReplies[R['type']]);
      });
      this.child.send({ id, request });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.kill();
    });
  }
}
