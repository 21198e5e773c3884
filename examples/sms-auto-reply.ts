/**
 * An SMS auto-reply: the gateway posts each message received on a number to the number's
 * application `message_url`; this answers with `<Message>`, which the gateway sends back to
 * the sender. Opt-out words (STOP...) get no reply: the gateway has recorded the opt-out.
 *
 *   npm run example:sms-auto-reply                        # HTTP on 127.0.0.1:8092
 *
 * Point an application's message_url at http://127.0.0.1:8092/message and its answer_url at
 * http://127.0.0.1:8092/answer (the API requires an answer_url of every application; a call
 * to the number hears that it takes text messages only). `npm run smsc` is an SMSC to try it
 * with (README, SMS quickstart).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callbackParams, now, numberSetting, setting, xmlEscape } from './lib/settings.js';

const host = setting('host', 'SMS_REPLY_HOST', '127.0.0.1');
const port = numberSetting('port', 'SMS_REPLY_PORT', 8092);

const log = (line: string) => console.log(`${now()} ${line}`);

const server = createServer((request, response) => {
  const path = new URL(request.url ?? '/', 'http://local').pathname;
  if (path === '/answer') {
    response
      .writeHead(200, { 'content-type': 'application/xml' })
      .end('<Response><Speak>This number answers text messages only.</Speak></Response>');
    return;
  }
  if (path !== '/message') {
    response.writeHead(404).end();
    return;
  }
  void callbackParams(request).then((p) => {
    log(`message ${p.MessageUUID} from ${p.From} to ${p.To}: "${p.Text}"`);
    if (p.MessageIntent === 'optout') {
      log(`${p.From} opted out: no reply`);
      response.writeHead(200).end();
      return;
    }
    const reply = `Thanks, we got your message: "${p.Text ?? ''}"`.slice(0, 160);
    log(`replying to ${p.From} from ${p.To}: "${reply}"`);
    response
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(
        `<Response><Message src="${xmlEscape(p.To ?? '')}" dst="${xmlEscape(p.From ?? '')}">` +
          `${xmlEscape(reply)}</Message></Response>`,
      );
  });
});

server.listen(port, host, () => {
  const { port: bound } = server.address() as AddressInfo;
  log(
    `SMS auto-reply listening: message_url http://${host}:${bound}/message, ` +
      `answer_url http://${host}:${bound}/answer`,
  );
});
process.once('SIGINT', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
