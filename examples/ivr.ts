/**
 * An IVR in answer XML: a menu read with Speak inside GetDigits; 1 plays a message and hangs
 * up, 2 connects the caller with Dial (to a number through the gateway's carrier, or to a SIP
 * URI), and the Dial's action says how that went. Every request the gateway makes is printed.
 *
 *   npm run example:ivr                                   # HTTP on 127.0.0.1:8091
 *   npm run example:ivr -- --dial-to sip:alice@127.0.0.1:5070 --dial-time-limit 60
 *
 * Point an application's answer_url at http://127.0.0.1:8091/answer and its hangup_url at
 * http://127.0.0.1:8091/hangup (README, Examples).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callbackParams, now, numberSetting, setting, xmlEscape } from './lib/settings.js';

const host = setting('host', 'IVR_HOST', '127.0.0.1');
const port = numberSetting('port', 'IVR_PORT', 8091);
/** Where option 2 goes: a phone number (through VOXGATE_CARRIER_URI) or a SIP URI. */
const dialTo = setting('dial-to', 'IVR_DIAL_TO', '+14155550100');
/** The longest the connected call may last, seconds. */
const dialTimeLimit = numberSetting('dial-time-limit', 'IVR_DIAL_TIME_LIMIT', 3600);

const log = (line: string) => console.log(`${now()} ${line}`);

type Page = (params: Record<string, string>, base: string) => string;

const pages: Record<string, Page> = {
  '/answer': (p, base) => {
    log(`call ${p.CallUUID} from ${p.From} to ${p.To}: menu`);
    return (
      `<GetDigits action="${base}/menu" method="POST" numDigits="1" timeout="10" ` +
      `retries="2" validDigits="12">` +
      '<Speak>Welcome. Press 1 to hear a message. Press 2 to be connected.</Speak>' +
      '</GetDigits>' +
      '<Speak>We did not get your choice. Goodbye.</Speak>'
    );
  },
  '/menu': (p, base) => {
    log(`call ${p.CallUUID}: pressed ${p.Digits}`);
    if (p.Digits === '1') return '<Speak>Thank you for calling voxgate. Goodbye.</Speak><Hangup/>';
    const target = dialTo.startsWith('sip:')
      ? `<User>${xmlEscape(dialTo)}</User>`
      : `<Number>${xmlEscape(dialTo.replace(/^\+/, ''))}</Number>`;
    log(`call ${p.CallUUID}: dialling ${dialTo}`);
    return (
      '<Speak>Connecting you.</Speak>' +
      `<Dial action="${base}/dialled" method="POST" timeout="20" timeLimit="${dialTimeLimit}">` +
      `${target}</Dial>`
    );
  },
  '/dialled': (p) => {
    log(
      `call ${p.CallUUID}: Dial ended: DialStatus ${p.DialStatus}, B leg ${p.DialBLegUUID}, ` +
        `${p.DialHangupCause}`,
    );
    return p.DialStatus === 'completed'
      ? '<Speak>Your call has ended. Goodbye.</Speak><Hangup/>'
      : '<Speak>Sorry, nobody could take your call. Goodbye.</Speak><Hangup/>';
  },
  '/hangup': (p) => {
    log(`call ${p.CallUUID} ended: ${p.HangupCause ?? p.HangupCauseName}, ${p.Duration} s`);
    return '';
  },
};

const server = createServer((request, response) => {
  const path = new URL(request.url ?? '/', 'http://local').pathname;
  const page = pages[path];
  if (!page) {
    response.writeHead(404).end();
    return;
  }
  void callbackParams(request).then((params) => {
    const xml = page(params, baseUrl());
    response
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(xml ? `<Response>${xml}</Response>` : '');
  });
});

function baseUrl(): string {
  const { port: bound } = server.address() as AddressInfo;
  return setting('public-url', 'IVR_PUBLIC_URL', `http://${host}:${bound}`).replace(/\/+$/, '');
}

server.listen(port, host, () => {
  log(`IVR listening: answer_url ${baseUrl()}/answer, hangup_url ${baseUrl()}/hangup`);
});
process.once('SIGINT', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
