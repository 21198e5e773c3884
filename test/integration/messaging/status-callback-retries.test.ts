import { Registry } from 'prom-client';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { TimerRetryQueue } from '../../../src/callbacks/timer-retry-queue.js';
import type { CallbackJob } from '../../../src/callbacks/callback-delivery.js';
import { newAuthToken } from '../../../src/core/ids.js';
import { selfHostedGuard } from '../../../src/core/outbound-guard.js';
import { ManualScheduler, systemScheduler } from '../../../src/core/scheduler.js';
import type { SendJob } from '../../../src/messaging/message-pipeline.js';
import { MessagingService } from '../../../src/messaging/messaging-service.js';
import { MemoryMediaStore } from '../../../src/messaging/mms/media-store.js';
import { parseSendRequest } from '../../../src/messaging/send-request.js';
import { SmsCarriers } from '../../../src/messaging/sms-carriers.js';
import { parseSmppCarriers } from '../../../src/messaging/smpp/carrier-config.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import { createState } from '../../../src/state/state.js';
import { DEFAULT_MESSAGE_RATE_DECK } from '../../../src/config/config.js';
import { ClientApp, expectValidSignatures, paramsOf } from '../../support/client-app.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';

// The message status callback retry delays (60, 120 and 240 s) are real minutes: the callback
// retry queue runs on a scheduler this test moves by hand, everything else on real time.
const tokens = { accountToken: newAuthToken(), mainToken: newAuthToken() };
const ACCOUNT = 'MAVOXGATERETRYTEST01';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

let smsc: SmscSimulator;
let client: ClientApp;
let messaging: MessagingService;
let retryTime: ManualScheduler;

beforeEach(async () => {
  [smsc, client] = await Promise.all([
    SmscSimulator.start({ autoReceipt: null }),
    ClientApp.start(),
  ]);
  retryTime = new ManualScheduler(Date.now());
  messaging = new MessagingService({
    state: createState(new EmbeddedStore()),
    keys: { keysFor: async (id) => (id === ACCOUNT ? tokens : null) },
    sendQueue: new TimerRetryQueue<SendJob>(),
    callbackQueue: new TimerRetryQueue<CallbackJob>(retryTime),
    mainAccount: ACCOUNT,
    carriers: (handlers) =>
      new SmsCarriers(parseSmppCarriers(smsc.url()), {
        ...handlers,
        scheduler: systemScheduler,
        log: quiet,
        partTimeoutMs: 60_000,
      }),
    rateDeck: DEFAULT_MESSAGE_RATE_DECK,
    smartEncoding: false,
    graph: null,
    chatAppRetryMs: 30_000,
    mediaStore: new MemoryMediaStore(),
    mm7: null,
    guard: selfHostedGuard(),
    scheduler: systemScheduler,
    log: quiet,
    registry: new Registry(),
  });
  await messaging.start();
  await smsc.waitForBind();
});

afterEach(async () => {
  await messaging.close();
  await Promise.all([smsc.stop(), client.close()]);
});

const settle = () => new Promise((resolve) => setTimeout(resolve, 150));

it('retries a status callback the receiver refused twice after 60 and 120 s, and stops once it is taken', async () => {
  // The receiver refuses the first two attempts of the "queued" callback.
  let refused = 0;
  client.serve('/status', (request) => {
    const queued = paramsOf(request).Status === 'queued';
    return queued && refused++ < 2 ? { status: 500, body: '' } : { status: 200, body: '' };
  });
  const [uuid] = await messaging.pipeline.accept(
    { account: ACCOUNT, subaccount: null, authId: ACCOUNT, requesterIp: null },
    parseSendRequest({
      src: 'VOXGATE',
      dst: '447400123456',
      text: 'retry me',
      url: `${client.baseUrl}/status`,
    }),
  );
  const queuedAttempts = () =>
    client.requestsTo('/status').filter((r) => r.params.Status === 'queued');
  await client.waitForRequests(2); // queued (refused) and sent (taken)
  await settle(); // the refusal is read and its retry scheduled
  expect(queuedAttempts()).toHaveLength(1);

  retryTime.advance(59_999);
  await settle();
  expect(queuedAttempts()).toHaveLength(1);
  retryTime.advance(1);
  await client.waitForRequests(3);
  await settle();

  retryTime.advance(119_999);
  await settle();
  expect(queuedAttempts()).toHaveLength(2);
  retryTime.advance(1);
  await client.waitForRequests(4);
  await settle();

  retryTime.advance(240_000);
  await settle();
  const attempts = queuedAttempts();
  expect(attempts).toHaveLength(3);
  for (const attempt of attempts) {
    expect(attempt.params).toMatchObject({ MessageUUID: uuid, Status: 'queued', Sequence: '1' });
    expectValidSignatures(attempt, tokens);
  }
  const nonces = attempts.map((a) => a.headers['x-service-signature-v3-nonce']);
  expect(new Set(nonces).size).toBe(3);
});
