import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { until } from '../../support/wait.js';

/**
 * Which application an inbound SMS goes to: the number's own, else the account's default
 * number application (`default_number_app`), as a call to the number is routed.
 */
const OWN = '14155550140';
const BARE = '14155550141';
const UK = '447400123456';

let smsc: SmscSimulator;
let gw: TestGateway;
let client: ClientApp;
let base: string;

beforeAll(async () => {
  client = await ClientApp.start();
  smsc = await SmscSimulator.start();
  gw = await startGateway({ env: { VOXGATE_SMPP_URL: smsc.url('enquire_link=1') } });
  base = `/v1/Account/${gw.main.id}`;
  const app = async (name: string, path: string, isDefault: boolean) =>
    (
      await gw.request('POST', `${base}/Application/`, {
        json: {
          app_name: name,
          answer_url: `${client.baseUrl}/answer`,
          message_url: `${client.baseUrl}${path}`,
          default_number_app: isDefault,
        },
      })
    ).body.app_id as string;
  await app('default', '/default', true);
  const own = await app('own', '/own', false);
  await gw.request('POST', `${base}/Number/`, {
    json: { numbers: OWN, carrier: 'c', region: 'r', app_id: own },
  });
  await gw.request('POST', `${base}/Number/`, {
    json: { numbers: BARE, carrier: 'c', region: 'r' },
  });
  await smsc.waitForBind();
});

afterAll(async () => {
  await gw?.close();
  await smsc?.stop();
  await client?.close();
});

describe('inbound SMS routing to an application', () => {
  it("goes to the number's own application, else to the default number application", async () => {
    expect(await smsc.inbound({ from: UK, to: OWN, shortMessage: Buffer.from('to own') })).toBe(0);
    expect(await smsc.inbound({ from: UK, to: BARE, shortMessage: Buffer.from('to bare') })).toBe(
      0,
    );
    await client.waitForRequests(2);
    expect(client.requestsTo('/own').map((r) => [r.params.To, r.params.Text])).toEqual([
      [OWN, 'to own'],
    ]);
    expect(client.requestsTo('/default').map((r) => [r.params.To, r.params.Text])).toEqual([
      [BARE, 'to bare'],
    ]);
    const inbound = async () =>
      (await gw.request('GET', `${base}/Message/?message_direction=inbound`)).body.objects as {
        to_number: string;
        message_state: string;
      }[];
    await until(async () => (await inbound()).every((m) => m.message_state === 'delivered'));
    expect((await inbound()).map((m) => m.to_number).sort()).toEqual([OWN, BARE]);
  });
});
