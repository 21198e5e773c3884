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
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { callbackParams, now, numberSetting, setting, xmlEscape } from './lib/settings.js';

const host = setting('host', 'ECHO_BOT_HOST', '127.0.0.1');
const port = numberSetting('port', 'ECHO_BOT_PORT', 8090);
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

const server = createServer((request, response) => {
  const path = new URL(request.url ?? '/', 'http://local').pathname;
  if (path !== '/answer') {
    response.writeHead(404).end();
    return;
  }
  void callbackParams(request).then((params) => {
    // An application's hangup_url defaults to its answer_url: the end of the call lands here.
    if (params.Event === 'Hangup') {
      log(`call ${params.CallUUID} ended: ${params.HangupCause ?? params.HangupCauseName}`);
      response.writeHead(200).end();
      return;
    }
    const streamUrl = `${publicUrl().replace(/^http/, 'ws')}/stream`;
    log(
      `call ${params.CallUUID} from ${params.From} to ${params.To}: streaming it to ${streamUrl}`,
    );
    response.writeHead(200, { 'content-type': 'application/xml' }).end(answerXml(streamUrl));
  });
});

const sockets = new WebSocketServer({ server, path: '/stream', perMessageDeflate: false });
sockets.on('connection', (socket) => new EchoSession(socket));

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

function publicUrl(): string {
  const { port: bound } = server.address() as AddressInfo;
  return setting('public-url', 'ECHO_BOT_PUBLIC_URL', `http://${host}:${bound}`).replace(
    /\/+$/,
    '',
  );
}

server.listen(port, host, () => {
  const ws = publicUrl().replace(/^http/, 'ws');
  log(`echo bot listening: answer_url ${publicUrl()}/answer, stream ${ws}/stream`);
});
process.once('SIGINT', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
