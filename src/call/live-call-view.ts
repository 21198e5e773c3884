import type { LiveCall } from './call-engine.js';
import { numberFilter } from '../core/number-filter.js';

/**
 * A call in progress as the API shows it (voice-calls-and-streams.md, Live call, with the
 * fields wire-compat.md adds), plus when it started, to order calls gathered from several
 * nodes. call_status is `in-progress` once answered, `ringing` before (the value the call's
 * own callbacks carry at that moment), and `queued` for a call of a request not dialled yet.
 * session_start is '' until the call rings or is answered.
 */
export interface LiveCallView {
  call_uuid: string;
  direction: string;
  from: string;
  to: string;
  caller_name: string;
  call_status: string;
  session_start: string;
  request_uuid: string;
  stir_attestation: string;
  stir_verification: string;
  /** Epoch ms the call started (not shown by the API). */
  initiated: number;
}

/** The filters of the list query that also apply to calls in progress. */
export interface LiveCallFilters {
  from_number?: string;
  to_number?: string;
  call_direction?: 'inbound' | 'outbound';
}

/**
 * The view of one live call. Status, session start and STIR fields are read from the
 * parameters the call sends its own callbacks, so the API and the callbacks never disagree.
 */
export function liveCallView({ call }: LiveCall): LiveCallView {
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
    initiated: call.leg.times.initiation,
  };
}

export function matchesLiveFilters(call: LiveCallView, filters: LiveCallFilters): boolean {
  const { from_number, to_number, call_direction } = filters;
  return (
    (from_number === undefined || numberFilter(from_number)(call.from)) &&
    (to_number === undefined || numberFilter(to_number)(call.to)) &&
    (call_direction === undefined || call.direction === call_direction)
  );
}
