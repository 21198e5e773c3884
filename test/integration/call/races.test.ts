import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../support/prng.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { runSipp, startSippUas } from '../../support/sipp.js';
import { sleep, until } from '../../support/wait.js';

/**
 * CANCEL and BYE racing every step of a call, from both sides: afterwards no call is live,
 * no media session (so no RTP port) is open, and every call that reached the gateway has its
 * record.
 */
let gw: TestGateway;
let app: ClientApp;
let target: { host: string; port: number };
const viewer = () => ({ authId: gw.main.id, tenant: gw.main.id, isMain: true });

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
  target = { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port };
  const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
    json: {
      app_name: 'race',
      answer_url: `${app.baseUrl}/inbound`,
      hangup_url: `${app.baseUrl}/hangup`,
    },
  });
  await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
    json: {
      numbers: '14155550177',
      carrier: 'Own SIP',
      region: 'West',
      app_id: application.body.app_id,
    },
  });
});

afterAll(async () => {
  await gw.close();
  await app.close();
});

async function nothingLeft(expectedRecords: number) {
  await until(() => gw.gateway.calls.liveCalls(viewer()).length === 0, 20_000);
  await until(() => gw.gateway.media.sessions === 0, 5000);
  await until(
    async () => (await gw.gateway.state.calls.all(gw.main.id)).length >= expectedRecords,
    5000,
  );
  expect((await gw.gateway.state.calls.all(gw.main.id)).length).toBe(expectedRecords);
}

describe('races', () => {
  it('cancels of outbound calls at random moments, ringing or answered, leave nothing behind', async () => {
    const random = seededRandom(11);
    const media = await RtpPeer.open();
    const ringing = await startSippUas({ scenario: 'carrier-no-answer.xml' });
    const answering = await startSippUas({
      scenario: 'carrier-answer.xml',
      variables: { rtp_port: String(media.port) },
    });
    app.serve('/answer', {
      body: '<Response><Speak>One moment.</Speak><Wait length="5"/></Response>',
    });
    const before = (await gw.gateway.state.calls.all(gw.main.id)).length;
    const placed: Promise<void>[] = [];
    for (let i = 0; i < 24; i++) {
      const carrier = i % 2 === 0 ? ringing : answering;
      placed.push(
        (async () => {
          const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
            json: {
              from: '+14155550100',
              to: `sip:race${i}@127.0.0.1:${carrier.port}`,
              answer_url: `${app.baseUrl}/answer`,
            },
          });
          expect(res.status).toBe(201);
          await sleep(Math.floor(random() * 400));
          const cancel = await gw.request(
            'DELETE',
            `/v1/Account/${gw.main.id}/Request/${res.body.request_uuid}/`,
          );
          // 404 only when the call had already ended on its own.
          expect([204, 404]).toContain(cancel.status);
        })(),
      );
      await sleep(15);
    }
    await Promise.all(placed);
    await nothingLeft(before + 24);
    await Promise.all([ringing.stop(), answering.stop()]);
    await media.close();
  }, 60_000);

  it('CANCELs from callers at random moments of routing, early media and a slow application', async () => {
    app.serve('/inbound', {
      delayMs: 100,
      body: '<Response><PreAnswer><Wait length="3"/></PreAnswer><Speak>Hi.</Speak></Response>',
    });
    const before = (await gw.gateway.state.calls.all(gw.main.id)).length;
    const result = await runSipp({
      scenario: 'caller-cancel.xml',
      target,
      calls: 20,
      rate: 20,
      // A 180 or 183 arriving during the random pause is not a reason to abort the call.
      extraArgs: ['-s', '14155550177', '-default_behaviors', 'all,-abortunexp'],
    });
    expect(result.successful).toBe(20);
    await nothingLeft(before + 20);
  }, 60_000);

  it('BYEs from callers the moment the call is answered, while its application starts', async () => {
    app.serve('/inbound', {
      delayMs: 50,
      body: '<Response><Speak>Hello there.</Speak><Wait length="5"/></Response>',
    });
    const before = (await gw.gateway.state.calls.all(gw.main.id)).length;
    const result = await runSipp({
      scenario: 'uac-invite.xml',
      target,
      calls: 20,
      rate: 20,
      extraArgs: ['-s', '14155550177', '-d', '0'],
    });
    expect(result.successful).toBe(20);
    await nothingLeft(before + 20);
  }, 60_000);
});
