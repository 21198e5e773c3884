import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signatureV2 } from '../../../src/callbacks/signature.js';
import { muLawDecode, muLawEncode } from '../../../src/media/codec/g711.js';
import { placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { chunks, concat, strongestFrequency, tone } from '../../support/signal.js';
import type { SippUas } from '../../support/sipp.js';
import { StreamServer } from '../../support/stream-server.js';
import { until } from '../../support/wait.js';

/**
 * The answer XML's Stream on a real call: the gateway dials a SIPp carrier whose media is a
 * plain RTP peer, the XML forks the call to an echo bot (a WebSocket server that sends back
 * what it hears as playAudio), and the caller hears its own tone come back.
 */
let gw: TestGateway;
let app: ClientApp;
let bot: StreamServer;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  app = await ClientApp.start();
  gw = await startGateway({ listen: true });
  bot = await StreamServer.start();
});

afterEach(async () => {
  await Promise.all(carriers.splice(0).map((c) => c.stop()));
  await Promise.all(peers.splice(0).map((p) => p.close()));
  app.reset();
});

afterAll(async () => {
  await gw?.close();
  await app?.close();
  await bot?.close();
});

/**
 * Places a call to a SIPp carrier (its media a plain RTP peer) whose answer XML is `xml`;
 * resolves with the peer and the stream connection the XML opened on the bot.
 */
async function callAnswered(xml: string) {
  const { media: phone } = await placeCarrierCall({ gw, app, carriers, peers }, xml, {
    hangup_url: `${app.baseUrl}/hangup`,
  });
  const ws = await bot.connection(bot.connections.length);
  return { phone, ws };
}

describe('the answer XML Stream', () => {
  it('echoes the caller through a bidirectional stream, keeps the call while it lasts, then runs on', async () => {
    const { phone, ws } = await callAnswered(
      '<Response>' +
        `<Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-l16;rate=16000" extraHeaders="team=blue" statusCallbackUrl="${app.baseUrl}/status">${bot.url}</Stream>` +
        '<Hangup/>' +
        '</Response>',
    );
    // The echo bot: every inbound frame goes back as playAudio.
    ws.socket.on('message', (data) => {
      const event = JSON.parse(String(data)) as { event: string; media?: { payload: string } };
      if (event.event !== 'media') return;
      ws.send({
        event: 'playAudio',
        media: { contentType: 'audio/x-l16', sampleRate: 16000, payload: event.media!.payload },
      });
    });
    await until(() => phone.received.length > 0, 10_000);
    const gatewayPort = phone.received[0]!.from.port;
    await phone.stream(
      gatewayPort,
      [...chunks(tone(8000, 1004, 1.5, 8000), [160])].map(muLawEncode),
      {
        payloadType: 0,
      },
    );
    const heard = concat(
      phone.received.filter((p) => p.payloadType === 0).map((p) => muLawDecode(p.payload)),
    );
    // The tone came back through the stream: 2000 samples from its middle.
    const last = heard.subarray(heard.length - 6000, heard.length - 4000);
    expect(Math.abs(strongestFrequency(last, 8000, 10) - 1004)).toBeLessThan(20);
    expect(ws.of('start')[0]).toMatchObject({
      start: { tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-l16', sampleRate: 16000 } },
      extra_headers: 'team=blue',
    });
    expect(ws.violations).toEqual([]);
    // The upgrade request was signed with the account's token, as callbacks are.
    const nonce = String(ws.request.headers['x-service-signature-v2-nonce']);
    expect(nonce).toMatch(/^\d{20}$/);
    expect(ws.request.headers['x-service-signature-v2']).toBe(
      signatureV2(gw.main.token, bot.url, nonce),
    );
    // Both ways were timed: packets to media events, playAudio to RTP (reported each second).
    const counted = async (name: string) => {
      const text = (await gw.request('GET', '/metrics', { as: null })).text;
      return Number(new RegExp(`^${name}_count (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    };
    await until(async () => (await counted('voxgate_stream_inbound_latency_seconds')) >= 50, 5000);
    await until(async () => (await counted('voxgate_stream_playout_latency_seconds')) >= 1, 5000);
    const callUuid = (ws.of('start')[0]!.start as { callId: string }).callId;

    // The server goes away: DroppedStream, and the XML runs on (Hangup).
    ws.socket.close(1001, 'bye');
    await until(() => app.requestsTo('/hangup').length === 1, 10_000);
    // The DroppedStream callback goes out moments before the hangup callback, each its own
    // request: the hangup's may arrive first.
    await until(() => app.requestsTo('/status').length === 2, 10_000);
    const statuses = app.requestsTo('/status').map((r) => [r.params.Event, r.params.Status]);
    expect(statuses).toEqual([
      ['StartStream', 'connected'],
      ['DroppedStream', 'failed'],
    ]);
    expect(app.requestsTo('/hangup')[0]!.params.HangupCauseCode).toBe('4000');
    const list = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${callUuid}/Stream/`);
    expect(list.body.objects).toHaveLength(1);
    const streamId = list.body.objects[0].stream_id as string;
    const record = await gw.request(
      'GET',
      `/v1/Account/${gw.main.id}/Call/${callUuid}/Stream/${streamId}/`,
    );
    expect(record.body).toMatchObject({
      bidirectional: true,
      audio_track: 'inbound',
      content_type: 'audio/x-l16;rate=16000',
      rounded_bill_duration: 60,
      billed_amount: '0.00300',
    });
    expect(record.body.end_time).not.toBeNull();
    expect(record.body.bill_duration).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it('ends its streams when the call is hung up: stop on the socket, StopStream, a closed record', async () => {
    const { ws } = await callAnswered(
      `<Response><Stream keepCallAlive="true" statusCallbackUrl="${app.baseUrl}/status">${bot.url}</Stream></Response>`,
    );
    await until(() => ws.of('start').length === 1, 10_000);
    const callUuid = (ws.of('start')[0]!.start as { callId: string }).callId;
    await until(() => app.requestsTo('/status').length === 1);
    expect((await gw.request('DELETE', `/v1/Account/${gw.main.id}/Call/${callUuid}/`)).status).toBe(
      204,
    );
    await until(() => ws.closed !== null, 10_000);
    expect(ws.events.at(-1)).toMatchObject({ event: 'stop' });
    await until(() => app.requestsTo('/status').length === 2, 10_000);
    expect(app.requestsTo('/status').map((r) => [r.params.Event, r.params.Status])).toEqual([
      ['StartStream', 'connected'],
      ['StopStream', 'stopped'],
    ]);
    const list = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${callUuid}/Stream/`);
    expect(list.body.objects).toHaveLength(1);
    expect(list.body.objects[0].end_time).not.toBeNull();
  }, 30_000);
});
