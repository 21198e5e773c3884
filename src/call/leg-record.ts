import type { CallbackRequest } from '../callbacks/index.js';
import type { CallConversion, CallType, MachineDetectionOutcome } from '../state/records.js';
import type { CallRecordingTotal } from './billing/recording-charge.js';
import type { CallServices, CallAccount } from './call.js';
import { buildCallRecord } from './call-record.js';
import type { CallLeg } from './legs/call-leg.js';
import type { LegEnd } from './legs/leg-end.js';

/** What a leg's record needs besides the leg itself. */
export interface LegFacts {
  requestUuid: string | null;
  from: string;
  to: string;
  owner: CallAccount;
  sourceIp: string;
  callType?: CallType;
  parentCallUuid?: string | null;
  /** Conversion feedback posted while the call was live. */
  conversion?: CallConversion | null;
  /** Answering-machine detection's outcome, when it ran to a verdict. */
  machineDetection?: MachineDetectionOutcome | null;
  /** The conference the leg joined. */
  conferenceUuid?: string | null;
  /** What its recordings came to, when it was recorded. */
  recording?: CallRecordingTotal | null;
}

/**
 * Writes the record of a leg that has ended (its times, cause and charge), then sends `hangup`
 * (the call's hangup callback); what the store does not take now is owed (OwedRecords).
 */
export async function writeLegRecord(
  services: Pick<CallServices, 'records' | 'deck'>,
  leg: CallLeg,
  end: LegEnd,
  facts: LegFacts,
  hangup?: CallbackRequest | null,
): Promise<void> {
  const times = leg.times;
  const record = {
    ...buildCallRecord(
      {
        callUuid: leg.uuid,
        requestUuid: facts.requestUuid,
        direction: leg.direction,
        callType: facts.callType ?? 'voice',
        from: facts.from,
        to: facts.to,
        initiatedAt: times.initiation,
        answeredAt: times.answer ?? null,
        endedAt: times.end ?? times.initiation,
        hangupCauseCode: end.cause.code,
        hangupCauseName: end.cause.name,
        hangupSource: end.source,
        parentCallUuid: facts.parentCallUuid ?? null,
        conferenceUuid: facts.conferenceUuid ?? null,
        sourceIp: facts.sourceIp,
        account: facts.owner.account,
        subaccount: facts.owner.subaccount,
      },
      services.deck,
    ),
    conversion: facts.conversion ?? null,
    ...(facts.machineDetection ? { machine_detection: facts.machineDetection } : {}),
    ...facts.recording,
  };
  await services.records.write({ kind: 'call', record }, hangup);
}
