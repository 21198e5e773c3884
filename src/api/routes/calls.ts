import { Type, type Static } from 'typebox';
import { CALL_RETENTION_MS } from '../../call/call-record.js';
import { invalidParameter, notFound } from '../../core/errors.js';
import type { CallRecord, HangupSource } from '../../state/records.js';
import { recordTimeMs } from '../../state/state.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { numberFilter } from '../../core/number-filter.js';
import { listIndex, visibleTo } from '../owned-resources.js';
import {
  callOwner,
  findInView,
  LiveCallIds,
  LiveCallObject,
  presentLiveCall,
} from './live-calls.js';
import {
  AuthIdParams,
  errorResponses,
  ListBody,
  ListQuery,
  Nullable,
  WithApiId,
} from '../schemas.js';
import { COMPARISONS, timeWindow, type Comparison } from '../time-window.js';

/**
 * The list filter's hangup_source values over the sources a record holds: `customer` is the
 * account's own application (its API requests and answer XML), `carrier` a party on the far
 * side of the network (caller or callee), `siptrunk` the gateway's SIP side (its own limits and
 * timeouts, and SIP or network errors). `Unknown` is in none of them.
 */
export const HANGUP_SOURCE_FILTERS: Record<
  'customer' | 'carrier' | 'siptrunk',
  readonly HangupSource[]
> = {
  customer: ['API Request', 'Answer XML'],
  carrier: ['Caller', 'Callee'],
  siptrunk: ['Service', 'Error'],
};

const Status = Type.Union([Type.Literal('live'), Type.Literal('queued')], {
  description: 'live or queued',
});
const Seconds = Type.Integer({ minimum: 0, description: 'a whole number of seconds' });
const EndTime = Type.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?$',
  description: 'a UTC time YYYY-MM-DD HH:MM[:ss[.uuuuuu]]',
});
const variants = <T extends ReturnType<typeof Type.String> | typeof Seconds>(name: string, t: T) =>
  Object.fromEntries(COMPARISONS.map((c) => [`${name}${c}`, Type.Optional(t)])) as Record<
    string,
    ReturnType<typeof Type.Optional<T>>
  >;

/** Filters on what only a finished call has: refused with status=live or queued. */
const isRecordFilter = (name: string): boolean =>
  /^(bill_duration|end_time)(__(gt|gte|lt|lte))?$/.test(name) ||
  name === 'hangup_cause_code' ||
  name === 'hangup_source' ||
  name === 'stir_verification';

const ListCallsQuery = Type.Intersect([
  ListQuery,
  Type.Object({
    status: Type.Optional(Status),
    from_number: Type.Optional(Type.String()),
    to_number: Type.Optional(Type.String()),
    call_direction: Type.Optional(
      Type.Union([Type.Literal('inbound'), Type.Literal('outbound')], {
        description: 'inbound or outbound',
      }),
    ),
    ...variants('bill_duration', Seconds),
    ...variants('end_time', EndTime),
    hangup_cause_code: Type.Optional(Type.Integer({ description: 'an integer cause code' })),
    hangup_source: Type.Optional(
      Type.Union([Type.Literal('customer'), Type.Literal('carrier'), Type.Literal('siptrunk')], {
        description: 'one of customer, carrier, siptrunk',
      }),
    ),
    stir_verification: Type.Optional(
      Type.Union(
        [Type.Literal('Verified'), Type.Literal('Not Verified'), Type.Literal('Not Applicable')],
        { description: 'one of Verified, Not Verified, Not Applicable' },
      ),
    ),
  }),
]);
type ListCallsQuery = Static<typeof ListCallsQuery>;

const CallParams = Type.Object({ auth_id: Type.String(), call_uuid: Type.String() });
const CallQuery = Type.Object({ status: Type.Optional(Status) });

const CallObject = Type.Object({
  call_uuid: Type.String(),
  from_number: Type.String(),
  to_number: Type.String(),
  from_iso: Type.String(),
  to_iso: Type.String(),
  call_direction: Type.String(),
  initiation_time: Type.String(),
  answer_time: Nullable(Type.String()),
  end_time: Type.String(),
  call_duration: Type.Integer(),
  ring_duration: Type.Integer(),
  bill_duration: Type.Integer(),
  billed_duration: Type.Integer(),
  total_amount: Type.String(),
  total_rate: Type.String(),
  parent_call_uuid: Nullable(Type.String()),
  conference_uuid: Nullable(Type.String()),
  hangup_cause_name: Type.String(),
  hangup_cause_code: Type.Integer(),
  hangup_source: Type.String(),
  stir_verification: Type.String(),
  stir_attestation: Type.String(),
  source_ip: Type.String(),
  resource_uri: Type.String(),
  call_state: Type.String(),
  recording_duration_ms: Type.Optional(
    Type.Integer({ description: "ms the call's recordings wrote, summed" }),
  ),
  recording_amount: Type.Optional(
    Type.String({ description: "what the call's recordings were charged, summed" }),
  ),
  machine_detection: Type.Optional(
    Nullable(
      Type.Object({
        machine: Type.Boolean(),
        result: Type.String(),
        reason: Type.String(),
        decision_ms: Type.Integer(),
        mode: Type.String(),
      }),
    ),
  ),
});

/** Inclusive bounds on end_time in ms; the store's index answers them directly. */
export interface CallWindow {
  min: number;
  /** undefined: up to the newest record. */
  max: number | undefined;
}

/**
 * The end_time window a list reads. Without end_time filters: the last 7 days. With only an
 * upper bound: the 7 days before it; with only a lower bound: from it to now. A window wider
 * than 30 days is refused; whatever it asks, nothing older than 90 days is read. null when the
 * window is empty.
 */
export function callWindow(query: Record<string, unknown>, now: number): CallWindow | null {
  const window = timeWindow(query, 'end_time', now, (raw, comparison, filter) =>
    endTimeBound(raw, filter, comparison),
  );
  const min = Math.max(window.min, now - CALL_RETENTION_MS);
  if (window.max === undefined) return { min, max: undefined };
  return min > window.max ? null : { min, max: window.max };
}

/**
 * One end_time filter as inclusive ms bounds. Records hold whole milliseconds (whole seconds in
 * fact), the filter microseconds, so each comparison rounds the side that keeps it exact.
 */
function endTimeBound(
  raw: string,
  field: string,
  comparison: Comparison,
): { min?: number; max?: number } {
  const micros = parseEndTime(raw, field);
  const floor = Math.floor(micros / 1000);
  const ceil = Math.ceil(micros / 1000);
  switch (comparison) {
    case '__gt':
      return { min: floor + 1 };
    case '__gte':
      return { min: ceil };
    case '__lt':
      return { max: ceil - 1 };
    case '__lte':
      return { max: floor };
    default:
      return { min: ceil, max: floor };
  }
}

/** `YYYY-MM-DD HH:MM[:ss[.uuuuuu]]`, read as UTC, → µs since the epoch. */
function parseEndTime(raw: string, field: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?$/.exec(raw);
  const [y, mo, d, h, mi, s] = (m ?? []).slice(1, 7).map((part) => Number(part ?? 0));
  const ms = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
  const date = new Date(ms);
  const real =
    m !== null &&
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo! - 1 &&
    date.getUTCDate() === d &&
    h! < 24 &&
    mi! < 60 &&
    s! < 60;
  if (!real)
    throw invalidParameter(`invalid ${field}: must be a UTC time YYYY-MM-DD HH:MM[:ss[.uuuuuu]]`);
  return ms * 1000 + Number((m[7] ?? '').padEnd(6, '0'));
}

/** The filters no index answers; null when the query has none. */
function recordFilter(q: ListCallsQuery): ((c: CallRecord) => boolean) | null {
  const tests: ((c: CallRecord) => boolean)[] = [];
  if (q.from_number !== undefined) {
    const from = numberFilter(q.from_number);
    tests.push((c) => from(c.from_number));
  }
  if (q.to_number !== undefined) {
    const to = numberFilter(q.to_number);
    tests.push((c) => to(c.to_number));
  }
  if (q.call_direction !== undefined) tests.push((c) => c.call_direction === q.call_direction);
  if (q.hangup_cause_code !== undefined)
    tests.push((c) => c.hangup_cause_code === q.hangup_cause_code);
  if (q.hangup_source !== undefined) {
    const sources = HANGUP_SOURCE_FILTERS[q.hangup_source];
    tests.push((c) => sources.includes(c.hangup_source));
  }
  if (q.stir_verification !== undefined)
    tests.push((c) => c.stir_verification === q.stir_verification);
  const durations = q as unknown as Record<string, number | undefined>;
  const compare: Record<Comparison, (a: number, b: number) => boolean> = {
    '': (a, b) => a === b,
    __gt: (a, b) => a > b,
    __gte: (a, b) => a >= b,
    __lt: (a, b) => a < b,
    __lte: (a, b) => a <= b,
  };
  for (const comparison of COMPARISONS) {
    const value = durations[`bill_duration${comparison}`];
    if (value !== undefined) tests.push((c) => compare[comparison](c.bill_duration, value));
  }
  return tests.length === 0 ? null : (c) => tests.every((t) => t(c));
}

/**
 * A completed call's record, if the principal may see it and it is within retention; 404
 * otherwise.
 */
export async function findCallRecord(
  { state, clock }: Pick<ApiContext, 'state' | 'clock'>,
  principal: Principal,
  callUuid: string,
): Promise<CallRecord> {
  const found = await state.calls.get(principal.tenant, callUuid);
  const retained = found && recordTimeMs(found.end_time) >= clock.now() - CALL_RETENTION_MS;
  if (!found || !retained || !visibleTo(found, principal)) throw notFound(`call ${callUuid}`);
  return found;
}

export function callRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, clock, control } = context;
  const present = (principal: Principal, c: CallRecord): Static<typeof CallObject> => ({
    call_uuid: c.call_uuid,
    from_number: c.from_number,
    to_number: c.to_number,
    from_iso: c.from_iso,
    to_iso: c.to_iso,
    call_direction: c.call_direction,
    initiation_time: c.initiation_time,
    answer_time: c.answer_time,
    end_time: c.end_time,
    call_duration: c.call_duration,
    ring_duration: c.ring_duration,
    bill_duration: c.bill_duration,
    billed_duration: c.billed_duration,
    total_amount: c.total_amount,
    total_rate: c.total_rate,
    parent_call_uuid: c.parent_call_uuid,
    conference_uuid: c.conference_uuid,
    hangup_cause_name: c.hangup_cause_name,
    hangup_cause_code: c.hangup_cause_code,
    hangup_source: c.hangup_source,
    stir_verification: c.stir_verification,
    stir_attestation: c.stir_attestation,
    source_ip: c.source_ip,
    resource_uri: uris.account(principal.authId, 'Call', c.call_uuid),
    call_state: c.call_state,
    ...(c.machine_detection ? { machine_detection: c.machine_detection } : {}),
    ...(c.recording_duration_ms === undefined
      ? {}
      : { recording_duration_ms: c.recording_duration_ms, recording_amount: c.recording_amount }),
  });

  /** One page of the completed calls the principal can see, newest end_time first. */
  const listCompletedCalls = async (principal: Principal, q: ListCallsQuery) => {
    const window = callWindow(q, clock.now());
    if (!window) return { items: [], total: 0 };
    const index = listIndex(principal);
    const bounds = { index, scoreMin: window.min, scoreMax: window.max };
    const filter = recordFilter(q);
    if (!filter)
      return state.calls.page(principal.tenant, { ...bounds, offset: q.offset, limit: q.limit });
    // The window is at most 30 days; only it is read, then filtered here.
    const { items } = await state.calls.page(principal.tenant, { ...bounds, offset: 0, limit: 0 });
    const matches = items.filter(filter);
    return { items: matches.slice(q.offset, q.offset + q.limit), total: matches.length };
  };

  app.get('/v1/Account/:auth_id/Call/', {
    schema: {
      tags: ['Call'],
      summary: 'List calls',
      params: AuthIdParams,
      querystring: ListCallsQuery,
      response: {
        200: Type.Union([ListBody(CallObject), LiveCallIds]),
        ...errorResponses(400, 401),
      },
    },
    handler: async (request) => {
      const principal = request.principal;
      const q = request.query;
      if (q.status !== undefined) {
        const recordOnly = Object.keys(q).find(isRecordFilter);
        if (recordOnly !== undefined) {
          throw invalidParameter(
            `invalid ${recordOnly}: it filters completed calls, not status=${q.status}`,
          );
        }
        const found = await control.list(callOwner(principal), q.status, q);
        // voice-calls-and-streams.md: queued calls "max 20 per request"; limit (at most 20)
        // and offset page them as they page the records.
        const page = q.status === 'queued' ? found.slice(q.offset, q.offset + q.limit) : found;
        return { api_id: request.id, calls: page.map((call) => call.call_uuid) };
      }
      const { items, total } = await listCompletedCalls(principal, q);
      return uris.list(
        request,
        { limit: q.limit, offset: q.offset, total },
        items.map((c) => present(principal, c)),
      );
    },
  });

  app.get('/v1/Account/:auth_id/Call/:call_uuid/', {
    schema: {
      tags: ['Call'],
      summary: 'Retrieve a call',
      params: CallParams,
      querystring: CallQuery,
      response: {
        200: Type.Union([WithApiId(CallObject), WithApiId(LiveCallObject)]),
        ...errorResponses(400, 401, 404),
      },
    },
    handler: async (request) => {
      const { call_uuid } = request.params;
      const { status } = request.query;
      if (status !== undefined) {
        const found = await findInView(control, callOwner(request.principal), status, call_uuid);
        return { api_id: request.id, ...presentLiveCall(found) };
      }
      const found = await findCallRecord(context, request.principal, call_uuid);
      return { api_id: request.id, ...present(request.principal, found) };
    },
  });
}
