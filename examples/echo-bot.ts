/**
 * A voice-AI stand-in: it answers calls with a bidirectional audio stream to itself and plays
 * every frame the caller sends straight back into the call (an echo). Every second of echoed
 * audio it asks for a checkpoint and prints when the gateway has really played it out; a key
 * the caller presses clears whatever is still queued (barge-in), as an AI bot does when the
 * caller interrupts it.
 *
 *   npm run example:echo-bot                # HTTP and WebSocket on 127.0.0.1:8090
 *   npm run example:echo-bot -- --port 9000 --public-url http://10.0.0.5:9000
 *
 * Point an application's answer_url at http://127.0.0.1:8090/answer (README, Quickstart).
 */
import type { WebSocket } from 'ws';
import { now, setting, xmlEscape } from './lib/settings.js';
import { startStreamApp } from './lib/stream-app.js';

const contentType = setting('content-type', 'ECHO_BOT_CONTENT_TYPE', 'audio/x-l16;rate=16000');
/** Frames (20 ms each) between checkpoints: one a second. */
const CHECKPOINT_EVERY = 50;

const log = (line: string) => console.log(`${now()} ${line}`);

/** The answer XML: a bidirectional stream to this bot, kept open for the whole call. */
function answerXml(streamUrl: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<Response>\n' +
    `  <Stream bidirectional="true" keepCallAlive="true" contentType="${xmlEscape(contentType)}">` +
    `${xmlEscape(streamUrl)}</Stream>\n` +
    '</Response>\n'
  );
}

startStreamApp({
  name: 'echo bot',
  envPrefix: 'ECHO_BOT',
  defaultPort: 8090,
  answerXml,
  onStream: (socket) => new EchoSession(socket),
  log,
});

/** One call's stream: echo, checkpoints, and clearAudio on a key. */
class EchoSession {
  private streamId = '';
  private format = { encoding: 'audio/x-l16', sampleRate: 8000 };
  private echoed = 0;
  private checkpoints = 0;

  constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => this.receive(JSON.parse(String(data)) as StreamEvent));
    socket.on('close', () => log(`stream closed after echoing ${this.echoed} frames`));
  }

  private receive(event: StreamEvent): void {
    switch (event.event) {
      case 'start': {
        const { callId, streamId, mediaFormat } = event.start!;
        this.streamId = streamId;
        this.format = mediaFormat;
        log(
          `start: call ${callId}, stream ${streamId}, ${mediaFormat.encoding} at ` +
            `${mediaFormat.sampleRate} Hz`,
        );
        break;
      }
      case 'media':
        // Echo: the caller's own audio goes back as playAudio, in the stream's format.
        this.send({
          event: 'playAudio',
          media: {
            contentType: this.format.encoding,
            sampleRate: this.format.sampleRate,
            payload: event.media!.payload,
          },
        });
        this.echoed++;
        if (this.echoed % CHECKPOINT_EVERY === 0) {
          const name = `second-${++this.checkpoints}`;
          this.send({ event: 'checkpoint', streamId: this.streamId, name });
        }
        break;
      case 'playedStream':
        log(`playedStream: checkpoint ${event.name} played out (${this.echoed} frames echoed)`);
        break;
      case 'dtmf':
        // Barge-in: drop what is queued, as a bot does when the caller interrupts it.
        log(`dtmf: the caller pressed ${event.dtmf!.digit}; sending clearAudio`);
        this.send({ event: 'clearAudio', streamId: this.streamId });
        break;
      case 'clearedAudio':
        log('clearedAudio: the queued audio was dropped');
        break;
      case 'stop':
        log('stop: the call or the stream ended');
        break;
      case 'error':
        log(`error from the gateway: ${JSON.stringify(event)}`);
        break;
      default:
        break;
    }
  }

  private send(message: unknown): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(message));
  }
}

interface StreamEvent {
  event: string;
  name?: string;
  start?: {
    callId: string;
    streamId: string;
    mediaFormat: { encoding: string; sampleRate: number };
  };
  media?: { track: string; payload: string };
  dtmf?: { digit: string };
}
