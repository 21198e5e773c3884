import { afterEach, beforeEach, expect, it } from 'vitest';
import { RateDeck } from '../../../src/call/billing/rate-deck.js';
import {
  buildCallRecord,
  removeExpiredCallRecords,
  type FinishedLeg,
} from '../../../src/call/call-record.js';
import { DEFAULT_RATE_DECK } from '../../../src/config/config.js';
import { ManualClock } from '../../../src/core/clock.js';
import type { CallRecord } from '../../../src/state/records.js';
import { startGateway, type Credentials, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.UTC(2024, 5, 30, 12, 0, 0);
const deck = RateDeck.load(DEFAULT_RATE_DECK);

/** `YYYY-MM-DD HH:MM:SS` in UTC, as the end_time filters take it. */
const at = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

describeEachStore('call records', (target) => {
  let gw: TestGateway;
  let base: string;
  let seq: number;
  const clock = new ManualClock(NOW);

  beforeEach(async () => {
    await target.flush();
    clock.set(NOW);
    seq = 0;
    gw = await startGateway({ redisUrl: target.redisUrl(), clock });
    base = `/v1/Account/${gw.main.id}/Call`;
  });
  afterEach(async () => {
    await gw.close();
  });

  /** Writes a finished leg's record the way the call engine does: built, then stored. */
  const record = async (endedAt: number, over: Partial<FinishedLeg> = {}): Promise<CallRecord> => {
    seq += 1;
    const answered = over.answeredAt === undefined ? endedAt - 65_000 : over.answeredAt;
    const built = buildCallRecord(
      {
        callUuid: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
        requestUuid: null,
        direction: 'outbound',
        from: '14155550100',
        to: '442071838750',
        initiatedAt: endedAt - 70_000,
        answeredAt: answered,
        endedAt,
        hangupCauseCode: 4000,
        hangupCauseName: 'Normal Hangup',
        hangupSource: 'Callee',
        sourceIp: '203.0.113.7',
        account: gw.main.id,
        subaccount: null,
        ...over,
      },
      deck,
    );
    await gw.gateway.state.calls.create(built);
    return built;
  };
  const list = (query = '', as?: Credentials) =>
    gw.request('GET', `/v1/Account/${(as ?? gw.main).id}/Call/${query}`, { as });
  const uuids = (res: { body: { objects: { call_uuid: string }[] } }) =>
    res.body.objects.map((o) => o.call_uuid);

  it('retrieves a call record with every field of the Call table', async () => {
    const call = await record(NOW - DAY, { requestUuid: 'req-1', parentCallUuid: 'a-leg' });
    const res = await gw.request('GET', `${base}/${call.call_uuid}/`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      api_id: expect.any(String),
      call_uuid: call.call_uuid,
      from_number: '14155550100',
      to_number: '442071838750',
      from_iso: 'US',
      to_iso: 'GB',
      call_direction: 'outbound',
      initiation_time: '2024-06-29 11:58:50+00:00',
      answer_time: '2024-06-29 11:58:55+00:00',
      end_time: '2024-06-29 12:00:00+00:00',
      call_duration: 70,
      ring_duration: 5,
      bill_duration: 65,
      billed_duration: 120,
      total_amount: '0.02400',
      total_rate: '0.01200',
      parent_call_uuid: 'a-leg',
      conference_uuid: null,
      hangup_cause_name: 'Normal Hangup',
      hangup_cause_code: 4000,
      hangup_source: 'Callee',
      stir_verification: 'Not Applicable',
      stir_attestation: '',
      source_ip: '203.0.113.7',
      resource_uri: `${base}/${call.call_uuid}/`,
      call_state: 'ANSWER',
    });
    // Without the trailing slash too.
    expect((await gw.request('GET', `${base}/${call.call_uuid}`)).status).toBe(200);
  });

  it('answers 404 for an unknown call, another tenant’s, or one past the 90 days', async () => {
    const unknown = await gw.request('GET', `${base}/no-such-call/`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('call no-such-call not found');
    const foreign = await record(NOW - DAY, { account: 'MAZZZZZZZZZZZZZZZZZZ' });
    expect((await gw.request('GET', `${base}/${foreign.call_uuid}/`)).status).toBe(404);
    const old = await record(NOW - 91 * DAY);
    expect((await gw.request('GET', `${base}/${old.call_uuid}/`)).status).toBe(404);
    const kept = await record(NOW - 89 * DAY);
    expect((await gw.request('GET', `${base}/${kept.call_uuid}/`)).status).toBe(200);
    // The record is retrievable until it is 90 days old, then gone.
    clock.advance(DAY + 1000);
    expect((await gw.request('GET', `${base}/${kept.call_uuid}/`)).status).toBe(404);
  });

  it('keeps subaccounts apart; the main account sees its whole tenant', async () => {
    const a = await gw.subaccount('a');
    const b = await gw.subaccount('b');
    const own = await record(NOW - DAY);
    const ofA = await record(NOW - 2 * DAY, { subaccount: a.id });
    const ofB = await record(NOW - 3 * DAY, { subaccount: b.id });

    expect(uuids(await list())).toEqual([own.call_uuid, ofA.call_uuid, ofB.call_uuid]);
    const asA = await list('', a);
    expect(uuids(asA)).toEqual([ofA.call_uuid]);
    expect(asA.body.objects[0].resource_uri).toBe(`/v1/Account/${a.id}/Call/${ofA.call_uuid}/`);
    expect(uuids(await list('', b))).toEqual([ofB.call_uuid]);

    const get = (uuid: string, as: Credentials) =>
      gw.request('GET', `/v1/Account/${as.id}/Call/${uuid}/`, { as });
    expect((await get(ofA.call_uuid, a)).status).toBe(200);
    expect((await get(ofB.call_uuid, a)).status).toBe(404);
    expect((await get(own.call_uuid, a)).status).toBe(404);
    expect((await get(ofB.call_uuid, gw.main)).status).toBe(200);
    // A subaccount's credentials open only its own path.
    expect((await gw.request('GET', `${base}/${ofA.call_uuid}/`, { as: a })).status).toBe(401);
  });

  it('searches the last 7 days when no end_time is given, newest first', async () => {
    const recent = await record(NOW - 60_000);
    const sixDays = await record(NOW - 6 * DAY);
    await record(NOW - 7 * DAY - 1000);
    await record(NOW - 20 * DAY);
    const res = await list();
    expect(res.status).toBe(200);
    expect(uuids(res)).toEqual([recent.call_uuid, sixDays.call_uuid]);
    expect(res.body.meta).toEqual({
      limit: 20,
      offset: 0,
      total_count: 2,
      next: null,
      previous: null,
    });
  });

  it('filters on end_time with every variant, bounds exact to the second', async () => {
    const t = NOW - 10 * DAY;
    const before = await record(t - 1000);
    const exact = await record(t);
    const after = await record(t + 1000);
    const q = (params: Record<string, string>) =>
      list(`?${new URLSearchParams(params).toString()}`);
    const lower = at(t - 5 * DAY);
    const upper = at(t + 5 * DAY);

    expect(uuids(await q({ end_time: at(t) }))).toEqual([exact.call_uuid]);
    expect(uuids(await q({ end_time__gt: at(t), end_time__lte: upper }))).toEqual([
      after.call_uuid,
    ]);
    expect(uuids(await q({ end_time__gte: at(t), end_time__lte: upper }))).toEqual([
      after.call_uuid,
      exact.call_uuid,
    ]);
    expect(uuids(await q({ end_time__gte: lower, end_time__lt: at(t) }))).toEqual([
      before.call_uuid,
    ]);
    expect(uuids(await q({ end_time__gte: lower, end_time__lte: at(t) }))).toEqual([
      exact.call_uuid,
      before.call_uuid,
    ]);
    // Minutes alone, and microseconds: 12:00:00.000001 is after a call that ended at 12:00:00.
    expect(uuids(await q({ end_time: at(t).slice(0, 16) }))).toEqual([exact.call_uuid]);
    expect(uuids(await q({ end_time: `${at(t)}.000000` }))).toEqual([exact.call_uuid]);
    expect(uuids(await q({ end_time: `${at(t)}.000001` }))).toEqual([]);
    expect(uuids(await q({ end_time__gt: `${at(t)}.999999`, end_time__lte: upper }))).toEqual([
      after.call_uuid,
    ]);
    expect(uuids(await q({ end_time__gt: `${at(t)}.000001`, end_time__lt: at(t + 1000) }))).toEqual(
      [],
    );
    expect(uuids(await q({ end_time__gte: `${at(t - 1000)}.5`, end_time__lte: upper }))).toEqual([
      after.call_uuid,
      exact.call_uuid,
    ]);
    // Only an upper bound: the 7 days before it. Only a lower bound: from it to now.
    expect(uuids(await q({ end_time__lte: at(t) }))).toEqual([exact.call_uuid, before.call_uuid]);
    expect(uuids(await q({ end_time__gte: at(t) }))).toEqual([after.call_uuid, exact.call_uuid]);
    // A lower bound above the upper one finds nothing.
    expect(uuids(await q({ end_time__gt: at(t), end_time__lt: at(t) }))).toEqual([]);
  });

  it('refuses a search range wider than 30 days, naming it', async () => {
    const wide = await list(
      `?end_time__gte=${encodeURIComponent(at(NOW - 31 * DAY))}&end_time__lte=${encodeURIComponent(at(NOW))}`,
    );
    expect(wide.status).toBe(400);
    expect(wide.body.error).toBe('invalid end_time: must be a range of at most 30 days');
    // A lower bound alone reaches to now.
    const open = await list(`?end_time__gt=${encodeURIComponent(at(NOW - 40 * DAY))}`);
    expect(open.status).toBe(400);
    expect(open.body.error).toBe('invalid end_time: must be a range of at most 30 days');
    const edge = await record(NOW - 30 * DAY);
    const thirty = await list(
      `?end_time__gte=${encodeURIComponent(at(NOW - 30 * DAY))}&end_time__lte=${encodeURIComponent(at(NOW))}`,
    );
    expect(thirty.status).toBe(200);
    expect(uuids(thirty)).toEqual([edge.call_uuid]);
  });

  it('never returns a record older than 90 days, whatever the window asks', async () => {
    const gone = await record(NOW - 95 * DAY);
    const kept = await record(NOW - 85 * DAY);
    const res = await list(
      `?end_time__gte=${encodeURIComponent(at(NOW - 100 * DAY))}&end_time__lte=${encodeURIComponent(at(NOW - 75 * DAY))}`,
    );
    expect(res.status).toBe(200);
    expect(uuids(res)).toEqual([kept.call_uuid]);
    expect(res.body.meta.total_count).toBe(1);
    const onlyOld = await list(`?end_time=${encodeURIComponent(gone.end_time.slice(0, 19))}`);
    expect(uuids(onlyOld)).toEqual([]);
  });

  it('gives back the space of expired records, oldest first, in batches', async () => {
    const expired = [await record(NOW - 120 * DAY), await record(NOW - 100 * DAY)];
    const boundary = await record(NOW - 90 * DAY);
    const a = await gw.subaccount('a');
    const expiredOfA = await record(NOW - 91 * DAY, { subaccount: a.id });
    const calls = gw.gateway.state.calls;
    expect(await removeExpiredCallRecords(calls, gw.main.id, NOW, 2)).toBe(2);
    expect(await calls.get(gw.main.id, expired[0]!.call_uuid)).toBeNull();
    expect(await calls.get(gw.main.id, expired[1]!.call_uuid)).toBeNull();
    expect(await removeExpiredCallRecords(calls, gw.main.id, NOW)).toBe(1);
    expect(await calls.get(gw.main.id, expiredOfA.call_uuid)).toBeNull();
    expect(await removeExpiredCallRecords(calls, gw.main.id, NOW)).toBe(0);
    // Exactly 90 days old is still kept, and still retrievable.
    expect((await gw.request('GET', `${base}/${boundary.call_uuid}/`)).status).toBe(200);
    const sub = await calls.page(gw.main.id, { index: `sub:${a.id}`, offset: 0, limit: 0 });
    expect(sub.total).toBe(0);
  });

  it('filters on numbers, direction, duration, cause, source and STIR', async () => {
    const t = NOW - DAY;
    const a = await record(t - 1000, { from: '+14155550100', to: '442071838750' });
    const b = await record(t - 2000, {
      direction: 'inbound',
      from: '447400123456',
      to: '14155550111',
      answeredAt: t - 2000 - 30_000,
      hangupSource: 'Caller',
      stirVerification: 'Verified',
      stirAttestation: 'A',
    });
    const c = await record(t - 3000, {
      to: 'sip:bob@pbx.example.com',
      answeredAt: t - 3000 - 60_000,
      hangupSource: 'API Request',
    });
    const d = await record(t - 4000, {
      answeredAt: null,
      hangupCauseCode: 3010,
      hangupCauseName: 'Busy Line',
      hangupSource: 'Error',
      stirVerification: 'Not Verified',
    });
    const e = await record(t - 5000, { hangupSource: 'Answer XML', hangupCauseCode: 4010 });
    const f = await record(t - 6000, { hangupSource: 'Service', hangupCauseCode: 6000 });
    const g = await record(t - 7000, { hangupSource: 'Unknown', hangupCauseCode: 0 });
    const ids = async (query: string) => {
      const res = await list(`?${query}`);
      expect(res.status).toBe(200);
      return uuids(res);
    };
    const all = [a, b, c, d, e, f, g].map((r) => r.call_uuid);
    const u = (...rs: CallRecord[]) => rs.map((r) => r.call_uuid);

    expect(await ids('')).toEqual(all);
    expect(await ids('from_number=447400123456')).toEqual(u(b));
    // A call placed through the API keeps `+<digits>` (a); a caller's number is as its From
    // had it. Either is found with or without the +, also one an unencoded query turned into
    // a space; other digits are not.
    const from14155550100 = u(a, c, d, e, f, g);
    expect(await ids('from_number=14155550100')).toEqual(from14155550100);
    expect(await ids('from_number=%2B14155550100')).toEqual(from14155550100);
    expect(await ids('from_number=+14155550100')).toEqual(from14155550100);
    expect(await ids('from_number=4155550100')).toEqual([]);
    expect(await ids('to_number=442071838750')).toEqual(u(a, d, e, f, g));
    expect(await ids(`to_number=${encodeURIComponent('sip:bob@pbx.example.com')}`)).toEqual(u(c));
    expect(await ids('call_direction=inbound')).toEqual(u(b));
    expect(await ids('call_direction=outbound')).toEqual(u(a, c, d, e, f, g));
    // bill_duration: a, e, f, g 65 s; b 30 s; c 60 s; d unanswered 0 s.
    expect(await ids('bill_duration=60')).toEqual(u(c));
    expect(await ids('bill_duration__gt=60')).toEqual(u(a, e, f, g));
    expect(await ids('bill_duration__gte=60')).toEqual(u(a, c, e, f, g));
    expect(await ids('bill_duration__lt=60')).toEqual(u(b, d));
    expect(await ids('bill_duration__lte=30')).toEqual(u(b, d));
    expect(await ids('bill_duration__gt=0&bill_duration__lt=61')).toEqual(u(b, c));
    expect(await ids('hangup_cause_code=3010')).toEqual(u(d));
    expect(await ids('hangup_cause_code=4000')).toEqual(u(a, b, c));
    expect(await ids('hangup_source=customer')).toEqual(u(c, e));
    expect(await ids('hangup_source=carrier')).toEqual(u(a, b));
    expect(await ids('hangup_source=siptrunk')).toEqual(u(d, f));
    expect(await ids('stir_verification=Verified')).toEqual(u(b));
    expect(await ids('stir_verification=Not%20Verified')).toEqual(u(d));
    expect(await ids('stir_verification=Not+Applicable')).toEqual(u(a, c, e, f, g));
    expect(
      await ids('call_direction=outbound&hangup_source=customer&bill_duration__gte=65'),
    ).toEqual(u(e));
    // Filters apply within the window only.
    await record(NOW - 8 * DAY, { from: '447400123456' });
    expect(await ids('from_number=447400123456')).toEqual(u(b));
  });

  it.each([
    ['call_direction=sideways', 'invalid call_direction: must be inbound or outbound'],
    ['bill_duration__gt=abc', 'invalid bill_duration__gt: must be a whole number of seconds'],
    ['bill_duration=-1', 'invalid bill_duration: must be a whole number of seconds'],
    ['hangup_cause_code=x', 'invalid hangup_cause_code: must be an integer cause code'],
    ['hangup_source=caller', 'invalid hangup_source: must be one of customer, carrier, siptrunk'],
    [
      'stir_verification=yes',
      'invalid stir_verification: must be one of Verified, Not Verified, Not Applicable',
    ],
    ['end_time=yesterday', 'invalid end_time: must be a UTC time YYYY-MM-DD HH:MM[:ss[.uuuuuu]]'],
    [
      'end_time__lt=2024-02-30+10:00',
      'invalid end_time__lt: must be a UTC time YYYY-MM-DD HH:MM[:ss[.uuuuuu]]',
    ],
    [
      'end_time__gte=2024-06-01+24:00',
      'invalid end_time__gte: must be a UTC time YYYY-MM-DD HH:MM[:ss[.uuuuuu]]',
    ],
    ['status=completed', 'invalid status: must be live or queued'],
    ['limit=21', 'invalid limit: must be an integer from 1 to 20'],
    ['offset=-1', 'invalid offset: must be an integer of at least 0'],
  ])('refuses ?%s with 400', async (query, message) => {
    const res = await list(`?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(message);
  });

  it('pages with limit and offset, with and without filters', async () => {
    const made: CallRecord[] = [];
    for (let k = 0; k < 25; k++) {
      made.push(
        await record(NOW - (k + 1) * 60_000, { direction: k % 5 === 0 ? 'inbound' : 'outbound' }),
      );
    }
    const first = await list('?limit=10');
    expect(uuids(first)).toEqual(made.slice(0, 10).map((r) => r.call_uuid));
    expect(first.body.meta).toEqual({
      limit: 10,
      offset: 0,
      total_count: 25,
      next: `${base}/?limit=10&offset=10`,
      previous: null,
    });
    const last = await list('?limit=10&offset=20');
    expect(uuids(last)).toEqual(made.slice(20).map((r) => r.call_uuid));
    expect(last.body.meta).toMatchObject({
      next: null,
      previous: `${base}/?limit=10&offset=10`,
    });
    const defaultPage = await list();
    expect(defaultPage.body.objects).toHaveLength(20);
    expect(defaultPage.body.meta.next).toBe(`${base}/?limit=20&offset=20`);

    const outbound = made.filter((r) => r.call_direction === 'outbound').map((r) => r.call_uuid);
    const filtered = await list('?call_direction=outbound&limit=15&offset=15');
    expect(uuids(filtered)).toEqual(outbound.slice(15));
    expect(filtered.body.meta).toEqual({
      limit: 15,
      offset: 15,
      total_count: 20,
      next: null,
      previous: `${base}/?call_direction=outbound&limit=15&offset=0`,
    });
  });

  it('answers the live and queued views apart from the records', async () => {
    const call = await record(NOW - DAY);
    const live = await list('?status=live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ api_id: expect.any(String), calls: [] });
    expect((await list('?status=queued')).body.calls).toEqual([]);
    // What only a finished call has is no filter for live or queued calls.
    const refusals: [status: string, filter: string, name: string][] = [
      ['live', 'end_time__gt=2026-01-01 00:00', 'end_time__gt'],
      ['live', 'bill_duration=60', 'bill_duration'],
      ['queued', 'hangup_cause_code=4000', 'hangup_cause_code'],
      ['live', 'stir_verification=Verified', 'stir_verification'],
    ];
    for (const [status, filter, name] of refusals) {
      const refused = await list(`?status=${status}&${filter}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe(
        `invalid ${name}: it filters completed calls, not status=${status}`,
      );
    }
    // A finished call is not live.
    const one = await gw.request('GET', `${base}/${call.call_uuid}?status=live`);
    expect(one.status).toBe(404);
    const bad = await gw.request('GET', `${base}/${call.call_uuid}/?status=done`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid status: must be live or queued');
  });
});
