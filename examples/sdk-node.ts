/**
 * The official Node SDK (npm `plivo`) driving voxgate: read the account, create an
 * application and an endpoint on it, send an SMS, place a call, list live calls and call
 * records, then delete the endpoint and the application.
 *
 * The client comes from voxgateSdkClient (src/sdk/plivo-client.ts, `voxgate/sdk`): the SDK's
 * own client, with every request sent to the gateway. The SDK's `url` option alone is not
 * enough: voice requests (calls, live calls, applications, endpoints) would go to
 * https://api.plivo.com with the account's credentials.
 *
 *   npm run example:sdk-node -- --from 14155550123 --to sip:alice@127.0.0.1:5070 \
 *     --sms-to 447400123456
 *
 * Without --to no call is placed (records are still listed); without --sms-to no SMS is sent.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { voxgateSdkClient } from '../src/sdk/plivo-client.js';
import { credentials, flag, gatewayUrl, setting } from './lib/settings.js';

const log = (line: string) => console.log(line);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

type Client = ReturnType<typeof voxgateSdkClient>;

/** Serves the call's answer XML from this process for the length of the example. */
async function answerServer(): Promise<{ url: string; close: () => void }> {
  const server = createServer((request, response) => {
    request.resume();
    response
      .writeHead(200, { 'content-type': 'application/xml' })
      .end('<Response><Speak>Hello from the Node SDK.</Speak><Wait length="2"/></Response>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/answer`, close: () => server.close() };
}

async function placeCall(client: Client, from: string, to: string, answerUrl: string) {
  const call = await client.calls.create(from, to, answerUrl, { answerMethod: 'POST' });
  log(`call: ${call.message}, request ${call.requestUuid}`);
  await pause(2000);
  // The live listing names the calls; each one's details are a request of its own.
  const live = (await client.calls.listLiveCalls({})) as { callUuid: string }[];
  log(`live calls: ${live.length}`);
  for (const { callUuid } of live) {
    const details = (await client.calls.getLiveCall(callUuid)) as LiveCall;
    log(`  ${callUuid} ${details.from} -> ${details.to} ${details.callStatus}`);
  }
  // The call's record is written when it ends (the answer XML lasts about 4 s).
  await pause(4000);
}

async function main(): Promise<void> {
  const { authId, authToken } = credentials();
  const from = setting('from', 'SDK_FROM', '14155550123');
  const to = flag('to') ?? process.env.SDK_TO;
  const smsTo = flag('sms-to') ?? process.env.SDK_SMS_TO;
  const client = voxgateSdkClient({ url: gatewayUrl(), authId, authToken });

  const account = (await client.accounts.get()) as { name: string; accountType: string };
  log(`account: ${account.name} (${account.accountType})`);

  const answers = await answerServer();
  const application = await client.applications.create(`sdk-node ${process.pid}`, {
    answerUrl: answers.url,
  });
  log(`application: ${application.message} ${application.appId}`);
  const endpoint = await client.endpoints.create(
    `sdknode${process.pid}`,
    'Sdk-node-Pass1',
    'sdk_node',
    application.appId,
  );
  log(`endpoint: ${endpoint.message} ${endpoint.username}`);

  if (smsTo) {
    const sent = await client.messages.create(from, smsTo, 'Hello from the Node SDK');
    log(`SMS: ${sent.message} ${JSON.stringify(sent.messageUuid)}`);
  } else {
    log('SMS: skipped (give --sms-to)');
  }

  if (to) await placeCall(client, from, to, answers.url);
  else log('calls: placing none (give --to, a number or a SIP URI), listing only');
  answers.close();

  const records = (await client.calls.list({ limit: 5 })) as unknown as CallRecord[];
  log(`call records: ${records.length}`);
  for (const r of records) {
    log(
      `  ${r.callUuid} ${r.fromNumber} -> ${r.toNumber} ${r.callState ?? ''} ${r.hangupCauseName ?? ''}`,
    );
  }

  await client.endpoints.delete(endpoint.endpointId);
  await client.applications.delete(application.appId);
  log('deleted the endpoint and the application');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
