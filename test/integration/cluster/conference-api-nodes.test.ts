import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { freePort } from '../../support/free-port.js';
import { startGateway, UUID, type Credentials, type TestGateway } from '../../support/gateway.js';
import { spawnGateway, type GatewayProcess } from '../../support/gateway-process.js';
import { wavSamples } from '../../support/phone-audio.js';
import { startRedis, type RedisServer } from '../../support/redis-server.js';
import { powerAt } from '../../support/signal.js';
import { openSipPeer, type SipPeer } from '../../support/sip-peer.js';
import { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * The Conference API and the Call Record API through a node that holds neither the room nor
 * the call: node A (a process of its own, stopped and killed below) runs the members' calls
 * and their room, node B (in this process) is the node the client reaches. Members are tone
 * phones calling node A; what they hear and what is recorded is checked on the audio.
 */
const NUMBER = '14155550177';
const ROOM = 'across-nodes';
const LOUD = 1e6;
const QUIET = 1e4;
const UNKNOWN = '0f5bd3a4-1111-4222-8333-944455556666';
let redis: RedisServer;
let client: Redis;
let app: ClientApp;
let sip: SipPeer;
let a: GatewayProcess;
let aSipPort: number;
let b: TestGateway;
let sub: Credentials;
const phones: TonePhone[] = [];
/** Phones whose calls ran on the killed node: closed without a BYE nobody would answer. */
let orphaned = false;

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
  app = await ClientApp.start();
  sip = await openSipPeer();
  b = await startGateway({ redisUrl: redis.url, listen: true, env: { VOXGATE_NODE_ID: 'node-b' } });
  aSipPort = await freePort();
  const rtp = 40000 + 2 * Math.floor(Math.random() * 5000);
  a = await spawnGateway({
    VOXGATE_REDIS_URL: redis.url,
    VOXGATE_NODE_ID: 'node-a',
    VOXGATE_AUTH_ID: b.main.id,
    VOXGATE_AUTH_TOKEN: b.main.token,
    VOXGATE_SIP_HOST: '127.0.0.1',
    VOXGATE_RTP_HOST: '127.0.0.1',
    VOXGATE_SIP_PORT: String(aSipPort),
    VOXGATE_RTP_PORTS: `${rtp}-${rtp + 199}`,
    VOXGATE_MEDIA_WORKERS: '1',
    VOXGATE_RATE_LIMIT: '0',
  });
  await a.healthy();
  const application = await b.request('POST', `${v1()}/Application/`, {
    json: { app_name: 'rooms', answer_url: `${app.baseUrl}/answer` },
  });
  await b.request('POST', `${v1()}/Number/`, {
    json: { numbers: NUMBER, carrier: 'Own SIP', region: 'West', app_id: application.body.app_id },
  });
  app.serve('/answer', { body: `<Response><Conference>${ROOM}</Conference></Response>` });
  sub = await b.subaccount('other');
  for (const [from, hz] of [
    ['first', 500],
    ['second', 1300],
    ['third', 800],
  ] as const) {
    phones.push(await TonePhone.call(sip, { user: NUMBER, port: aSipPort, from }, hz));
  }
  await until(async () => (await room()).status === 200 && members().length === 3, 10_000, 100);
}, 60_000);

afterAll(async () => {
  if (a && a.child.exitCode === null) a.child.kill('SIGKILL');
  for (const phone of phones) {
    if (!orphaned) await phone.hangup();
    await phone.close();
  }
  sip?.stack.close();
  await b?.close();
  await app?.close();
  client?.disconnect();
  await redis?.stop();
});

const v1 = (id = b.main.id) => `/v1/Account/${id}`;
/** The room's path on node B's API. */
const conference = () => `${v1()}/Conference/${ROOM}/`;
let shown: { status: number; body: any } = { status: 0, body: null }; // eslint-disable-line @typescript-eslint/no-explicit-any
/** The room as node B shows it (kept in `shown`). */
async function room() {
  shown = await b.request('GET', conference());
  return shown;
}
const members = () =>
  (shown.body?.members ?? []) as { from: string; member_id: string; call_uuid: string }[];
const memberOf = (from: string) => members().find((m) => m.from === from)!;

/** Power at `hz` in what `phone` heard over the next second. */
async function heardTone(phone: TonePhone, hz: number): Promise<number> {
  const from = phone.now;
  await sleep(1000);
  return powerAt(phone.heard(from), 8000, hz);
}

/** A recording's WAV, from node A (whose media store keeps it) once it is stored. */
async function recordingFrom(url: string): Promise<Int16Array> {
  return wavSamples(await recordingBytes(url)).pcm;
}

/** A recording's file as node A serves it, once stored: 8 kHz mono WAV. */
async function recordingBytes(url: string): Promise<Buffer> {
  const auth = `Basic ${Buffer.from(`${b.main.id}:${b.main.token}`).toString('base64')}`;
  let res: Response | null = null;
  await until(
    async () => {
      res = await fetch(`http://127.0.0.1:${a.port}${url}`, { headers: { authorization: auth } });
      return res.status === 200;
    },
    10_000,
    100,
  );
  const bytes = Buffer.from(await res!.arrayBuffer());
  const { rate, channels } = wavSamples(bytes);
  expect([rate, channels]).toEqual([8000, 1]);
  return bytes;
}

describe("a conference room on node A, through node B's API", () => {
  it('is listed and shown with its members, and is not another account’s', async () => {
    expect(await client.get(`voxgate:conference-room:${b.main.id}:${ROOM}`)).toMatch(/^node-a /);
    expect(b.gateway.calls.conferences.find(b.main.id, ROOM)).toBeNull();
    const listed = await b.request('GET', `${v1()}/Conference/`);
    expect(listed.body.conferences).toEqual([ROOM]);
    await room();
    expect(shown.body).toMatchObject({ conference_name: ROOM, conference_member_count: '3' });
    expect(
      members()
        .map((m) => m.from)
        .sort(),
    ).toEqual(['first', 'second', 'third']);
    for (const m of members()) {
      expect(m).toMatchObject({ muted: false, deaf: false, to: NUMBER, direction: 'inbound' });
      expect(m.call_uuid).toMatch(UUID);
    }

    // Another account's view of that name: nothing, and nothing about the room.
    const other = await b.request('GET', `${v1(sub.id)}/Conference/${ROOM}/`, { as: sub });
    expect(other.status).toBe(404);
    expect(other.body.error).toBe(`conference ${ROOM} not found`);
    expect(other.text).not.toMatch(/node-a|first|second/);
    const otherList = await b.request('GET', `${v1(sub.id)}/Conference/`, { as: sub });
    expect(otherList.body.conferences).toEqual([]);
    const otherMute = await b.request('POST', `${v1(sub.id)}/Conference/${ROOM}/Member/all/Mute/`, {
      as: sub,
    });
    expect(otherMute.status).toBe(404);
  });

  it('mutes a member through B: the others no longer hear it, until unmuted', async () => {
    const [first, second] = phones as [TonePhone, TonePhone];
    const id = memberOf('first').member_id;
    expect(await heardTone(second, 500)).toBeGreaterThan(LOUD);
    const muted = await b.request('POST', `${conference()}Member/${id}/Mute/`);
    expect(muted.status).toBe(202);
    expect(muted.body).toEqual({ api_id: expect.any(String), message: 'muted', member_id: id });
    await room();
    expect(memberOf('first')).toMatchObject({ muted: true, deaf: false });
    await sleep(200);
    // Both over the same second (they were two seconds one after the other): what the others
    // hear of the muted member, and what it hears of them, each a second of a phone's audio.
    const [othersHear, mutedHears] = await Promise.all([
      heardTone(second, 500),
      heardTone(first, 1300),
    ]);
    expect(othersHear, 'the muted member').toBeLessThan(QUIET);
    expect(mutedHears, 'the muted member still hears').toBeGreaterThan(LOUD);
    expect((await b.request('DELETE', `${conference()}Member/${id}/Mute/`)).status).toBe(204);
    await sleep(200);
    expect(await heardTone(second, 500)).toBeGreaterThan(LOUD);
  });

  it('refuses bad input on B: a member not there (404 naming it), a bad URL or voice (400)', async () => {
    const missing = await b.request(
      'POST',
      `${conference()}Member/${memberOf('first').member_id},99/Kick/`,
    );
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe(`member 99 of conference ${ROOM} not found`);
    const badUrl = await b.request('POST', `${conference()}Member/all/Play/`, {
      json: { url: 'ftp://example.com/a.wav' },
    });
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.error).toBe('invalid url: must be an http or https URL');
    const badVoice = await b.request('POST', `${conference()}Member/all/Speak/`, {
      json: { text: 'hi', language: 'xx-YY' },
    });
    expect(badVoice.status).toBe(400);
    // Nothing was done: the first member is still there and nobody was kicked.
    await room();
    expect(members()).toHaveLength(3);
  });

  it('records the room through B until stopped there: the WAV holds its members', async () => {
    const started = await b.request('POST', `${conference()}Record/`, {
      json: { file_format: 'wav' },
    });
    expect(started.status).toBe(202);
    const id = started.body.recording_id as string;
    expect(started.body).toEqual({
      api_id: expect.any(String),
      message: 'conference recording started',
      recording_id: expect.stringMatching(UUID),
      url: `${v1()}/Recording/${id}.wav`,
    });
    await sleep(1500);
    expect((await b.request('DELETE', `${conference()}Record/`)).status).toBe(204);
    const pcm = await recordingFrom(started.body.url);
    const second = pcm.subarray(1600, 1600 + 8000);
    for (const hz of [500, 1300, 800]) {
      expect(powerAt(second, 8000, hz), `${hz} Hz in the recording`).toBeGreaterThan(LOUD);
    }
    const record = await b.request('GET', `${v1()}/Recording/${id}/`);
    expect(record.body).toMatchObject({ recording_type: 'conference', conference_name: ROOM });
  });

  it('records a call of node A through B (Call Record API) and stops it there', async () => {
    const callUuid = memberOf('first').call_uuid;
    const path = `${v1()}/Call/${callUuid}/Record/`;
    const started = await b.request('POST', path, { json: { file_format: 'wav' } });
    expect(started.status).toBe(202);
    const id = started.body.recording_id as string;
    expect(started.body).toEqual({
      api_id: expect.any(String),
      message: 'call recording started',
      recording_id: expect.stringMatching(UUID),
      url: `${v1()}/Recording/${id}.wav`,
    });
    // A URL that is none of the call's recordings: 404 naming it, and the recording goes on.
    const wrong = `${v1()}/Recording/${UNKNOWN}.wav`;
    const missing = await b.request('DELETE', path, { json: { URL: wrong } });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe(`recording ${wrong} on call ${callUuid} not found`);
    await sleep(1500);
    // No URL: every recording of the call stops.
    expect((await b.request('DELETE', path)).status).toBe(204);
    const pcm = await recordingFrom(started.body.url);
    // A second and more of the call, stopped through B long before its minute's limit.
    expect(pcm.length).toBeGreaterThan(8000);
    expect(pcm.length).toBeLessThan(8000 * 10);
    expect(powerAt(pcm.subarray(1600, 1600 + 8000), 8000, 500)).toBeGreaterThan(LOUD);
    const record = await b.request('GET', `${v1()}/Recording/${id}/`);
    expect(record.body).toMatchObject({ recording_type: 'call', call_uuid: callUuid });
    expect(record.body).not.toHaveProperty('node');

    // The file is in A's store only: B passes the request on to A, with the client's
    // credentials, and serves A's bytes.
    const onA = await recordingBytes(started.body.url);
    const throughB = await b.download(started.body.url);
    expect(throughB.status).toBe(200);
    expect(throughB.contentType).toBe('audio/wav');
    expect(throughB.body.equals(onA)).toBe(true);
    // Another account sees no such recording on B, and nothing is asked of A for it.
    const other = await b.request('GET', `${v1(sub.id)}/Recording/${id}.wav`, { as: sub });
    expect(other.status).toBe(404);
    expect(other.body.error).toBe(`recording ${id} not found`);
    // Deleted through B: A removes the file and the record.
    expect((await b.request('DELETE', `${v1()}/Recording/${id}/`)).status).toBe(204);
    expect((await b.request('GET', `${v1()}/Recording/${id}/`)).status).toBe(404);
    const auth = `Basic ${Buffer.from(`${b.main.id}:${b.main.token}`).toString('base64')}`;
    const gone = await fetch(`http://127.0.0.1:${a.port}${started.body.url}`, {
      headers: { authorization: auth },
    });
    expect(gone.status).toBe(404);
    // It was A that deleted it: its log has the request B passed on (A's log line may reach
    // its stdout a moment after B has answered).
    const deletedOnA = () =>
      a
        .stdout()
        .split('\n')
        .some((line) => {
          if (!line.includes('"DELETE"') || !line.includes(`/Recording/${id}/`)) return false;
          return (JSON.parse(line) as { res?: { statusCode?: number } }).res?.statusCode === 204;
        });
    await until(deletedOnA, 5000);
    // A call that runs nowhere: 404 naming it, from B as from its node.
    const none = await b.request('POST', `${v1()}/Call/${UNKNOWN}/Record/`, { json: {} });
    expect(none.status).toBe(404);
    expect(none.body.error).toBe(`call ${UNKNOWN} not found`);
  });

  it('kicks a member through B: its call gets a BYE, the others stay', async () => {
    const third = phones[2]!;
    const kicked = await b.request(
      'POST',
      `${conference()}Member/${memberOf('third').member_id}/Kick/`,
    );
    expect(kicked.status).toBe(202);
    expect(kicked.body.message).toBe('kicked');
    await until(() => third.byeReceived, 5000);
    await until(async () => (await room()).status === 200 && members().length === 2, 5000);
    expect(
      members()
        .map((m) => m.from)
        .sort(),
    ).toEqual(['first', 'second']);
  });
});

describe('node A stopped, then killed', () => {
  it('stopped (SIGSTOP) but alive: B answers 503 within the bus timeout, and again 200 once it runs', async () => {
    // Stopped just after a heartbeat, so that it is still alive when B gives up waiting.
    const beat = () => client.zscore('voxgate:{cluster}:heartbeats', 'node-a');
    const last = await beat();
    await until(async () => (await beat()) !== last, 3000, 5);
    a.child.kill('SIGSTOP');
    const askedAt = Date.now();
    const refused = await b.request('GET', conference());
    const took = Date.now() - askedAt;
    // Bad input is refused by B itself, at once, without asking the stopped node.
    const badUrl = await b.request('POST', `${conference()}Member/all/Play/`, {
      json: { url: 'ftp://example.com/a.wav' },
    });
    const badFormat = await b.request('POST', `${conference()}Record/`, {
      json: { file_format: 'ogg' },
    });
    a.child.kill('SIGCONT');
    expect([badUrl.status, badFormat.status]).toEqual([400, 400]);
    console.info(`503 from node B after ${took} ms with node A stopped`);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe(
      `node node-a holding conference ${ROOM} did not answer in time`,
    );
    expect(took).toBeLessThan(4000);
    await until(async () => (await room()).status === 200, 5000);
    expect(members()).toHaveLength(2);
  });

  it('hangs up every room of the account through B (DELETE Conference/): BYE to each member', async () => {
    const [first, second] = phones as [TonePhone, TonePhone];
    expect((await b.request('DELETE', `${v1()}/Conference/`)).status).toBe(204);
    await until(() => first.byeReceived && second.byeReceived, 5000);
    expect((await b.request('GET', `${v1()}/Conference/`)).body.conferences).toEqual([]);
    // The room opens again on node A for the next test.
    for (const from of ['fourth', 'fifth']) {
      phones.push(await TonePhone.call(sip, { user: NUMBER, port: aSipPort, from }, 500));
    }
    await until(async () => (await room()).status === 200 && members().length === 2, 5000, 100);
  });

  it('killed (SIGKILL): B answers not found once its heartbeat is gone, never hangs', async () => {
    orphaned = true;
    a.child.kill('SIGKILL');
    await until(async () => {
      const health = await b.request('GET', '/health');
      return !(health.body.peers as { id: string }[]).some((p) => p.id === 'node-a');
    }, 10_000);
    // Its claim still names it: B asks, hears nothing, finds it dead.
    expect(await client.get(`voxgate:conference-room:${b.main.id}:${ROOM}`)).toMatch(/^node-a /);
    const askedAt = Date.now();
    const gone = await b.request('GET', conference());
    console.info(`404 from node B after ${Date.now() - askedAt} ms with node A killed`);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe(`conference ${ROOM} not found`);
    expect((await b.request('POST', `${conference()}Member/all/Mute/`)).status).toBe(404);
    expect((await b.request('GET', `${v1()}/Conference/`)).body.conferences).toEqual([]);
  });
});
