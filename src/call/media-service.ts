import { hostname } from 'node:os';
import type { Transferable } from 'node:worker_threads';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Config } from '../config/config.js';
import type { OutboundGuardSettings } from '../core/outbound-guard.js';
import type { MediaSessionSpec } from '../media/pipeline/session-spec.js';
import { MediaWorkerPool, type SessionCommand } from '../media/worker/media-worker-pool.js';
import type { Results, SessionEvent } from '../media/worker/protocol.js';
import { MergedHistogram } from './merged-histogram.js';
import type { WebrtcSupport } from './webrtc-support.js';

export interface MediaLogger {
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface MediaServiceOptions {
  config: Config;
  /**
   * The outbound policy the workers check Play's files and stream URLs against. Read when a
   * worker starts (workers start with the first call, after the listeners, so the gateway's
   * own ports are known by then).
   */
  outbound?: () => OutboundGuardSettings;
  log: MediaLogger;
  registry: Registry;
  /** The process's DTLS certificate, posted to each worker for its WebRTC legs. */
  webrtc?: WebrtcSupport;
}

/** A session's events go to the call leg that opened it. */
export type MediaEventHandler = (event: SessionEvent) => void;

export type OpenedMedia = Results['createSession'] & {
  /** The address to put in SDP's c= line. */
  address: string;
};

/**
 * The media plane as the call layer sees it: sessions opened on the worker pool with their
 * events routed to the leg that opened them, warnings logged, and the figures on /metrics.
 * A worker's crash reaches each of its legs as an `ended` event with the cause.
 */
export class MediaService {
  private readonly pool: MediaWorkerPool;
  private readonly handlers = new Map<string, MediaEventHandler>();
  private readonly crashes: Counter;
  /** Told of each worker that crashed, by thread id (a conference mixed there moves). */
  private readonly crashListeners: ((threadId: number) => void)[] = [];
  private readonly warnings: Counter;
  private readonly drops: { srtp: Counter; ice: Counter };
  private readonly opening: Histogram;
  private readonly streamLatency: { inbound: MergedHistogram; playout: MergedHistogram };

  constructor(private readonly options: MediaServiceOptions) {
    const { config, log, registry } = options;
    this.pool = new MediaWorkerPool(
      {
        onEvent: (sessionId, event) => this.route(sessionId, event),
        onLatency: (report) => {
          this.streamLatency.inbound.add(report.inbound);
          this.streamLatency.playout.add(report.playout);
          for (const [reason, n] of Object.entries(report.drops?.srtp ?? {}))
            this.drops.srtp.inc({ reason }, n);
          for (const [reason, n] of Object.entries(report.drops?.ice ?? {}))
            this.drops.ice.inc({ reason }, n);
        },
        onWorkerCrash: (error, sessions, threadId) => {
          this.crashes.inc();
          log.error({ err: error, sessions: sessions.length }, 'media worker crashed');
          // After the crashed worker's sessions are ended, which the pool does next.
          queueMicrotask(() => {
            for (const listener of this.crashListeners) listener(threadId);
          });
        },
      },
      {
        size: config.mediaWorkers,
        settings: {
          rtpPorts: config.rtpPorts,
          rtpHost: config.rtpHost,
          cname: `voxgate@${hostname()}`,
          ...(options.webrtc && { dtls: options.webrtc.media }),
          ...(config.opusComplexity !== null && { opusComplexity: config.opusComplexity }),
          // A getter: the worker's settings are copied (structured clone) as each one starts.
          get outbound() {
            return options.outbound?.();
          },
        },
      },
    );
    this.streamLatency = {
      inbound: new MergedHistogram(
        'voxgate_stream_inbound_latency_seconds',
        "Audio streams: an RTP packet's arrival to its media event sent on the WebSocket",
        registry,
      ),
      playout: new MergedHistogram(
        'voxgate_stream_playout_latency_seconds',
        "Audio streams: a playAudio's arrival to its first sample sent as RTP",
        registry,
      ),
    };
    this.crashes = new Counter({
      name: 'voxgate_media_worker_crashes_total',
      help: 'Media worker threads that died; their calls ended with the cause',
      registers: [registry],
    });
    this.warnings = new Counter({
      name: 'voxgate_media_warnings_total',
      help: 'Media problems that did not end a call (socket errors, failed ticks)',
      registers: [registry],
    });
    this.drops = {
      srtp: new Counter({
        name: 'voxgate_srtp_dropped_total',
        help: 'SRTP and SRTCP packets of WebRTC legs dropped unplayed: auth (tag wrong), replay, malformed',
        labelNames: ['reason'],
        registers: [registry],
      }),
      ice: new Counter({
        name: 'voxgate_ice_rejected_total',
        help: 'STUN datagrams on WebRTC legs turned down by the ICE-lite agent, by reason',
        labelNames: ['reason'],
        registers: [registry],
      }),
    };
    this.opening = new Histogram({
      name: 'voxgate_media_session_open_seconds',
      help: "Time to open a leg's media session on a worker (its RTP ports bound), which a call waits for before its INVITE or answer",
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25],
      registers: [registry],
    });
    const sessions = this.handlers;
    new Gauge({
      name: 'voxgate_media_sessions',
      help: 'Media sessions (call legs with RTP) open now',
      registers: [registry],
      collect() {
        this.set(sessions.size);
      },
    });
  }

  /** Opens a leg's RTP and pipeline; `near` puts it on the worker of a leg it will bridge to. */
  async open(
    sessionId: string,
    spec: MediaSessionSpec,
    onEvent: MediaEventHandler,
    placement: { near?: string } = {},
  ): Promise<OpenedMedia> {
    this.handlers.set(sessionId, onEvent);
    const stopTimer = this.opening.startTimer();
    try {
      const opened = await this.pool.createSession(sessionId, spec, placement);
      stopTimer();
      return { ...opened, address: this.options.config.publicHost };
    } catch (error) {
      this.handlers.delete(sessionId);
      throw error;
    }
  }

  send<C extends SessionCommand>(
    command: C,
    transfer?: readonly Transferable[],
  ): Promise<Results[C['type']]> {
    return this.pool.send(command, transfer);
  }

  /** Runs a command on the worker of a thread (see MediaWorkerPool.sendToThread). */
  sendToThread<C extends SessionCommand>(
    threadId: number,
    command: C,
    transfer?: readonly Transferable[],
  ): Promise<Results[C['type']]> {
    return this.pool.sendToThread(threadId, command, transfer);
  }

  /** Closes a leg's media, without waiting for the worker (a failure is logged as a warning). */
  close(sessionId: string, reason?: string): void {
    this.handlers.delete(sessionId);
    this.pool.closeSession(sessionId, reason);
  }

  get sessions(): number {
    return this.pool.sessions;
  }

  /**
   * `listener` hears the thread id of each worker that crashes, after its sessions' `ended`
   * events went out (their legs are gone from workerOf by then).
   */
  onWorkerCrash(listener: (threadId: number) => void): void {
    this.crashListeners.push(listener);
  }

  /** The worker thread a session runs on (a conference is mixed on one); null when none. */
  workerOf(sessionId: string): number | null {
    return this.pool.threadOf(sessionId);
  }

  async shutdown(): Promise<void> {
    this.handlers.clear();
    await this.pool.close();
  }

  private route(sessionId: string, event: SessionEvent): void {
    if (event.type === 'warning') {
      this.warnings.inc();
      this.options.log.warn({ sessionId: sessionId || undefined }, `media: ${event.message}`);
      return;
    }
    const handler = this.handlers.get(sessionId);
    if (event.type === 'ended') this.handlers.delete(sessionId);
    handler?.(event);
  }
}
