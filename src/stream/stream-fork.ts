import type { Socket } from 'node:net';
import { WebSocket, type ClientOptions, type RawData } from 'ws';
import {
  OutboundRefused,
  redactedUrl,
  selfHostedGuard,
  type OutboundGuard,
  type PinnedTarget,
} from '../core/outbound-guard.js';
import type { StreamAudio, StreamAudioOptions } from '../media/pipeline/stream-audio.js';
import type { StreamForkSpec, StreamNews } from '../media/worker/protocol.js';
import { readClientMessage, type ClientMessage } from './client-messages.js';
import { SendBudget } from './send-budget.js';

/**
 * The largest message taken from the server: 4 MiB, room for a playAudio of the whole 40 s the
 * queue holds at 24 kHz (2.6 MB of base64). A bigger one closes the connection (1009) before
 * it is read, instead of costing the worker that carries every other call its decoding.
 */
const MAX_SERVER_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Builds the audio side of a fork once its socket is open. */
export type OpenStreamAudio = (
  handlers: Pick<StreamAudioOptions, 'onFrame' | 'onDigit'>,
) => StreamAudio;

export interface StreamForkOptions {
  /** Connection attempts before the stream fails (wire-compat.md: the first and two more). */
  attempts?: number;
  /** How long one attempt may take, and the pause before the next. */
  connectTimeoutMs?: number;
  retryDelayMs?: number;
  /** Bytes the socket may hold unsent before the stream is dropped. */
  sendBufferBytes?: number;
  /** Seconds from an RTP packet's arrival to its media event sent on the socket. */
  onInboundLatency?(seconds: number): void;
  /** Told of the connection's TCP socket once upgraded (to cap its kernel send buffer). */
  onSocket?(socket: Socket): void;
  /** What service_url goes through before each attempt; the default profile when absent. */
  guard?: OutboundGuard;
}

type Ended = Extract<StreamNews, { message: string }>['state'];

/**
 * One audio stream: the WebSocket client to the server, the gateway's side of the event
 * protocol of wire-compat.md (start, media per track every 20 ms, dtmf, playedStream,
 * clearedAudio, a final stop; sequence numbers from 1), the server's playAudio, checkpoint,
 * clearAudio and sendDTMF for a bidirectional stream, its timeout, and a bounded send buffer:
 * a server that does not keep up is told nothing but sees DegradedStream at 30, 60 and 90 %
 * and is dropped when the bound is passed, so it never holds up the call or other streams.
 */
export class StreamFork {
  private socket: WebSocket | null = null;
  private audio: StreamAudio | null = null;
  private sequence = 0;
  private readonly chunks = { inbound: 0, outbound: 0 };
  private readonly budget: SendBudget;
  private connectedAt: number | null = null;
  private timeout: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  private over = false;
  private readonly prefix: string;
  private readonly suffix: string;

  constructor(
    private readonly spec: StreamForkSpec,
    private readonly openAudio: OpenStreamAudio,
    private readonly report: (news: StreamNews) => void,
    private readonly options: StreamForkOptions = {},
  ) {
    this.budget = new SendBudget(options.sendBufferBytes ?? 1 << 20);
    // Every media event shares its start and end: written once.
    this.prefix = `,"streamId":${JSON.stringify(spec.streamId)},"media":{"track":"`;
    this.suffix = `,"extra_headers":${JSON.stringify(spec.extraHeaders)}}`;
    this.connect(1);
  }

  get ended(): boolean {
    return this.over;
  }

  /** Ends the stream: a final stop event, the socket closed cleanly. */
  stop(state: 'stopped' | 'timeout' = 'stopped', message = 'stopped'): void {
    if (this.over) return;
    if (this.socket?.readyState === WebSocket.OPEN) {
      this.sendEvent({
        event: 'stop',
        streamId: this.spec.streamId,
        stop: { callId: this.spec.callId, reason: state },
        extra_headers: this.spec.extraHeaders,
      });
      this.socket.close(1000, state);
    }
    this.finish(state, message);
  }

  /**
   * One connection attempt: service_url is resolved and checked by the outbound guard, and the
   * socket goes to the checked address. A refused URL fails the stream at once; a host that
   * does not resolve is a failed attempt like a refused connection.
   */
  private connect(attempt: number): void {
    if (this.over) return;
    const guard = this.options.guard ?? selfHostedGuard();
    guard.pin(this.spec.serviceUrl).then(
      (target) => this.open(attempt, target),
      (error: Error) => {
        if (this.over) return;
        if (error instanceof OutboundRefused)
          this.finish('failed', `service_url is refused: ${error.message}`);
        else this.retryOrFail(attempt, error);
      },
    );
  }

  private open(attempt: number, target: PinnedTarget): void {
    if (this.over) return;
    const options: ClientOptions & Pick<PinnedTarget, 'lookup'> = {
      headers: this.spec.headers,
      handshakeTimeout: this.options.connectTimeoutMs ?? 5000,
      perMessageDeflate: false,
      maxPayload: MAX_SERVER_MESSAGE_BYTES,
      // A redirect would lead past the guard: the upgrade must answer 101 where it was asked.
      followRedirects: false,
      // ws hands its options to net.connect and tls.connect: only the checked address.
      lookup: target.lookup,
    };
    const socket = new WebSocket(this.spec.serviceUrl, options);
    this.socket = socket;
    let opened = false;
    socket.on('open', () => {
      opened = true;
      // Stopped while the server was still accepting: it gets no start, only a clean close.
      if (this.over) {
        socket.close(1000, 'stopped');
        return;
      }
      this.opened();
    });
    socket.on('upgrade', (response) => this.options.onSocket?.(response.socket as Socket));
    socket.on('message', (data, isBinary) => this.received(data, isBinary));
    let oversized = false;
    let broken: Error | null = null;
    socket.on('error', (error: Error & { code?: string }) => {
      // 'close' follows with the outcome; the error itself says nothing more to the server.
      if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') oversized = true;
      broken = error;
    });
    socket.on('close', (code, reason) => {
      if (this.over || socket !== this.socket) return;
      if (oversized) {
        this.finish(
          'failed',
          `the server sent a message over ${MAX_SERVER_MESSAGE_BYTES} bytes; the connection was closed (1009)`,
        );
      } else if (opened) {
        // A connection that broke (reset, 1006) has no close reason: what broke it is the why.
        const why =
          reason.length > 0 ? `: ${reason.toString()}` : broken ? `: ${broken.message}` : '';
        // A clean close (1000) after the server's last words lets them play out.
        this.finish('failed', `the server closed the connection (${code}${why})`, code === 1000);
      } else {
        this.retryOrFail(attempt, broken);
      }
    });
  }

  /**
   * Another attempt, or the stream fails saying why the last one did (an upgrade refused
   * with its status, a timeout, a refused connection), with the URL as a log may show it: its
   * query may carry the server's token.
   */
  private retryOrFail(attempt: number, why: Error | null): void {
    const attempts = this.options.attempts ?? 3;
    if (attempt < attempts) {
      this.retry = setTimeout(() => this.connect(attempt + 1), this.options.retryDelayMs ?? 500);
    } else {
      const url = redactedUrl(new URL(this.spec.serviceUrl));
      const last = why === null ? '' : ` (the last: ${why.message})`;
      this.finish('failed', `could not connect to ${url} in ${attempts} attempts${last}`);
    }
  }

  private opened(): void {
    this.connectedAt = performance.now();
    this.sendEvent({
      event: 'start',
      start: {
        callId: this.spec.callId,
        streamId: this.spec.streamId,
        accountId: this.spec.accountId,
        tracks: this.spec.tracks,
        mediaFormat: {
          encoding: this.spec.encoding === 'l16' ? 'audio/x-l16' : 'audio/x-mulaw',
          sampleRate: this.spec.rate,
        },
      },
      extra_headers: this.spec.extraHeaders,
    });
    this.report({ state: 'connected' });
    this.timeout = setTimeout(
      () => this.stop('timeout', `stream_timeout of ${this.spec.timeoutMs / 1000} s reached`),
      this.spec.timeoutMs,
    );
    try {
      this.audio = this.openAudio({
        onFrame: (track, payload, arrivedAt) => this.media(track, payload, arrivedAt),
        onDigit: (digit) => this.digit(digit),
      });
    } catch (error) {
      this.stop('stopped', `the stream's audio could not start: ${(error as Error).message}`);
    }
  }

  private media(track: 'inbound' | 'outbound', payload: Buffer, arrivedAt: number | null): void {
    const chunk = ++this.chunks[track];
    // Milliseconds since the stream started, by frames: 20 ms each.
    const timestamp = (chunk - 1) * 20;
    this.send(
      `{"event":"media","sequenceNumber":${++this.sequence}${this.prefix}${track}","timestamp":"${timestamp}","chunk":${chunk},"payload":"${payload.toString('base64')}"}${this.suffix}`,
    );
    if (arrivedAt !== null) this.options.onInboundLatency?.((performance.now() - arrivedAt) / 1000);
  }

  private digit(digit: string): void {
    const at = this.connectedAt === null ? 0 : Math.round(performance.now() - this.connectedAt);
    this.sendEvent({
      event: 'dtmf',
      streamId: this.spec.streamId,
      dtmf: { track: 'inbound', digit, timestamp: String(at) },
      extra_headers: this.spec.extraHeaders,
    });
  }

  private received(data: RawData, isBinary: boolean): void {
    if (this.over) return;
    const read = readClientMessage(data, isBinary, this.spec.streamId);
    if ('error' in read) {
      this.error(read.error);
      return;
    }
    if (!this.spec.bidirectional) {
      this.error(`${read.message.event} is acted on only in a bidirectional stream`);
      return;
    }
    try {
      this.act(read.message);
    } catch (error) {
      this.error((error as Error).message);
    }
  }

  private act(message: ClientMessage): void {
    const audio = this.audio;
    if (!audio) throw new Error('the stream has no audio yet');
    switch (message.event) {
      case 'playAudio':
        audio.enqueue(message.payload, message.format);
        return;
      case 'checkpoint':
        audio.checkpoint(() =>
          this.sendEvent({
            event: 'playedStream',
            streamId: this.spec.streamId,
            name: message.name,
            extra_headers: this.spec.extraHeaders,
          }),
        );
        return;
      case 'clearAudio':
        audio.clear();
        this.sendEvent({
          event: 'clearedAudio',
          streamId: this.spec.streamId,
          extra_headers: this.spec.extraHeaders,
        });
        return;
      case 'sendDTMF':
        audio.sendDigits(message.digits).catch((error: Error) => this.error(error.message));
        return;
    }
  }

  /** Tells the server what was wrong with what it sent; the stream goes on. */
  private error(message: string): void {
    this.sendEvent({
      event: 'error',
      streamId: this.spec.streamId,
      error: message,
      extra_headers: this.spec.extraHeaders,
    });
  }

  private sendEvent(event: Record<string, unknown>): void {
    const { event: name, ...rest } = event;
    this.send(JSON.stringify({ event: name, sequenceNumber: ++this.sequence, ...rest }));
  }

  private send(text: string): void {
    const socket = this.socket;
    if (this.over || !socket || socket.readyState !== WebSocket.OPEN) return;
    const passed = this.budget.check(socket.bufferedAmount + text.length);
    if (passed === 'overflow') {
      socket.terminate();
      this.finish(
        'dropped',
        `the server did not read fast enough: over ${this.budget.limit} bytes were waiting to be sent`,
      );
      return;
    }
    if (passed !== null) this.report({ state: 'degraded', percent: passed });
    socket.send(text);
  }

  /** `drain`: what the server queued plays out (its own clean close), else it is dropped. */
  private finish(state: Ended, message: string, drain = false): void {
    if (this.over) return;
    this.over = true;
    if (this.timeout) clearTimeout(this.timeout);
    if (this.retry) clearTimeout(this.retry);
    this.audio?.close(drain);
    this.audio = null;
    const connectedMs = this.connectedAt === null ? 0 : performance.now() - this.connectedAt;
    // A socket still connecting is given up too, or it would open later with no one behind it.
    const connecting = this.socket?.readyState === WebSocket.CONNECTING;
    if (state === 'failed' || state === 'dropped' || connecting) this.socket?.terminate();
    this.report({ state, message, connectedMs: Math.round(connectedMs) });
  }
}
