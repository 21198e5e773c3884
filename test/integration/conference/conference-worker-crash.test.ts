import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientApp } from '../../support/client-app.js';
import { ConferenceGateway } from '../../support/conference-gateway.js';
import type { TestGateway } from '../../support/gateway.js';
import { powerAt } from '../../support/signal.js';
import type { TonePhone } from '../../support/tone-phone.js';
import { sleep, until } from '../../support/wait.js';

/**
 * A gateway with two media workers and four phones in one room: the first and third on the
 * worker that mixes, the second and fourth linked to it from the other. The mixing worker
 * crashes: its phones' calls end, and the two on the other worker are mixed again there and
 * hear each other.
 */
const NUMBER = '14155550179';
const TONES = [500, 800, 1300, 1700];
const LOUD = 1e6;
const QUIET = 1e4;
let gw: TestGateway;
let app: ClientApp;
let room: ConferenceGateway;
const phones: TonePhone[] = [];

beforeAll(async () => {
  room = await ConferenceGateway.start({
    number: NUMBER,
    appName: 'rooms',
    env: { VOXGATE_MEDIA_WORKERS: '2' },
  });
  ({ gw, app } = room);
  app.serve('/answer', { body: '<Response><Conference>crash</Conference></Response>' });
  phones.push(...(await room.callTonePhones(TONES)));
}, 30_000);

afterAll(async () => {
  await room?.close();
});

const base = () => `/v1/Account/${gw.main.id}/Conference/crash`;

async function members(): Promise<{ member_id: string; call_uuid: string; from: string }[]> {
  const shown = await gw.request('GET', `${base()}/`);
  if (shown.status !== 200) return [];
  return (shown.body.members as { member_id: string; call_uuid: string; from: string }[]).sort(
    (a, b) => a.from.localeCompare(b.from),
  );
}

/** Power of each tone in what `phone` heard over the last second. */
async function tonesHeard(phone: TonePhone): Promise<number[]> {
  const from = phone.now;
  await sleep(1000);
  return TONES.map((hz) => powerAt(phone.heard(from), 8000, hz));
}

describe('<Conference> when its mixing worker crashes', () => {
  it('mixes its members on the other worker again, who hear each other', async () => {
    await until(async () => (await members()).length === 4, 5000);
    const shown = await members();
    const workers = shown.map((m) => gw.gateway.media.workerOf(m.call_uuid));
    expect(workers[1]).not.toBe(workers[0]);
    expect(workers[2]).toBe(workers[0]);
    expect(workers[3]).toBe(workers[1]);
    const before = await tonesHeard(phones[1]!);
    expect(before[3], 'linked members hear each other through the mix').toBeGreaterThan(LOUD);

    const pool = (
      gw.gateway.media as unknown as { pool: { crashWorkerOf(id: string): Promise<void> } }
    ).pool;
    await pool.crashWorkerOf(shown[0]!.call_uuid);
    // The crashed worker's calls end: their phones get a BYE.
    await until(() => phones[0]!.byeReceived && phones[2]!.byeReceived, 5000);
    await until(async () => (await members()).length === 2, 5000);
    expect((await members()).map((m) => m.from)).toEqual(['phone1', 'phone3']);

    await sleep(300);
    const [one, three] = await Promise.all([tonesHeard(phones[1]!), tonesHeard(phones[3]!)]);
    expect(one[3], 'phone1 hears phone3 again').toBeGreaterThan(LOUD);
    expect(three[1], 'phone3 hears phone1 again').toBeGreaterThan(LOUD);
    expect(one[1], 'and not itself').toBeLessThan(QUIET);
    expect(three[3]).toBeLessThan(QUIET);
    expect(one[0]).toBeLessThan(QUIET);
    expect(
      gw.logs.some((line) => line.includes('the media worker mixing the conference crashed')),
    ).toBe(true);
  }, 30_000);
});
