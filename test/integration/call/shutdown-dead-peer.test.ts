import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answeredCallUuid, placeCarrierCall } from '../../support/carrier-call.js';
import { ClientApp } from '../../support/client-app.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { processApi, spawnGateway, type GatewayProcess } from '../../support/gateway-process.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import type { RtpPeer } from '../../support/rtp-peer.js';
import type { SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';

/**
 * SIGTERM while a call's peer has vanished: the BYE goes unanswered, and the gateway still
 * exits within its drain timeout and shutdown grace (not after Timer F's 32 s), with the call's
 * record in the store and its hangup callback sent.
 */
const MAIN = { id: 'MA' + 'S'.repeat(18), token: 'G'.repeat(40) };
const DRAIN_S = 1;
const GRACE_S = 2;

let redis: RedisServer;
let app: ClientApp;
let gw: GatewayProcess | null = null;
let reader: TestGateway | null = null;
let silent: Socket | null = null;
const carriers: SippUas[] = [];
const peers: RtpPeer[] = [];

beforeAll(async () => {
  [redis, app] = await Promise.all([startRedis(), ClientApp.start()]);
});

afterAll(async () => {
  if (gw && gw.child.exitCode === null) gw.child.kill('SIGKILL');
  silent?.close();
  await Promise.all(carriers.map((c) => c.stop()));
  await Promise.all(peers.map((p) => p.close()));
  await reader?.close();
  await app.close();
  await redis.stop();
});

async function startProcess(): Promise<GatewayProcess> {
  const started = await spawnGateway({
    VOXGATE_REDIS_URL: redis.url,
    VOXGATE_AUTH_ID: MAIN.id,
    VOXGATE_AUTH_TOKEN: MAIN.token,
    VOXGATE_SIP_HOST: '127.0.0.1',
    VOXGATE_RTP_HOST: '127.0.0.1',
    VOXGATE_MEDIA_WORKERS: '1',
    VOXGATE_RATE_LIMIT: '0',
    VOXGATE_DRAIN_TIMEOUT: String(DRAIN_S),
    VOXGATE_SHUTDOWN_GRACE: String(GRACE_S),
  });
  await started.healthy();
  return started;
}

/** Sends SIGTERM; resolves with the exit code and how long the exit took. */
async function terminate(process: GatewayProcess): Promise<{ code: number | null; ms: number }> {
  const exited = new Promise<number | null>((resolve) =>
    process.child.once('exit', (code) => resolve(code)),
  );
  const signalled = Date.now();
  process.child.kill('SIGTERM');
  const code = await exited;
  return { code, ms: Date.now() - signalled };
}

/** The call's record, read from the store by a gateway of its own once the process is gone. */
async function storedRecord(uuid: string) {
  reader ??= await startGateway({
    redisUrl: redis.url,
    env: { VOXGATE_AUTH_ID: MAIN.id, VOXGATE_AUTH_TOKEN: MAIN.token },
  });
  return reader.request('GET', `/v1/Account/${MAIN.id}/Call/${uuid}/`);
}

/**
 * A callee that rings and then is gone: answers an INVITE with 180 Ringing and never says
 * anything again (no 487 to a CANCEL, nothing to retransmissions).
 */
async function ringingThenGone(): Promise<{ socket: Socket; port: number; cancels: string[] }> {
  const socket = createSocket('udp4');
  const cancels: string[] = [];
  let rang = false;
  socket.on('message', (data, from) => {
    const text = data.toString('latin1');
    if (text.startsWith('CANCEL ')) cancels.push(text);
    if (!text.startsWith('INVITE ') || rang) return;
    rang = true;
    const rows = text.split('\r\n');
    const copy = (name: RegExp) => rows.filter((row) => name.test(row));
    const ringing = [
      'SIP/2.0 180 Ringing',
      ...copy(/^(Via|v):/i),
      ...copy(/^(From|f):/i),
      ...copy(/^(To|t):/i).map((row) => `${row};tag=gone`),
      ...copy(/^(Call-ID|i):/i),
      ...copy(/^CSeq:/i),
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    socket.send(Buffer.from(ringing, 'latin1'), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { socket, port: socket.address().port, cancels };
}

describe('shutdown with a vanished SIP peer', () => {
  it('exits within the drain timeout and the grace, and the call record is stored', async () => {
    gw = await startProcess();
    const placed = await placeCarrierCall(
      { gw: processApi(gw.port, MAIN), app, carriers, peers },
      '<Response><Wait length="120"/></Response>',
      { hangup_url: `${app.baseUrl}/hangup` },
    );
    const uuid = await answeredCallUuid(app, placed.requestUuid);

    // The carrier vanishes: its port now swallows everything and answers nothing.
    await placed.uas.stop();
    silent = createSocket('udp4');
    const byes: string[] = [];
    silent.on('message', (data) => {
      const text = data.toString('latin1');
      if (text.startsWith('BYE ')) byes.push(text);
    });
    await new Promise<void>((resolve) => silent!.bind(placed.uas.port, '127.0.0.1', resolve));
    const live = await processApi(gw.port, MAIN).request(
      'GET',
      `/v1/Account/${MAIN.id}/Call/${uuid}/?status=live`,
    );
    expect(live.status).toBe(200);

    const { code, ms: tookMs } = await terminate(gw);

    expect(code).toBe(0);
    // The BYE went out and was retransmitted: nobody answered it.
    expect(byes.length).toBeGreaterThanOrEqual(2);
    expect(new Set(byes.map((bye) => /^Call-ID:\s*(.+)$/im.exec(bye)?.[1])).size).toBe(1);
    // Bounded by what was asked (drain, grace) plus the process's own stopping, far below the
    // 32 s a BYE's Timer F would hold it.
    expect(tookMs).toBeLessThan((DRAIN_S + GRACE_S + 8) * 1000);
    expect(gw.stdout()).toContain('"msg":"shutting down"');

    await until(() => app.requestsTo('/hangup').length > 0, 1000);
    expect(app.requestsTo('/hangup').map((r) => r.params.CallUUID)).toEqual([uuid]);
    const record = await storedRecord(uuid);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({
      call_uuid: uuid,
      call_state: 'ANSWER',
      hangup_cause_name: 'Normal Hangup',
      hangup_source: 'Service',
    });
  }, 60_000);

  it('ends a ringing call whose callee vanished after the grace, and stores its record', async () => {
    const callee = await ringingThenGone();
    silent = callee.socket;
    gw = await startProcess();
    const api = processApi(gw.port, MAIN);
    const fired = await api.request('POST', `/v1/Account/${MAIN.id}/Call/`, {
      json: {
        from: '+14155550100',
        to: `sip:bob@127.0.0.1:${callee.port}`,
        answer_url: `${app.baseUrl}/answer`,
        hangup_url: `${app.baseUrl}/hangup-ringing`,
      },
    });
    expect(fired.status).toBe(201);
    let uuid = '';
    await until(async () => {
      const live = await api.request('GET', `/v1/Account/${MAIN.id}/Call/?status=live`);
      uuid = (live.body?.calls as string[] | undefined)?.[0] ?? '';
      return uuid !== '';
    }, 10_000);

    const { code, ms } = await terminate(gw);

    expect(code).toBe(0);
    // The CANCEL went out and was retransmitted: nobody answered it.
    expect(callee.cancels.length).toBeGreaterThanOrEqual(2);
    // Drain, then the grace for the CANCEL, then the grace after the record.
    expect(ms).toBeLessThan((DRAIN_S + 2 * GRACE_S + 8) * 1000);
    const requestUuid = fired.body.request_uuid as string;
    expect(app.requestsTo('/answer').filter((r) => r.params.RequestUUID === requestUuid)).toEqual(
      [],
    );
    expect(app.requestsTo('/hangup-ringing').map((r) => r.params.CallUUID)).toEqual([uuid]);
    const record = await storedRecord(uuid);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ call_uuid: uuid, hangup_source: 'Service' });
  }, 60_000);
});
