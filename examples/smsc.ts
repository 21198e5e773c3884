/**
 * A local SMSC to try SMS with, no carrier needed: it takes the gateway's SMPP bind, prints
 * every submit_sm it receives (sender, destination, the text decoded from GSM 03.38 or UCS-2,
 * parts of long messages and the whole once joined), answers each with a message id and sends
 * its delivery receipt a moment later. Each line typed on its input, `FROM TO TEXT`, goes to
 * the gateway as an inbound message (a deliver_sm), as a phone's SMS would.
 *
 *   npm run smsc                                   # SMPP on 127.0.0.1:2775, voxgate / secret
 *   npm run smsc -- --receipt UNDELIV              # every receipt says UNDELIV
 *   npm run smsc -- --fail-to 4474,3361 --receipt-delay 3000
 *   echo '447400123456 14155550123 Hello' | npm run smsc   # scripted: one message once bound
 *
 * Settings (flag, else environment): --host SMSC_HOST (127.0.0.1), --port SMSC_PORT (2775),
 * --system-id SMSC_SYSTEM_ID (voxgate), --password SMSC_PASSWORD (secret), --receipt
 * SMSC_RECEIPT (DELIVRD, UNDELIV, EXPIRED, REJECTD, ENROUTE or none), --fail-to SMSC_FAIL_TO
 * (destination prefixes whose receipts say UNDELIV), --receipt-delay SMSC_RECEIPT_DELAY (ms,
 * 1000). It prints the VOXGATE_SMPP_URL to start the gateway with.
 *
 * Like call-in.ts, this is a stand-in for the network rather than an application: it decodes
 * and encodes text with voxgate's own SMS code (src/messaging/sms).
 */
import { createInterface } from 'node:readline';
import { systemScheduler } from '../src/core/scheduler.js';
import { PartAssembler } from '../src/messaging/sms/part-assembler.js';
import { decodeShortMessage, decodeText } from '../src/messaging/sms/short-message-decode.js';
import { concatenationUdh, planSms, smsLengthError } from '../src/messaging/sms/sms-plan.js';
import { now, numberSetting, setting } from './lib/settings.js';
import {
  RECEIPT_STATS,
  SmscServer,
  readSubmit,
  statusName,
  type BindType,
  type PduObject,
  type ReceiptStat,
  type ReceivedSubmit,
  type Session,
} from './lib/smsc-server.js';

const log = (line: string) => console.log(`${now()} ${line}`);

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const host = setting('host', 'SMSC_HOST', '127.0.0.1');
const port = numberSetting('port', 'SMSC_PORT', 2775);
const systemId = setting('system-id', 'SMSC_SYSTEM_ID', 'voxgate');
const password = setting('password', 'SMSC_PASSWORD', 'secret');
const receiptSetting = setting('receipt', 'SMSC_RECEIPT', 'DELIVRD').toUpperCase();
const failTo = setting('fail-to', 'SMSC_FAIL_TO', '')
  .split(',')
  .map((p) => p.trim().replace(/^\+/, ''))
  .filter(Boolean);
const receiptDelayMs = numberSetting('receipt-delay', 'SMSC_RECEIPT_DELAY', 1000);

// SMPP 3.4 5.2.1 and 5.2.4: a bind carries at most 15 characters of system_id and 8 of password.
if (!/^[\x21-\x7e]{1,15}$/.test(systemId))
  fail(`Expected 1 to 15 printable ASCII characters for --system-id but received ${systemId}`);
if (!/^[\x21-\x7e]{0,8}$/.test(password))
  fail('Expected at most 8 printable ASCII characters for --password');
if (receiptSetting !== 'NONE' && !RECEIPT_STATS.includes(receiptSetting as ReceiptStat))
  fail(`Expected ${RECEIPT_STATS.join(', ')} or none for --receipt but received ${receiptSetting}`);
const receiptStat = receiptSetting === 'NONE' ? null : (receiptSetting as ReceiptStat);

const ENCODINGS: Record<number, string> = { 0: 'GSM 03.38', 1: 'IA5', 3: 'Latin-1', 8: 'UCS-2' };
const encodingName = (dataCoding: number) =>
  ENCODINGS[dataCoding]
    ? `${ENCODINGS[dataCoding]} (data_coding ${dataCoding})`
    : `data_coding ${dataCoding}`;

/** SMPP 3.4 5.2.17: bits 1-0 of registered_delivery ask for a receipt. */
const RECEIPT_REQUESTS = ['no receipt', 'receipt requested', 'receipt on failure', 'no receipt'];

/** The SMSC of this tool: prints what it gets and answers as a carrier's would. */
class LocalSmsc extends SmscServer {
  private readonly joiner = new PartAssembler({
    scheduler: systemScheduler,
    timeoutMs: 60_000,
    onComplete: (m) => {
      const missing = m.missing.length ? ` (parts ${m.missing.join(', ')} never came)` : '';
      log(`whole message ${m.key} in ${m.parts} parts${missing}: ${JSON.stringify(m.text)}`);
    },
  });

  constructor() {
    super({ systemId, password });
  }

  start(): Promise<void> {
    return this.listen(port, host);
  }

  protected override bind(session: Session, pdu: PduObject, type: BindType): void {
    super.bind(session, pdu, type);
    const peer = `${session.socket.remoteAddress}:${session.socket.remotePort}`;
    if (this.sessions.has(session)) log(`bind_${type} from ${peer} as ${pdu.system_id}: bound`);
    else log(`bind_${type} from ${peer} as ${pdu.system_id}: refused, wrong system_id or password`);
  }

  protected override accept(session: Session): void {
    super.accept(session);
    session.on('close', () => {
      if (this.bindTypeOf(session)) log(`the ${this.bindTypeOf(session)} bind closed`);
    });
  }

  protected submitted(session: Session, pdu: PduObject): void {
    const submit = readSubmit(pdu, this.newId());
    session.send(pdu.response({ message_id: submit.messageId }));
    this.print(submit);
    const stat = failTo.some((p) => submit.destinationAddr.startsWith(p)) ? 'UNDELIV' : receiptStat;
    const asked = submit.registeredDelivery & 0x03;
    if (stat === null || asked === 0 || asked === 3 || (asked === 2 && stat === 'DELIVRD')) return;
    setTimeout(() => {
      this.sendReceipt(submit.messageId, stat).then(
        (status) =>
          log(
            `receipt ${stat} for ${submit.messageId} (to ${submit.destinationAddr}) sent, ` +
              `answered ${statusName(status)}`,
          ),
        (error: Error) => log(`receipt for ${submit.messageId} not sent: ${error.message}`),
      );
    }, receiptDelayMs);
  }

  private print(submit: ReceivedSubmit): void {
    const { sourceAddr: from, destinationAddr: to, dataCoding } = submit;
    let text: string;
    let part = '';
    let concat = submit.sar;
    try {
      if (submit.messagePayload) text = decodeText(submit.messagePayload, dataCoding);
      else {
        const decoded = decodeShortMessage(
          submit.shortMessage,
          dataCoding,
          !!(submit.esmClass & 0x40),
        );
        text = decoded.text;
        concat ??= decoded.concat;
        if (decoded.concat) part = ` (UDH ref ${decoded.concat.reference})`;
      }
    } catch (error) {
      text = `<${(error as Error).message}: ${submit.shortMessage.toString('hex')}>`;
    }
    if (submit.sar) part = ` (SAR ref ${submit.sar.reference})`;
    if (concat) part = `, part ${concat.sequence}/${concat.total}${part}`;
    log(
      `submit_sm from ${from} to ${to}${part}, ${encodingName(dataCoding)}, ` +
        `${RECEIPT_REQUESTS[submit.registeredDelivery & 0x03]}: ${JSON.stringify(text)} ` +
        `-> message_id ${submit.messageId}`,
    );
    if (concat) this.joiner.add({ key: `from ${from} to ${to}`, ...concat, text });
  }
}

let reference = 0;

/** Sends `text` from `from` to `to` as one deliver_sm, or in UDH parts when it is long. */
async function sendInbound(smsc: LocalSmsc, from: string, to: string, text: string) {
  const tooLong = smsLengthError(text);
  if (tooLong) return log(`not sent: ${tooLong}`);
  const plan = planSms(text);
  reference = (reference + 1) & 0xff;
  for (const [k, payload] of plan.parts.entries()) {
    const long = plan.parts.length > 1;
    const status = await smsc
      .inbound({
        from,
        to,
        dataCoding: plan.dataCoding,
        esmClass: long ? 0x40 : 0,
        shortMessage: long
          ? Buffer.concat([concatenationUdh(reference, plan.parts.length, k + 1, false), payload])
          : payload,
      })
      .catch((error: Error) => error.message);
    const part = long ? `, part ${k + 1}/${plan.parts.length}` : '';
    const answer = typeof status === 'number' ? `answered ${statusName(status)}` : status;
    log(`deliver_sm from ${from} to ${to}${part}, ${encodingName(plan.dataCoding)}: ${answer}`);
  }
}

const LINE = /^>?\s*\+?([0-9]{1,20})\s+\+?([0-9]{1,20})\s+(.+)$/;
const USAGE =
  'type FROM TO TEXT and Enter to send a message to the gateway, e.g. 447400123456 14155550123 Hello';

const smsc = new LocalSmsc();
await smsc
  .start()
  .catch((error: NodeJS.ErrnoException) =>
    fail(
      `cannot listen on ${host}:${port} (${error.code ?? error.message}); choose another --port`,
    ),
  );
const smppUrl = smsc.url('', host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
log(
  `SMSC listening on ${host}:${smsc.port}, system_id ${systemId}; receipts ` +
    `${receiptStat ?? 'none'}${failTo.length ? ` (UNDELIV to ${failTo.join(', ')})` : ''} after ${receiptDelayMs} ms`,
);
console.log(`VOXGATE_SMPP_URL=${smppUrl}`);
log(USAGE);

// Lines are taken one at a time, and a line read before the gateway binds waits for it, so
// that `echo ... | npm run smsc` works when started before the gateway.
const lines = createInterface({ input: process.stdin, terminal: false });
let queue = Promise.resolve();
lines.on('line', (line) => {
  queue = queue.then(() => handleLine(line.trim()));
});

async function handleLine(line: string): Promise<void> {
  if (line === '') return;
  const match = LINE.exec(line);
  if (!match) return log(line === 'help' ? USAGE : `not understood: ${USAGE}`);
  if (smsc.sessions.size === 0)
    log(`waiting for a gateway to bind: start voxgate with VOXGATE_SMPP_URL=${smppUrl}`);
  while (smsc.sessions.size === 0) await new Promise((resolve) => setTimeout(resolve, 200));
  await sendInbound(smsc, match[1]!, match[2]!, match[3]!);
}

const stop = () => void smsc.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
