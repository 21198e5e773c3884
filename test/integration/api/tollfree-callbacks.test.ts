import { afterEach, beforeEach, expect, it } from 'vitest';
import { CallbackDelivery, type CallbackJob } from '../../../src/callbacks/callback-delivery.js';
import { TimerRetryQueue } from '../../../src/callbacks/timer-retry-queue.js';
import { newAuthToken } from '../../../src/core/ids.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import type { TollfreeVerificationRecord } from '../../../src/state/records.js';
import { createState } from '../../../src/state/state.js';
import { TollfreeVerifications } from '../../../src/tollfree/verifications.js';
import { ClientApp, expectValidSignatures } from '../../support/client-app.js';

// The retry delays are real minutes: the callback retry queue runs on a scheduler moved by hand.
const tokens = { accountToken: newAuthToken(), mainToken: newAuthToken() };
let client: ClientApp;
let callbacks: CallbackDelivery;
let time: ManualScheduler;

beforeEach(async () => {
  client = await ClientApp.start();
  time = new ManualScheduler(Date.now());
  callbacks = new CallbackDelivery({
    keys: { keysFor: async (id) => (id === 'MA1' ? tokens : null) },
    queue: new TimerRetryQueue<CallbackJob>(time),
    log: { info: () => undefined, warn: () => undefined },
  });
});
afterEach(async () => {
  await callbacks.close();
  await client.close();
});

it('sends each move of a request signed, and again 60 s later when the receiver refused it', async () => {
  const state = createState(new EmbeddedStore(null));
  const tollfree = new TollfreeVerifications({ state, callbacks, clock: time });
  const now = time.now();
  const request: TollfreeVerificationRecord = {
    account: 'MA1',
    subaccount: null,
    created: now,
    modified: now,
    uuid: '5ec4c8c3-9b2b-4a57-8b6c-0b8d1f8e2c11',
    profile_uuid: 'p1',
    number: '18005550100',
    usecase: '2FA',
    usecase_summary: 'codes',
    message_sample: 'code 1',
    optin_image_url: 'https://acme.example.com/optin.png',
    optin_type: 'WEB_FORM',
    volume: '1,000',
    additional_information: '',
    extra_data: '',
    status: 'SUBMITTED',
    rejection_reason: '',
    error_message: '',
    callback_url: `${client.baseUrl}/tfv`,
    callback_method: 'POST',
    history: [{ status: 'SUBMITTED', time: now, error_message: '', rejection_reason: '' }],
  };
  await state.tollfreeVerifications.create(request);
  client.replyWith(500);
  await tollfree.move(request, 'APPROVED');
  await client.waitForRequests(1);
  await new Promise((r) => setTimeout(r, 100)); // the refusal is read and its retry scheduled
  time.advance(59_999);
  await new Promise((r) => setTimeout(r, 100));
  expect(client.requestsTo('/tfv')).toHaveLength(1);
  time.advance(1);
  await client.waitForRequests(2);
  const [first, second] = client.requestsTo('/tfv');
  for (const attempt of [first!, second!]) {
    expect(attempt.params).toEqual({
      uuid: request.uuid,
      number: '18005550100',
      status: 'APPROVED',
      error_message: '',
    });
    expectValidSignatures(attempt, tokens);
  }
});
