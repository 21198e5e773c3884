import { Type, type Static } from 'typebox';
import type { CallOwner } from '../../call/call-launcher.js';
import type { LiveCallView } from '../../call/live-call-view.js';
import type { CallControl, CallView } from '../../call/live-control.js';
import { conflict, notFound, type ApiError } from '../../core/errors.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
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

/** A live call's view as the API shows it (without the start time it is ordered by). */
export function presentLiveCall(view: LiveCallView): LiveCallObject {
  const { initiated, ...shown } = view;
  void initiated;
  return shown;
}

/** One call of a view; 404 when the viewer has no such call in that view. */
export async function findInView(
  control: CallControl,
  viewer: CallOwner,
  view: CallView,
  callUuid: string,
): Promise<LiveCallView> {
  const found = await control.get(viewer, view, callUuid);
  if (!found) throw notFound(`${view} call ${callUuid}`);
  return found;
}

/**
 * `GET /v2/Account/{auth_id}/Call/`: the live calls (the same set as `Call/?status=live`) as
 * live call objects, in the list envelope of every other list (`api_id`, `meta`, `objects`),
 * paged by limit and offset. It is registered in the authenticated scope, so it takes the same
 * HTTP Basic credentials and the same auth_id check as the /v1 paths.
 */
export function liveCallRoutes(app: TypedApp, { control, uris }: ApiContext): void {
  app.get('/v2/Account/:auth_id/Call/', {
    schema: {
      tags: ['Call'],
      summary: 'List live calls',
      params: AuthIdParams,
      querystring: ListQuery,
      response: { 200: ListBody(LiveCallObject), ...errorResponses(400, 401) },
    },
    handler: async (request) => {
      const { limit, offset } = request.query;
      const live = await control.list(callOwner(request.principal), 'live');
      return uris.list(
        request,
        { limit, offset, total: live.length },
        live.slice(offset, offset + limit).map(presentLiveCall),
      );
    },
  });
}
