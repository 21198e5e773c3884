import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RawUdpPeer } from '../../support/sip-client.js';
import { runSipp } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/** Calls that reach the gateway: SIPp dials a number whose application runs the call. */
let gw: TestGateway;
let app: ClientApp;
let target: { host: string; port: number };

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
  target = { host: '127.0.0.1', port: gw.gateway.sip.addresses.udp.port };
  const application = await gw.request('POST', `/v1/Account/${gw.main.id}/Application/`, {
    json: {
      app_name: 'front desk',
      answer_url: `${app.baseUrl}/answer`,
      hangup_url: `${app.baseUrl}/hangup`,
    },
  });
  expect(application.status).toBe(201);
  const added = await gw.request('POST', `/v1/Account/${gw.main.id}/Number/`, {
    json: {
      numbers: '14155550111',
      carrier: 'Own SIP',
      region: 'West',
      app_id: application.body.app_id,
    },
  });
  expect(added.status).toBeLessThan(300);
});

afterEach(() => app.reset());

afterAll(async () => {
  await gw.close();
  await app.close();
});

describe('inbound calls to a number', () => {
  it("fetches the number's application, collects the caller's digits, and records the call", async () => {
    app.serve('/answer', {
      body: `<Response><GetDigits action="${app.baseUrl}/digits" timeout="8"><Speak>Enter your code.</Speak></GetDigits><Wait length="10"/></Response>`,
    });
    app.serve('/digits', { body: '<Response><Wait length="10"/></Response>' });
    const result = await runSipp({
      scenario: 'caller-digits.xml',
      target,
      calls: 1,
      extraArgs: ['-s', '14155550111', '-d', '500'],
    });
    expect(result.errors).toEqual([]);
    expect(result.successful).toBe(1);
    expect(app.requestsTo('/answer')[0]?.params).toMatchObject({
      Direction: 'inbound',
      To: '14155550111',
      From: 'harness',
      // An inbound call is answered by its application, so it is still ringing here.
      CallStatus: 'ringing',
    });
    expect(app.requestsTo('/digits')[0]?.params).toMatchObject({ Digits: '42' });
    await until(() => app.requestsTo('/hangup').length > 0);
    const hangup = app.requestsTo('/hangup')[0]!.params;
    expect(hangup).toMatchObject({
      HangupCauseCode: '4000',
      HangupSource: 'Caller',
      CallStatus: 'completed',
    });
    await until(
      async () =>
        (await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${hangup.CallUUID}/`)).status ===
        200,
    );
    const record = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${hangup.CallUUID}/`);
    expect(record.body).toMatchObject({
      call_direction: 'inbound',
      to_number: '14155550111',
      billed_duration: 60,
      total_rate: '0.00850',
    });
  }, 30_000);

  it.each([
    ['busy', 486, 'Busy Line', 'busy'],
    ['rejected', 603, 'Rejected', 'failed'],
  ])(
    'refuses the call unanswered on <Hangup reason="%s"/> (%i), and bills nothing',
    async (reason, status, causeName, callStatus) => {
      app.serve('/answer', { body: `<Response><Hangup reason="${reason}"/></Response>` });
      const result = await runSipp({
        scenario: 'uac-invite.xml',
        target,
        calls: 1,
        extraArgs: ['-s', '14155550111'],
        traceMessages: true,
      });
      expect(result.messages).toContain(`SIP/2.0 ${status} `);
      expect(result.messages).not.toContain('SIP/2.0 200 ');
      await until(() => app.requestsTo('/hangup').length > 0);
      const hangup = app.requestsTo('/hangup')[0]!.params;
      expect(hangup).toMatchObject({
        HangupCauseName: causeName,
        HangupSource: 'Answer XML',
        CallStatus: callStatus,
      });
      await until(
        async () =>
          (await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${hangup.CallUUID}/`)).status ===
          200,
      );
      const record = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${hangup.CallUUID}/`);
      expect(record.body).toMatchObject({ billed_duration: 0, total_amount: '0.00000' });
    },
    20_000,
  );

  it("refuses the caller with 500 when the media worker cannot take the offer's audio, and records why", async () => {
    // The worker refusing the update, as it would for a session it no longer has.
    const media = gw.gateway.media;
    const send = media.send.bind(media);
    media.send = ((command) =>
      command.type === 'updateSession'
        ? Promise.reject(new Error('no media session on this worker'))
        : send(command)) as typeof media.send;
    app.serve('/answer', { body: '<Response><Wait length="10"/></Response>' });
    const caller = await RawUdpPeer.open();
    try {
      caller.sendInvite({
        user: '14155550111',
        port: target.port,
        from: '+14155550123',
        callId: 'refused-offer-1',
      });
      await until(() => caller.finalResponse() !== undefined, 5000);
      expect(caller.finalResponse()!.status).toBe(500);
    } finally {
      caller.close();
      media.send = send;
    }
    await until(() => app.requestsTo('/hangup').length > 0);
    expect(app.requestsTo('/hangup')[0]!.params).toMatchObject({
      Direction: 'inbound',
      HangupCauseName: 'Internal Error',
      HangupSource: 'Error',
      CallStatus: 'failed',
    });
    expect(gw.gateway.media.sessions).toBe(0);
  });

  it('refuses a number nobody holds with 404', async () => {
    const result = await runSipp({
      scenario: 'uac-invite.xml',
      target,
      calls: 1,
      extraArgs: ['-s', '14155550999'],
    });
    expect(result.successful).toBe(0);
    expect(result.failed).toBe(1);
    expect(app.received).toHaveLength(0);
  });
});
