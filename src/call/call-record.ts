import { formatTime } from '../core/record-time.js';
import { countryOf as countryOfDigits } from '../core/phone-number.js';
import type { Collection } from '../state/collection.js';
import type {
  CallDirection,
  CallRecord,
  CallType,
  HangupSource,
  StirVerification,
} from '../state/records.js';
import { chargeCall, NO_RATE } from './billing/call-charge.js';
import { destinationKey, SIP_PREFIX, type RateDeck } from './billing/rate-deck.js';

/** voice-calls-and-streams.md, Limits: call history is retrievable for 90 days. */
export const CALL_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

/** What the call engine knows about a leg once it has ended. */
export interface FinishedLeg {
  callUuid: string;
  /** The create-call request that placed the leg; null for an inbound call. */
  requestUuid: string | null;
  direction: CallDirection;
  callType?: CallType;
  from: string;
  to: string;
  initiatedAt: Date | number;
  /** null when the leg was never answered. */
  answeredAt: Date | number | null;
  endedAt: Date | number;
  hangupCauseCode: number;
  hangupCauseName: string;
  hangupSource: HangupSource;
  parentCallUuid?: string | null;
  conferenceUuid?: string | null;
  /** Origin IP of the call request (the API client, or the INVITE's sender). */
  sourceIp: string;
  stirVerification?: StirVerification;
  stirAttestation?: string;
  /** The owner: the main account, and the subaccount when the call is one of its. */
  account: string;
  subaccount: string | null;
}

/** The call_state of an unanswered leg, by hangup cause (wire-compat.md lists the codes). */
const UNANSWERED_STATES: Record<number, string> = {
  1000: 'NO ANSWER', // Canceled before the answer
  3000: 'NO ANSWER',
  3010: 'BUSY',
  3020: 'NO ANSWER', // Rejected
  6010: 'NO ANSWER', // Ring Timeout Reached
};

/**
 * The CDR of a finished leg, billed from the deck. Times are cut to whole seconds before any
 * duration is taken, so durations always agree with the times the record shows.
 */
export function buildCallRecord(leg: FinishedLeg, deck: RateDeck): CallRecord {
  const initiated = wholeSeconds(leg.initiatedAt);
  const answered = leg.answeredAt === null ? null : wholeSeconds(leg.answeredAt);
  const ended = wholeSeconds(leg.endedAt);
  const ringEnd = answered ?? ended;
  const charge = chargeCall(
    answered === null ? null : (ended - answered) / 1000,
    deck.rateFor(billedNumber(leg))?.ratePerMinute ?? NO_RATE,
  );
  return {
    account: leg.account,
    subaccount: leg.subaccount,
    created: initiated,
    call_uuid: leg.callUuid,
    request_uuid: leg.requestUuid,
    call_type: leg.callType ?? 'voice',
    from_number: leg.from,
    to_number: leg.to,
    from_iso: countryOf(leg.from),
    to_iso: countryOf(leg.to),
    call_direction: leg.direction,
    initiation_time: formatTime(initiated)!,
    answer_time: formatTime(answered),
    end_time: formatTime(ended)!,
    call_duration: (ended - initiated) / 1000,
    ring_duration: (ringEnd - initiated) / 1000,
    ...charge,
    parent_call_uuid: leg.parentCallUuid ?? null,
    conference_uuid: leg.conferenceUuid ?? null,
    hangup_cause_name: leg.hangupCauseName,
    hangup_cause_code: leg.hangupCauseCode,
    hangup_source: leg.hangupSource,
    stir_verification: leg.stirVerification ?? 'Not Applicable',
    stir_attestation: leg.stirAttestation ?? '',
    source_ip: leg.sourceIp,
    call_state: answered !== null ? 'ANSWER' : (UNANSWERED_STATES[leg.hangupCauseCode] ?? 'FAILED'),
  };
}

/**
 * The number a leg is rated by. Outbound: the destination dialled. Inbound: the called number
 * (the account's own number or SIP user), never the caller's, whose origin the account does
 * not choose. Both are the leg's `to`.
 */
export function billedNumber(leg: Pick<FinishedLeg, 'direction' | 'to'>): string {
  return leg.to;
}

/** ISO 3166-1 alpha-2 country of a phone number; '' for a SIP URI or an unknown number. */
export function countryOf(party: string): string {
  if (destinationKey(party) === SIP_PREFIX) return '';
  const digits = party.replace(/[^\d]/g, '');
  if (digits === '') return '';
  return countryOfDigits(digits);
}

function wholeSeconds(time: Date | number): number {
  const ms = typeof time === 'number' ? time : time.getTime();
  return Math.floor(ms / 1000) * 1000;
}

/**
 * Removes a tenant's call records that ended more than 90 days before `now`, oldest first, at
 * most `batch` of them per call; returns how many it removed. The API never returns such records
 * anyway; this only gives their space back, and may run from any periodic task.
 */
export async function removeExpiredCallRecords(
  calls: Collection<CallRecord>,
  tenant: string,
  now: number,
  batch = 500,
): Promise<number> {
  const { items } = await calls.page(tenant, {
    scoreMax: now - CALL_RETENTION_MS - 1,
    ascending: true,
    offset: 0,
    limit: batch,
  });
  for (const record of items) await calls.remove(record);
  return items.length;
}
