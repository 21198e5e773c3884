import { Type, type Static } from 'typebox';
import type { CallEngine, LiveCall } from '../../call/call-engine.js';
import type { CallOwner } from '../../call/call-launcher.js';
import { conflict, notFound, type ApiError } from '../../core/errors.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { numberFilter } from '../number-filter.js';
import { AuthIdParams, errorResponses, ListBody, ListQuery } from '../schemas.js';

/**
 * A call in progress as the API shows it (voice-calls-and-streams.md, Live call, with the
 * fields wire-compat.md adds). call_status is `in-progress` once answered, `ringing` before
 * (the value the call's own callbacks carry at that moment), and `queued` for a call of a
 * request not dialled yet. session_start is '' until the call rings or is answered.
 */
export const LiveCallObject = Type.Object({
  call_uuid: Type.String(),
  direction: Type.String(),
  from: Type.String(),
  to: Type.String(),
  caller_name: Type.String(),
  call_status: Type.String(),
  session_start: Type.String(),
  request_uuid: Type.String(),
  stir_attestation: Type.String(),
  stir_verification: Type.String(),
});
export type LiveCallObject = Static<typeof LiveCallObject>;

export const LiveCallIds = Type.Object({ api_id: Type.String(), calls: Type.Array(Type.String()) });

/** The filters of the list query that also apply to calls in progress. */
export interface LiveCallFilters {
  from_number?: string;
  to_number?: string;
  call_direction?: 'inbound' | 'outbound';
}

export type CallView = 'live' | 'queued';

/** Speech, digits or a stream asked of a call (or leg) that is not answered and has no early media. */
export const notConnected = (uuid: string, legs = 'aleg'): ApiError =>
  conflict(
    `call ${uuid} has no audio yet${legs === 'aleg' ? '' : ` on ${legs}`}: it is not answered`,
  );

/** The viewer the call engine takes, from the authenticated principal. */
export function callOwner(principal: Principal): CallOwner {
  const { authId, tenant, isMain } = principal;
  return { authId, tenant, isMain };
}

/**
 * The calls of one view, oldest first: `live` holds the dialled calls not yet over (ringing or
 * answered), `queued` the calls of a request still waiting to be dialled.
 */
export function callsInView(
  engine: CallEngine,
  viewer: CallOwner,
  view: CallView,
  filters: LiveCallFilters = {},
): LiveCall[] {
  const entries = view === 'queued' ? engine.queuedCalls(viewer) : engine.liveCalls(viewer);
  const matches = callFilter(filters);
  return entries
    .filter(({ call }) => !call.over && (view === 'queued' || call.dialled))
    .filter(({ call }) => matches(call))
    .sort((a, b) => a.call.leg.times.initiation - b.call.leg.times.initiation);
}

function callFilter(filters: LiveCallFilters): (call: LiveCall['call']) => boolean {
  const always = () => true;
  const from = filters.from_number === undefined ? always : numberFilter(filters.from_number);
  const to = filters.to_number === undefined ? always : numberFilter(filters.to_number);
  const direction = filters.call_direction;
  return (call) =>
    from(call.init.from) &&
    to(call.init.to) &&
    (direction === undefined || call.direction === direction);
}

/** One call of a view; 404 when the viewer has no such call in that view. */
export function findInView(
  engine: CallEngine,
  viewer: CallOwner,
  view: CallView,
  callUuid: string,
): LiveCall {
  const entry = engine.find(viewer, callUuid);
  const inView = entry !== null && !entry.call.over && (view === 'queued') === !entry.call.dialled;
  if (!inView) throw notFound(`${view} call ${callUuid}`);
  return entry;
}

/**
 * The live call object. Status, session start and STIR fields are read from the parameters the
 * call sends its own callbacks, so the API and the callbacks never disagree.
 */
export function presentLiveCall({ call }: LiveCall): LiveCallObject {
  const params = call.requestParams();
  return {
    call_uuid: call.uuid,
    direction: call.direction,
    from: call.init.from,
    to: call.init.to,
    caller_name: call.init.callerName ?? '',
    call_status: call.dialled ? (params.CallStatus ?? 'ringing') : 'queued',
    session_start: params.SessionStart ?? '',
    request_uuid: call.init.requestUuid ?? '',
    stir_attestation: params.STIRAttestation ?? '',
    stir_verification: params.STIRVerification ?? 'Not Applicable',
  };
}

/**
 * `GET /v2/Account/{auth_id}/Call/`: the live calls (the same set as `Call/?status=live`) as
 * live call objects, in the list envelope of every other list (`api_id`, `meta`, `objects`),
 * paged by limit and offset. It is registered in the authenticated scope, so it takes the same
 * HTTP Basic credentials and the same auth_id check as the /v1 paths.
 */
export function liveCallRoutes(app: TypedApp, { calls, uris }: ApiContext): void {
  app.get('/v2/Account/:auth_id/Call/', {
    schema: {
      tags: ['Call'],
      params: AuthIdParams,
      querystring: ListQuery,
      response: { 200: ListBody(LiveCallObject), ...errorResponses(400, 401) },
    },
    handler: (request) => {
      const { limit, offset } = request.query;
      const live = callsInView(calls, callOwner(request.principal), 'live');
      return uris.list(
        request,
        { limit, offset, total: live.length },
        live.slice(offset, offset + limit).map(presentLiveCall),
      );
    },
  });
}
