import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { callbackParams, numberSetting, setting } from './settings.js';

/** What an application that streams its calls to itself needs to say. */
export interface StreamAppOptions {
  /** Its name in the log, and the prefix of its environment settings (ECHO_BOT_HOST...). */
  name: string;
  envPrefix: string;
  defaultPort: number;
  /** The answer XML for a call, streaming it to `streamUrl`. */
  answerXml(streamUrl: string): string;
  /** One stream's WebSocket, once the gateway connects it. */
  onStream(socket: WebSocket): void;
  log(line: string): void;
}

/**
 * One HTTP server that answers calls on /answer with `answerXml` (and logs the end of a call,
 * which lands there too: an application's hangup_url defaults to its answer_url) and takes
 * their streams on /stream. Settings: --host, --port, --public-url (the address the gateway
 * reaches it at), or the environment variables <envPrefix>_HOST, _PORT, _PUBLIC_URL.
 */
export function startStreamApp(options: StreamAppOptions): void {
  const { envPrefix, log } = options;
  const host = setting('host', `${envPrefix}_HOST`, '127.0.0.1');
  const port = numberSetting('port', `${envPrefix}_PORT`, options.defaultPort);
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
      log(`call ${params.CallUUID} from ${params.From} to ${params.To}: streaming to ${streamUrl}`);
      response
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(options.answerXml(streamUrl));
    });
  });
  const sockets = new WebSocketServer({ server, path: '/stream', perMessageDeflate: false });
  sockets.on('connection', (socket) => options.onStream(socket));

  const publicUrl = () => {
    const { port: bound } = server.address() as AddressInfo;
    return setting('public-url', `${envPrefix}_PUBLIC_URL`, `http://${host}:${bound}`).replace(
      /\/+$/,
      '',
    );
  };
  server.listen(port, host, () => {
    const ws = publicUrl().replace(/^http/, 'ws');
    log(`${options.name} listening: answer_url ${publicUrl()}/answer, stream ${ws}/stream`);
  });
  process.once('SIGINT', () => process.exit(0));
  process.once('SIGTERM', () => process.exit(0));
}
