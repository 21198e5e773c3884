import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DIGITS = /^\d+$/;

export interface StreamEvent {
  event: string;
  sequenceNumber: number;
  [key: string]: unknown;
}

/** One connection from the gateway, with every event it sent, checked as strict clients do. */
export class StreamConnection {
  readonly events: StreamEvent[] = [];
  /** Every way the gateway's events broke the protocol; a test expects it empty. */
  readonly violations: string[] = [];
  closed: { code: number; reason: string } | null = null;
  private readonly chunks = new Map<string, number>();

  constructor(
    readonly socket: WebSocket,
    readonly request: IncomingMessage,
  ) {
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        this.violations.push('a binary frame');
        return;
      }
      try {
        this.check(JSON.parse(data.toString()) as StreamEvent);
      } catch (error) {
        this.violations.push(`unreadable event: ${(error as Error).message}`);
      }
    });
    socket.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }

  of(event: string): StreamEvent[] {
    return this.events.filter((e) => e.event === event);
  }

  /** Media payloads of a track, decoded from base64, in order. */
  payloads(track: string): Buffer[] {
    return this.of('media')
      .map((e) => e.media as { track: string; payload: string })
      .filter((m) => m.track === track)
      .map((m) => Buffer.from(m.payload, 'base64'));
  }

  send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  /**
   * Plays 16-bit audio at `sampleRate` back into the call as playAudio events of 100 ms each
   * (the stream protocol's L16 is little-endian, as this machine's samples are).
   */
  playL16(pcm: Int16Array, sampleRate: 8000 | 16000 | 24000): void {
    const chunk = sampleRate / 10;
    for (let at = 0; at < pcm.length; at += chunk) {
      const samples = pcm.subarray(at, at + chunk);
      this.send({
        event: 'playAudio',
        media: {
          contentType: 'audio/x-l16',
          sampleRate,
          payload: Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength).toString(
            'base64',
          ),
        },
      });
    }
  }

  /** Stops reading from the connection, as a stalled server does (the TCP window fills). */
  stopReading(): void {
    (this.socket as unknown as { _socket: { pause(): void } })._socket.pause();
  }

  private check(event: StreamEvent): void {
    const fail = (what: string) => this.violations.push(`${event.event}: ${what}`);
    const expected = this.events.length + 1;
    if (event.sequenceNumber !== expected) {
      fail(`sequenceNumber ${event.sequenceNumber}, expected ${expected}`);
    }
    this.events.push(event);
    // wire-compat: "extra_headers is a string and is present on every event".
    if (typeof event.extra_headers !== 'string') fail('extra_headers is not a string');
    if (event.event === 'start') {
      const start = event.start as Record<string, unknown>;
      if (!UUID.test(String(start.callId))) fail('callId is not a UUID');
      if (!UUID.test(String(start.streamId))) fail('streamId is not a UUID');
      const format = start.mediaFormat as Record<string, unknown>;
      if (typeof format.sampleRate !== 'number') fail('sampleRate is not a number');
      if (typeof format.encoding !== 'string') fail('encoding is not a string');
      return;
    }
    if (event.event !== 'start' && !UUID.test(String(event.streamId)))
      fail('streamId is not a UUID');
    if (event.event === 'media') {
      const media = event.media as Record<string, unknown>;
      if (typeof media.timestamp !== 'string' || !DIGITS.test(media.timestamp)) {
        fail('timestamp is not a string of digits');
      }
      if (typeof media.chunk !== 'number') fail('chunk is not a number');
      const track = String(media.track);
      const chunk = (this.chunks.get(track) ?? 0) + 1;
      if (media.chunk !== chunk)
        fail(`chunk ${String(media.chunk)} on ${track}, expected ${chunk}`);
      this.chunks.set(track, chunk);
      if (typeof media.payload !== 'string' || !BASE64.test(media.payload)) {
        fail('payload is not base64');
      }
    }
    if (event.event === 'dtmf') {
      const dtmf = event.dtmf as Record<string, unknown>;
      if (typeof dtmf.timestamp !== 'string') fail('dtmf timestamp is not a string');
    }
  }
}

/** A WebSocket server playing a voice-AI server: it accepts the gateway's stream connections. */
export class StreamServer {
  readonly connections: StreamConnection[] = [];
  private readonly waiting: ((c: StreamConnection) => void)[] = [];

  private constructor(
    private readonly server: WebSocketServer,
    readonly port: number,
  ) {
    server.on('connection', (socket, request) => {
      const connection = new StreamConnection(socket, request);
      this.connections.push(connection);
      for (const wake of this.waiting.splice(0)) wake(connection);
    });
  }

  static async start(): Promise<StreamServer> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    return new StreamServer(server, (server.address() as AddressInfo).port);
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}/stream`;
  }

  /** The next connection (or the latest one already made, when `index` says which). */
  async connection(index = 0): Promise<StreamConnection> {
    while (this.connections.length <= index) {
      await new Promise<StreamConnection>((resolve) => this.waiting.push(resolve));
    }
    return this.connections[index]!;
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.socket.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
