import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { EchoBotCounters, EchoBotMessage } from './echo-bot.js';

/**
 * The voice-AI server of the benchmark, on its own thread so that its event loop is not the
 * callers': every inbound media event is sent straight back as playAudio with the same
 * payload. Per stream it checks that `sequenceNumber` and the track's `chunk` go up by one;
 * what is skipped is a frame lost between the gateway and the bot.
 */

const counters: EchoBotCounters = {
  connections: 0,
  open: 0,
  starts: 0,
  stops: 0,
  media: 0,
  audioMedia: 0,
  playAudioSent: 0,
  sequenceGaps: 0,
  chunkGaps: 0,
  outOfOrder: 0,
  badMessages: 0,
  sendErrors: 0,
  maxBufferedBytes: 0,
  loopUtilization: 0,
};

/** A silent mu-law frame (0xFF bytes) in base64 starts like this; a numbered frame does not. */
const SILENCE_PREFIX = '////';
const PLAY_PREFIX =
  '{"event":"playAudio","media":{"contentType":"audio/x-mulaw","sampleRate":8000,"payload":"';
const PLAY_SUFFIX = '"}}';

interface MediaEvent {
  event?: string;
  sequenceNumber?: number;
  streamId?: string;
  media?: { track?: string; chunk?: number; payload?: string };
}

function serve(socket: WebSocket): void {
  counters.connections++;
  counters.open++;
  let lastSequence = 0;
  const lastChunk = new Map<string, number>();
  const sent = (error?: Error) => {
    if (error) counters.sendErrors++;
  };
  socket.on('message', (data: RawData, isBinary: boolean) => {
    let message: MediaEvent;
    try {
      message = JSON.parse(isBinary ? '' : data.toString()) as MediaEvent;
    } catch {
      counters.badMessages++;
      return;
    }
    const sequence = message.sequenceNumber;
    if (typeof sequence === 'number') {
      if (sequence > lastSequence + 1) counters.sequenceGaps += sequence - lastSequence - 1;
      else if (sequence <= lastSequence) counters.outOfOrder++;
      lastSequence = Math.max(lastSequence, sequence);
    } else {
      counters.badMessages++;
    }
    if (message.event === 'media') {
      const media = message.media;
      const payload = media?.payload;
      if (!media || typeof payload !== 'string' || typeof media.chunk !== 'number') {
        counters.badMessages++;
        return;
      }
      counters.media++;
      const track = media.track ?? '';
      const previous = lastChunk.get(track) ?? 0;
      if (media.chunk > previous + 1) counters.chunkGaps += media.chunk - previous - 1;
      else if (media.chunk <= previous) counters.outOfOrder++;
      lastChunk.set(track, Math.max(previous, media.chunk));
      if (track !== 'inbound') return;
      if (!payload.startsWith(SILENCE_PREFIX)) counters.audioMedia++;
      socket.send(PLAY_PREFIX + payload + PLAY_SUFFIX, sent);
      counters.playAudioSent++;
      if (socket.bufferedAmount > counters.maxBufferedBytes)
        counters.maxBufferedBytes = socket.bufferedAmount;
    } else if (message.event === 'start') {
      counters.starts++;
    } else if (message.event === 'stop') {
      counters.stops++;
    }
  });
  socket.on('close', () => counters.open--);
  socket.on('error', () => counters.sendErrors++);
}

/** The address the gateway connects to (the bench's --listen-host). */
const host = (workerData as { host?: string } | null)?.host ?? '127.0.0.1';
const server = new WebSocketServer({ host, port: 0, path: '/echo' });
server.on('connection', serve);
server.on('listening', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  parentPort?.postMessage({ type: 'listening', port } satisfies EchoBotMessage);
});

let utilization = performance.eventLoopUtilization();
parentPort?.on('message', (request: { type: 'read' | 'close' }) => {
  if (request.type === 'read') {
    const now = performance.eventLoopUtilization();
    counters.loopUtilization =
      Math.round(performance.eventLoopUtilization(now, utilization).utilization * 1000) / 10;
    utilization = now;
    parentPort?.postMessage({ type: 'counters', counters } satisfies EchoBotMessage);
  } else {
    for (const client of server.clients) client.terminate();
    server.close(() => parentPort?.close());
  }
});
