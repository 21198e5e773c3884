import { guardFromSettings, redactedUrl, type OutboundGuard } from '../../core/outbound-guard.js';
import { systemScheduler, type Scheduler } from '../../core/scheduler.js';
import { bridgeSessions, relaySessions } from '../pipeline/bridge.js';
import { MediaSession } from '../pipeline/media-session.js';
import { BeepWatch } from '../pipeline/beep-watch.js';
import { MachineClassifier, type MachineVerdict } from '../pipeline/machine-classifier.js';
import { SilenceWatch } from '../pipeline/silence-watch.js';
import { FrameClock } from '../playout/frame-clock.js';
import { PcmSource } from '../playout/playout-source.js';
import { PortAllocator, PreboundPairs } from '../rtp/port-range.js';
import { AudioFileSource } from '../sources/audio-file-source.js';
import { SpeechRenderer } from '../sources/speech.js';
import { StreamAudio, type StreamAudioOptions } from '../pipeline/stream-audio.js';
import { LatencyCounts } from './latency-counts.js';
import { DropCounts } from './drop-counts.js';
import { DtlsContext } from '../dtls/dtls-context.js';
import { WorkerConferences } from '../conference/worker-conferences.js';
import { SessionRecordings } from '../recording/session-recordings.js';
import type {
  Command,
  DetectMachine,
  LatencyReport,
  Play,
  PlaySource,
  Results,
  SessionEvent,
  StreamForkSpec,
  StreamNews,
  WaitForBeep,
  WaitForSilence,
  WorkerSettings,
} from './protocol.js';

/** A running stream fork, as the worker holds it. */
export interface ForkHandle {
  readonly ended: boolean;
  stop(): void;
}

/**
 * Starts a stream fork (the worker's entry gives the WebSocket side): `openAudio` builds its
 * audio on the session once connected, `report` carries its news.
 */
export type ForkStream = (
  spec: StreamForkSpec,
  openAudio: (handlers: Pick<StreamAudioOptions, 'onFrame' | 'onDigit'>) => StreamAudio,
  report: (news: StreamNews) => void,
  onInboundLatency: (seconds: number) => void,
) => ForkHandle;

/** How often a worker reports its stream latencies up. */
const LATENCY_REPORT_MS = 1000;

type Emit = (sessionId: string, event: SessionEvent) => void;

/** RTP pairs kept bound ahead per worker: enough for a burst of calls between two refills. */
export const PAIRS_AHEAD = 32;

/**
 * Everything one media worker holds: its sessions, their bridges, the one frame clock that
 * ticks them all, a port allocator over the RTP range, and the speech and file caches.
 * `handle` runs one command and resolves with its result.
 */
export class WorkerSessions {
  private readonly sessions = new Map<string, MediaSession>();
  private readonly bridges = new Map<string, { peerId: string; part: () => void }>();
  /** Running stream forks, by session, then by stream. */
  private readonly forks = new Map<string, Map<string, ForkHandle>>();
  private readonly latency = { inbound: new LatencyCounts(), playout: new LatencyCounts() };
  private readonly drops = new DropCounts();
  /** Made from the process's certificate with the first WebRTC leg. */
  private dtlsContext: DtlsContext | null = null;
  private readonly clock: FrameClock;
  private readonly recordings: SessionRecordings;
  private readonly allocator: PreboundPairs;
  private readonly speech = new SpeechRenderer();
  private readonly files: AudioFileSource;
  private readonly conferences: WorkerConferences;
  /** What Play's files and the stream forks' URLs go through (settings.outbound). */
  readonly guard: OutboundGuard;

  constructor(
    private readonly settings: WorkerSettings,
    private readonly emit: Emit,
    /** Told of RTP ports bound ahead, which createSession may then name. */
    private readonly announce: (ports: number[]) => void = () => {},
    private readonly forkStream: ForkStream | null = null,
    reportLatency: ((report: Omit<LatencyReport, 'kind'>) => void) | null = null,
    private readonly scheduler: Scheduler = systemScheduler,
  ) {
    this.clock = new FrameClock(scheduler, 20, (error) =>
      emit('', { type: 'warning', message: `frame tick failed: ${error.message}` }),
    );
    this.recordings = new SessionRecordings(this.clock);
    this.allocator = new PreboundPairs(
      new PortAllocator(settings.rtpPorts, settings.rtpHost),
      PAIRS_AHEAD,
      (ports) => this.announce(ports),
    );
    // The first announcement tells the main thread the worker is ready, even with none bound.
    void this.allocator.refill().then(() => {
      if (this.allocator.ready === 0) this.announce([]);
    });
    this.guard = guardFromSettings(settings.outbound, (refused, url) =>
      emit('', {
        type: 'warning',
        message: `outbound request refused (rule ${refused.rule}): ${redactedUrl(url)}: ${refused.message}`,
      }),
    );
    this.conferences = new WorkerConferences(this.clock, (sessionId, conferenceId) =>
      emit(sessionId, { type: 'conferenceFloor', conferenceId }),
    );
    this.files = new AudioFileSource({ maxBytes: settings.maxFileBytes, guard: this.guard });
    if (reportLatency) {
      const { inbound, playout } = this.latency;
      const drops = this.drops;
      setInterval(() => {
        if (inbound.empty && playout.empty && drops.empty) return;
        reportLatency({
          inbound: inbound.take(),
          playout: playout.take(),
          ...(!drops.empty && { drops: drops.take() }),
        });
      }, LATENCY_REPORT_MS).unref();
    }
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(command: Command): Promise<Results[Command['type']]> {
    switch (command.type) {
      case 'createSession':
        return this.create(command.sessionId, command.spec, command.port);
      case 'updateSession':
        this.get(command.sessionId).update(command.changes);
        return { sessionId: command.sessionId };
      case 'play':
        return this.play(command);
      case 'stopPlayback':
        this.get(command.sessionId).stopPlayback(command.tag);
        return { sessionId: command.sessionId };
      case 'startStream':
        return this.startStream(command.sessionId, command.stream);
      case 'stopStream': {
        const fork = this.forks.get(command.sessionId)?.get(command.streamId);
        fork?.stop();
        return { streamId: command.streamId, existed: fork !== undefined };
      }
      case 'sendDigits': {
        const completed = await this.get(command.sessionId).sendDigits(command.digits, {
          toneMs: command.toneMs,
        });
        return { completed };
      }
      case 'waitForSilence':
        return { silent: await this.waitForSilence(command) };
      case 'waitForBeep':
        return { beeped: await this.waitForBeep(command) };
      case 'detectMachine':
        return this.detectMachine(command);
      case 'bridge':
        return this.bridge(command.sessionId, command.peerId, command.mode);
      case 'unbridge':
        return { sessionId: command.sessionId, bridged: this.unbridge(command.sessionId) };
      case 'joinConference':
      case 'linkConference':
      case 'leaveConference':
      case 'updateConferenceMember':
      case 'startConferenceRecording':
      case 'stopConferenceRecording':
        // A member linked from another worker has no session here.
        return this.conferences.handle(command, (id) => this.get(id));
      case 'startRecording': {
        const { sessionId, recording } = command;
        return this.recordings.record(sessionId, this.get(sessionId), recording);
      }
      case 'stopRecording':
        return { stopped: this.recordings.stop(command.sessionId, command.recordingId) };
      case 'sessionStats':
        return this.get(command.sessionId).stats;
      case 'destroySession':
        return this.destroy(command.sessionId, command.reason);
      case 'stats': {
        const memory = process.memoryUsage();
        return {
          sessions: this.sessions.size,
          heapUsed: memory.heapUsed,
          processRss: memory.rss,
        };
      }
    }
  }

  /** Closes every session (the worker is going away). */
  async closeAll(reason: string): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.destroy(id, reason)));
  }

  private async create(
    sessionId: string,
    spec: Parameters<typeof MediaSession.open>[0],
    reservedPort?: number,
  ): Promise<Results['createSession']> {
    try {
      return await this.open(sessionId, spec, reservedPort);
    } catch (error) {
      // A reserved pair the session never took is still the main thread's to reserve.
      if (reservedPort !== undefined && this.allocator.holds(reservedPort)) {
        this.announce([reservedPort]);
      }
      throw error;
    }
  }

  private async open(
    sessionId: string,
    spec: Parameters<typeof MediaSession.open>[0],
    reservedPort?: number,
  ): Promise<Results['createSession']> {
    if (this.sessions.has(sessionId)) {
      throw new Error(`session ${sessionId} already exists on this worker`);
    }
    const session = await MediaSession.open(
      spec,
      {
        allocator:
          reservedPort === undefined
            ? this.allocator
            : { bindPair: async () => this.allocator.take(reservedPort) },
        clock: this.clock,
        cname: this.settings.cname,
        scheduler: this.scheduler,
        ...(this.settings.dtls && { webrtc: this.webrtcEnvironment(this.settings.dtls) }),
        srtpTally: this.drops,
        ...(this.settings.opusComplexity !== undefined && {
          codecs: { opusComplexity: this.settings.opusComplexity },
        }),
      },
      {
        onDigit: (digit) => this.emit(sessionId, { type: 'dtmf', ...digit }),
        onMediaTimeout: (silentForMs) =>
          this.emit(sessionId, { type: 'mediaTimeout', silentForMs }),
        onLatched: (rtp) => this.emit(sessionId, { type: 'latched', ...rtp }),
        onTransportFailed: (failure) =>
          this.emit(sessionId, { type: 'transportFailed', ...failure }),
        onError: (error) => this.emit(sessionId, { type: 'warning', message: error.message }),
      },
    );
    if (this.sessions.has(sessionId)) {
      // Created twice at once: the second one loses.
      await session.close();
      throw new Error(`session ${sessionId} already exists on this worker`);
    }
    this.sessions.set(sessionId, session);
    return { sessionId, port: session.port, rtcpPort: session.rtcpPort };
  }

  private webrtcEnvironment(dtls: NonNullable<WorkerSettings['dtls']>) {
    return {
      context: () => (this.dtlsContext ??= new DtlsContext(dtls.certificate)),
      handshakeTimeoutMs: dtls.handshakeTimeoutMs,
      ...(dtls.consentTimeoutMs === undefined ? {} : { consentTimeoutMs: dtls.consentTimeoutMs }),
      tally: this.drops,
    };
  }

  private async play(command: Play): Promise<Results['play']> {
    const session = this.get(command.sessionId);
    const samples = await this.render(command.source, session.rate);
    if (samples.length === 0) throw new Error('Expected audio to play but the source has none');
    const source = new PcmSource(samples, command.loop ?? false);
    return { completed: await session.play(source, command.mode ?? 'mix', command.tag) };
  }

  private async render(source: PlaySource, rate: MediaSession['rate']): Promise<Int16Array> {
    switch (source.kind) {
      case 'speech': {
        const pcm = await this.speech.renderAt(
          source.ssml ?? source.text,
          source.voice,
          source.language,
          rate,
          source.ssml !== undefined,
        );
        return pcm.samples;
      }
      case 'file':
        return (await this.files.load(source.url, rate)).samples;
      case 'tone':
        return renderTone(source.frequencies, source.durationMs, rate);
    }
  }

  private startStream(sessionId: string, spec: StreamForkSpec): Results['startStream'] {
    const session = this.get(sessionId);
    if (!this.forkStream) throw new Error('this worker cannot fork streams');
    const running = this.forks.get(sessionId) ?? new Map<string, ForkHandle>();
    if (running.has(spec.streamId)) throw new Error(`stream ${spec.streamId} already exists`);
    const fork = this.forkStream(
      spec,
      (handlers) =>
        new StreamAudio(session, {
          format: { encoding: spec.encoding, rate: spec.rate },
          tracks: spec.tracks,
          noiseCancellationLevel: spec.noiseCancellationLevel,
          bidirectional: spec.bidirectional,
          onPlayoutLatency: (seconds) => this.latency.playout.observe(seconds),
          ...handlers,
        }),
      (news) => {
        if ('message' in news) {
          running.delete(spec.streamId);
          if (running.size === 0) this.forks.delete(sessionId);
        }
        this.emit(sessionId, { type: 'stream', streamId: spec.streamId, ...news });
      },
      (seconds) => this.latency.inbound.observe(seconds),
    );
    if (!fork.ended) {
      running.set(spec.streamId, fork);
      this.forks.set(sessionId, running);
    }
    return { streamId: spec.streamId };
  }

  private bridge(sessionId: string, peerId: string, mode = 'mix'): Results['bridge'] {
    const session = this.get(sessionId);
    const peer = this.get(peerId);
    if (this.bridges.has(sessionId) || this.bridges.has(peerId)) {
      throw new Error(
        `session ${this.bridges.has(sessionId) ? sessionId : peerId} is already bridged`,
      );
    }
    const part = mode === 'relay' ? relaySessions(session, peer) : bridgeSessions(session, peer);
    this.bridges.set(sessionId, { peerId, part });
    this.bridges.set(peerId, { peerId: sessionId, part });
    return { sessionId, peerId };
  }

  private unbridge(sessionId: string): boolean {
    const bridge = this.bridges.get(sessionId);
    if (!bridge) return false;
    this.bridges.delete(sessionId);
    this.bridges.delete(bridge.peerId);
    bridge.part();
    return true;
  }

  /** Watches what the session hears, one frame per tick of the clock that ticks it. */
  private waitForSilence(command: WaitForSilence): Promise<boolean> {
    const watch = new SilenceWatch(command.silenceMs, command.maxMs);
    return this.watchHeard(command.sessionId, watch, false);
  }

  private waitForBeep(command: WaitForBeep): Promise<boolean> {
    const session = this.get(command.sessionId);
    return this.watchHeard(command.sessionId, new BeepWatch(command.maxMs, session.rate), false);
  }

  private detectMachine(command: DetectMachine): Promise<MachineVerdict> {
    const session = this.get(command.sessionId);
    const classifier = new MachineClassifier(command.settings, session.rate);
    return this.watchHeard(command.sessionId, classifier, () => classifier.stop()!);
  }

  /**
   * Feeds a watch what the session hears, a frame (or null) per tick, until it decides;
   * `gone` (a value, or made by a function) when the session goes away first.
   */
  private watchHeard<T>(
    sessionId: string,
    watch: { tick(frame: Int16Array | null): T | null },
    gone: T | (() => T),
  ): Promise<T> {
    const session = this.get(sessionId);
    return new Promise((resolve) => {
      let heard: Int16Array | null = null;
      const removeTap = session.addTap((frame) => (heard = frame));
      // Added after the session's own tick, so each tick here sees that tick's frame.
      const stop = this.clock.add(() => {
        const closed = this.sessions.get(sessionId) !== session;
        const verdict = closed
          ? typeof gone === 'function'
            ? (gone as () => T)()
            : gone
          : watch.tick(heard);
        heard = null;
        if (verdict === null) return;
        removeTap();
        stop();
        resolve(verdict);
      });
    });
  }

  private async destroy(sessionId: string, reason?: string): Promise<Results['destroySession']> {
    const session = this.sessions.get(sessionId);
    if (!session) return { sessionId, existed: false, stats: null };
    this.sessions.delete(sessionId);
    this.unbridge(sessionId);
    this.conferences.leave(sessionId);
    this.recordings.stop(sessionId, undefined, 'session-closed');
    for (const fork of [...(this.forks.get(sessionId)?.values() ?? [])]) fork.stop();
    const stats = session.stats;
    await session.close(reason);
    return { sessionId, existed: true, stats };
  }

  private get(sessionId: string): MediaSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`no media session ${sessionId} on this worker`);
    return session;
  }
}

/** Tones summed (ringback, test signals), each at -12 dBFS peak split between them. */
function renderTone(frequencies: number[], durationMs: number, rate: number): Int16Array {
  if (frequencies.length === 0 || frequencies.some((f) => !(f > 0 && f < rate / 2))) {
    throw new RangeError(
      `Expected tone frequencies between 0 and ${rate / 2} Hz but received ${frequencies.join(', ')}`,
    );
  }
  if (!(durationMs > 0 && durationMs <= 600_000)) {
    throw new RangeError(`Expected a tone durationMs from 1 to 600000 but received ${durationMs}`);
  }
  const amplitude = (0.25 * 32767) / frequencies.length;
  const out = new Int16Array(Math.round((durationMs * rate) / 1000));
  for (let i = 0; i < out.length; i++) {
    let sum = 0;
    for (const f of frequencies) sum += Math.sin((2 * Math.PI * f * i) / rate);
    out[i] = Math.round(amplitude * sum);
  }
  return out;
}
