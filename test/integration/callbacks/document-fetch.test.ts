import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackDelivery } from '../../../src/callbacks/callback-delivery.js';
import { TimerRetryQueue } from '../../../src/callbacks/timer-retry-queue.js';
import { newAuthId, newAuthToken } from '../../../src/core/ids.js';
import { ClientApp, expectValidSignatures } from '../../support/client-app.js';
import { freePort } from '../../support/free-port.js';
import { AccountKeys } from './delivery-events.js';

/** Answer XML and action URLs: one signed request whose body comes back, size-limited. */
const accountId = newAuthId('SA');
const tokens = { accountToken: newAuthToken(), mainToken: newAuthToken() };
let app: ClientApp;
let delivery: CallbackDelivery;

beforeAll(async () => {
  app = await ClientApp.start();
  const keys = new AccountKeys();
  keys.accounts.set(accountId, tokens);
  delivery = new CallbackDelivery({ keys, queue: new TimerRetryQueue() });
});

afterAll(async () => {
  await delivery.close();
  await app.close();
});

describe('fetchDocument', () => {
  it('returns the body of a signed POST', async () => {
    app.serve('/answer', { body: '<Response><Hangup/></Response>' });
    const fetched = await delivery.fetchDocument({
      url: `${app.baseUrl}/answer`,
      method: 'POST',
      params: { CallUUID: 'c1', Event: 'StartApp' },
      accountId,
    });
    expect(fetched).toEqual({
      ok: true,
      status: 200,
      body: '<Response><Hangup/></Response>',
      contentType: 'text/xml',
    });
    const [request] = app.requestsTo('/answer');
    expect(request!.params).toEqual({ CallUUID: 'c1', Event: 'StartApp' });
    expectValidSignatures(request!, tokens);
  });

  it('refuses a body over 100 KB, and reports HTTP errors and unreachable hosts', async () => {
    app.serve('/big', { body: `<Response>${' '.repeat(110 * 1024)}</Response>` });
    app.serve('/missing', { status: 404, body: 'no' });
    const ask = (url: string) =>
      delivery.fetchDocument({ url, method: 'GET', params: {}, accountId, timeoutMs: 2000 });
    expect(await ask(`${app.baseUrl}/big`)).toMatchObject({
      ok: false,
      error: 'the document is larger than 102400 bytes',
    });
    expect(await ask(`${app.baseUrl}/missing`)).toEqual({
      ok: false,
      status: 404,
      error: 'HTTP 404',
    });
    expect(await ask(`http://127.0.0.1:${await freePort()}/answer`)).toEqual({
      ok: false,
      error: 'ECONNREFUSED',
    });
  });
});
