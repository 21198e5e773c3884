/**
 * The official Node SDK (npm `plivo`) driving voxgate: send an SMS, place a call, list live
 * calls and call records.
 *
 * The SDK's `url` option is the account's base URL, and every request outside voice uses it
 * (messages here). Voice requests (calls, and applications and endpoints) go to
 * https://api.plivo.com whatever `url` says: they reach voxgate through an HTTPS proxy that
 * takes that host, such as examples/sdk-bridge.ts, given to the SDK's `proxy` option (or
 * HTTPS_PROXY), with the proxy's certificate authority trusted by the process
 * (NODE_EXTRA_CA_CERTS, read when Node starts).
 *
 *   npm run example:sdk-bridge     # in another terminal
 *   NODE_EXTRA_CA_CERTS=data/sdk-bridge/ca.pem npm run example:sdk-node -- \
 *     --proxy http://127.0.0.1:8043 --from 14155550123 --to sip:alice@127.0.0.1:5070 \
 *     --sms-to 447400123456
 *
 * Without --proxy only the SMS is sent, and the voice steps say why they were skipped.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as plivo from 'plivo';
import { credentials, flag, gatewayUrl, setting } from './lib/settings.js';

const log = (line: string) => console.log(line);

/** The fields of a live call printed here (the SDK types the list loosely). */
interface LiveCall {
  callUuid: string;
  from: string;
  to: string;
  callStatus: string;
}

/** The fields of a call record printed here. */
interface CallRecord {
  callUuid: string;
  fromNumber: string;
  toNumber: string;
  callState?: string;
  hangupCauseName?: string;
}

async function main(): Promise<void> {
  const { authId, authToken } = credentials();
  const proxy = flag('proxy') ?? process.env.HTTPS_PROXY;
  const from = setting('from', 'SDK_FROM', '14155550123');
  const to = flag('to') ?? process.env.SDK_TO;
  const smsTo = flag('sms-to') ?? process.env.SDK_SMS_TO;

  const client = new plivo.Client(authId, authToken, {
    // Every request outside voice: the account's base URL on voxgate.
    url: `${gatewayUrl()}/v1/Account/${authId}`,
    // Voice requests: https://api.plivo.com, through this proxy.
    ...(proxy ? { proxy } : {}),
  });

  if (smsTo) {
    const sent = await client.messages.create(from, smsTo, 'Hello from the Node SDK');
    log(`SMS: ${sent.message} ${JSON.stringify(sent.messageUuid)}`);
  } else {
    log('SMS: skipped (give --sms-to)');
  }

  if (!proxy) {
    log(
      'calls: skipped: the SDK sends them to https://api.plivo.com; give --proxy (README, Official SDKs)',
    );
    return;
  }
  if (!to) {
    log('calls: placing none (give --to, a number or a SIP URI), listing only');
  } else {
    // The call's answer XML, served by this process for the length of the example.
    const answers = createServer((request, response) => {
      request.resume();
      response
        .writeHead(200, { 'content-type': 'application/xml' })
        .end('<Response><Speak>Hello from the Node SDK.</Speak><Wait length="2"/></Response>');
    });
    await new Promise<void>((resolve) => answers.listen(0, '127.0.0.1', resolve));
    const answerUrl = `http://127.0.0.1:${(answers.address() as AddressInfo).port}/answer`;
    const call = await client.calls.create(from, to, answerUrl, { answerMethod: 'POST' });
    log(`call: ${call.message}, request ${call.requestUuid}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    // The live listing names the calls; each one's details are a request of its own.
    const live = (await client.calls.listLiveCalls({})) as { callUuid: string }[];
    log(`live calls: ${live.length}`);
    for (const { callUuid } of live) {
      const details = (await client.calls.getLiveCall(callUuid)) as LiveCall;
      log(`  ${callUuid} ${details.from} -> ${details.to} ${details.callStatus}`);
    }
    // The call's record is written when it ends (the answer XML above lasts about 4 s).
    await new Promise((resolve) => setTimeout(resolve, 4000));
    answers.close();
  }
  const records = (await client.calls.list({ limit: 5 })) as unknown as CallRecord[];
  log(`call records: ${records.length}`);
  for (const r of records) {
    log(
      `  ${r.callUuid} ${r.fromNumber} -> ${r.toNumber} ${r.callState ?? ''} ${r.hangupCauseName ?? ''}`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
