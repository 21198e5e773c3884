import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { RtpPeer } from '../../support/rtp-peer.js';
import { startSippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/** A whole call on a gateway whose state is in redis-server: the record lands there. */
let redis: RedisServer;
let gw: TestGateway;
let app: ClientApp;

beforeAll(async () => {
  [redis, app] = await Promise.all([startRedis(), ClientApp.start()]);
  gw = await startGateway({ listen: true, redisUrl: redis.url });
});

afterAll(async () => {
  await gw?.close();
  await app?.close();
  await redis?.stop();
});

describe('calls on Redis', () => {
  it('places a call and keeps its record in Redis, listed and retrievable', async () => {
    const media = await RtpPeer.open();
    const uas = await startSippUas({
      scenario: 'carrier-answer.xml',
      variables: { rtp_port: String(media.port) },
    });
    try {
      app.serve('/answer', {
        body: '<Response><Speak>Stored in Redis.</Speak><Hangup/></Response>',
      });
      const res = await gw.request('POST', `/v1/Account/${gw.main.id}/Call/`, {
        json: {
          from: '+14155550100',
          to: `sip:redis@127.0.0.1:${uas.port}`,
          answer_url: `${app.baseUrl}/answer`,
          hangup_url: `${app.baseUrl}/hangup`,
        },
      });
      expect(res.status).toBe(201);
      await until(() => app.requestsTo('/hangup').length > 0, 10_000);
      const uuid = app.requestsTo('/hangup')[0]!.params.CallUUID!;
      await until(
        async () =>
          (await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${uuid}/`)).status === 200,
      );
      const record = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/${uuid}/`);
      expect(record.body).toMatchObject({
        call_uuid: uuid,
        hangup_cause_code: 4000,
        billed_duration: 60,
      });
      const list = await gw.request('GET', `/v1/Account/${gw.main.id}/Call/`);
      expect(list.body.objects.map((c: { call_uuid: string }) => c.call_uuid)).toContain(uuid);
    } finally {
      await uas.stop();
      await media.close();
    }
  }, 30_000);
});
