/**
 * A transcription-style listener: it answers calls with a one-way audio stream to itself and,
 * instead of transcribing, prints what a transcriber would start from: the caller's speech
 * energy each half second (level in dBFS and a bar) and every key pressed.
 *
 *   npm run example:listener                 # HTTP and WebSocket on 127.0.0.1:8093
 *
 * Point an application's answer_url at http://127.0.0.1:8093/answer (README, Examples).
 */
import type { WebSocket } from 'ws';
import { now, xmlEscape } from './lib/settings.js';
import { startStreamApp } from './lib/stream-app.js';

/** Linear 16-bit PCM: levels are read straight from the samples. */
const CONTENT_TYPE = 'audio/x-l16;rate=8000';
/** Speech is louder than this; below, the caller is quiet. */
const SPEECH_DBFS = -45;

const log = (line: string) => console.log(`${now()} ${line}`);

startStreamApp({
  name: 'listener',
  envPrefix: 'LISTENER',
  defaultPort: 8093,
  // keepCallAlive: the call stays up as long as the stream does (until the caller hangs up).
  answerXml: (streamUrl) =>
    `<Response><Stream keepCallAlive="true" contentType="${CONTENT_TYPE}">` +
    `${xmlEscape(streamUrl)}</Stream></Response>`,
  onStream: (socket) => listen(socket),
  log,
});

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
