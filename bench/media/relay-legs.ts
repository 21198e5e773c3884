import { performance } from 'node:perf_hooks';
import type { MediaSessionSpec } from '../../src/media/pipeline/session-spec.js';
import { createIceCredentials, type IceCredentials } from '../../src/media/webrtc/ice/index.js';
import { legSpec, type Gateway } from './relay-gateway.js';
import type { LegArrival, LegToConnect, LoadProcess } from './relay-load-client.js';
import type { WebrtcPeerIdentity } from './relay-load-webrtc.js';

/** How the bench's legs reach the worker: plain RTP with PCMU, or WebRTC (SRTP, Opus). */
export type LegKind = 'pcmu' | 'webrtc';

/** Opus as a WebRTC leg runs it: 16 kHz coding, 48 kHz clock, payload type 111. */
const OPUS = { encoding: 'opus' as const, payloadType: 111, rate: 16000 as const };

/** An open leg: its session, its port, and when it came up (WebRTC legs and timed opens). */
export interface OpenLeg {
  id: string;
  port: number;
  arrival: LegArrival | null;
}

/**
 * Opens the bench's legs of one kind on the gateway. A PCMU leg sends to a sink of the load
 * process and latches onto whatever sends to it. A WebRTC leg is opened as an answer would
 * open it (our ICE credentials, the peer's ufrag and fingerprint, DTLS client), and the load
 * process connects it from the socket that will carry its media (ICE check, DTLS, first SRTP).
 */
export class RelayLegs {
  private readonly webrtcPorts: number[] = [];

  constructor(
    readonly kind: LegKind,
    private readonly gateway: Gateway,
    private readonly load: LoadProcess,
    private readonly sinks: readonly number[],
    private readonly peer: WebrtcPeerIdentity,
  ) {}

  /**
   * Opens `count` legs; leg i's media goes through sender i/2 when `via(i)` says so, else sink
   * i/2. WebRTC legs come back connected; `timed` waits for every leg's first RTP.
   */
  async open(
    count: number,
    via: (leg: number) => 'sender' | 'sink',
    timed = false,
  ): Promise<OpenLeg[]> {
    const specs = Array.from({ length: count }, (_, i) => this.spec(i));
    const opened = await this.gateway.openMany(specs.map((s) => s.spec));
    if (this.kind === 'pcmu' && !timed) return opened.map((leg) => ({ ...leg, arrival: null }));
    const legs: LegToConnect[] = opened.map((leg, i) => ({
      port: leg.port,
      via: via(i),
      index: Math.floor(i / 2),
      ...(specs[i]!.ice && { webrtc: { ice: specs[i]!.ice!, fingerprint: this.fingerprint } }),
    }));
    if (this.kind === 'webrtc') this.webrtcPorts.push(...legs.map((l) => l.port));
    const arrivals = await this.load.request({ type: 'connect', legs });
    return opened.map((leg, i) => ({ ...leg, arrival: arrivals[i] ?? null }));
  }

  /** Closes every leg; the load process forgets the WebRTC ones (their ports come back). */
  async closeAll(): Promise<void> {
    await this.gateway.destroyAll();
    await this.forget();
  }

  async forget(): Promise<void> {
    const ports = this.webrtcPorts.splice(0);
    if (ports.length > 0) await this.load.request({ type: 'forget', ports });
  }

  private get fingerprint(): string {
    return this.gateway.certificateFingerprint ?? '';
  }

  private spec(i: number): { spec: MediaSessionSpec; ice?: IceCredentials } {
    if (this.kind === 'pcmu') return { spec: legSpec(this.sinks[i % this.sinks.length]!) };
    const ice = createIceCredentials();
    const spec: MediaSessionSpec = {
      formats: [OPUS],
      webrtc: {
        localIce: ice,
        remoteUfrag: this.peer.ice.ufrag,
        remoteFingerprints: [this.peer.fingerprint],
        role: 'client',
      },
    };
    return { spec, ice };
  }
}

/** An absolute time in ms, as the load process gives its arrivals. */
export const absoluteNow = () => performance.timeOrigin + performance.now();
