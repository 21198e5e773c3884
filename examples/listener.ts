/**
 * A transcription-style listener: it answers calls with a one-way audio stream to itself and,
 * instead of transcribing, prints what a transcriber would start from: the caller's speech
 * energy each half second (level in dBFS and a bar) and every key pressed.
 *
 *   npm run example:listener                 # HTTP and WebSocket on 127.0.0.1:8093
 *
 * Point an application's answer_url at http://127.0.0.1:8093/answer (README, Examples).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { callbackParams, now, numberSetting, setting, xmlEscape } from './lib/settings.js';

const host = setting('host', 'LISTENER_HOST', '127.0.0.1');
const port = numberSetting('port', 'LISTENER_PORT', 8093);
/** Linear 16-bit PCM: levels are read straight from the samples. */
const CONTENT_TYPE = 'audio/x-l16;rate=8000';
/** Speech is louder than this; below, the caller is quiet. */
const SPEECH_DBFS = -45;

const log = (line: string) => console.log(`${now()} ${line}`);

const server = createServer((request, response) => {
  const path = new URL(request.url ?? '/', 'http://local').pathname;
  if (path !== '/answer') {
    response.writeHead(404).end();
    return;
  }
  void callbackParams(request).then((params) => {
    if (params.Event === 'Hangup') {
      log(`call ${params.CallUUID} ended: ${params.HangupCause ?? params.HangupCauseName}`);
      response.writeHead(200).end();
      return;
    }
    const streamUrl = `${publicUrl().replace(/^http/, 'ws')}/stream`;
    log(`call ${params.CallUUID} from ${params.From}: listening on ${streamUrl}`);
    // keepCallAlive: the call stays up as long as the stream does (until the caller hangs up).
    response
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(
        `<Response><Stream keepCallAlive="true" contentType="${CONTENT_TYPE}">` +
          `${xmlEscape(streamUrl)}</Stream></Response>`,
      );
  });
});

const sockets = new WebSocketServer({ server, path: '/stream', perMessageDeflate: false });
sockets.on('connection', (socket) => listen(socket));

function listen(socket: WebSocket): void {
  let rate = 8000;
  let squares = 0;
  let samples = 0;
  let elapsedMs = 0;
  socket.on('message', (data) => {
    const event = JSON.parse(String(data)) as {
      event: string;
      start?: { callId: string; mediaFormat: { encoding: string; sampleRate: number } };
      media?: { payload: string };
      dtmf?: { digit: string };
    };
    if (event.event === 'start') {
      rate = event.start!.mediaFormat.sampleRate;
      log(`start: call ${event.start!.callId}, ${event.start!.mediaFormat.encoding} at ${rate} Hz`);
    } else if (event.event === 'media') {
      // L16: signed 16-bit little-endian samples.
      const bytes = Buffer.from(event.media!.payload, 'base64');
      for (let i = 0; i + 1 < bytes.length; i += 2) squares += bytes.readInt16LE(i) ** 2;
      samples += bytes.length >> 1;
      if (samples >= rate / 2) {
        elapsedMs += Math.round((samples / rate) * 1000);
        const rms = Math.sqrt(squares / samples);
        const dbfs = 20 * Math.log10(Math.max(rms, 1) / 32768);
        const bar = '#'.repeat(Math.max(0, Math.round((dbfs + 60) / 2)));
        const state = dbfs > SPEECH_DBFS ? 'speech' : 'quiet';
        log(`energy ${(elapsedMs / 1000).toFixed(1)} s: ${dbfs.toFixed(1)} dBFS ${state} ${bar}`);
        squares = 0;
        samples = 0;
      }
    } else if (event.event === 'dtmf') {
      log(`digit ${event.dtmf!.digit}`);
    } else if (event.event === 'stop') {
      log('stop: the call or the stream ended');
    }
  });
}

function publicUrl(): string {
  const { port: bound } = server.address() as AddressInfo;
  return setting('public-url', 'LISTENER_PUBLIC_URL', `http://${host}:${bound}`).replace(
    /\/+$/,
    '',
  );
}

server.listen(port, host, () => {
  log(`listener listening: answer_url ${publicUrl()}/answer`);
});
process.once('SIGINT', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
