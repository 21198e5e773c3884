import { formatCallbackTime, formatTime } from '../../core/record-time.js';
import type { StreamRecord } from '../../state/records.js';

/** Status callback Event and Status for each way a stream can go (wire-compat.md). */
export const STREAM_STATUS = {
  connected: { event: 'StartStream', status: 'connected' },
  stopped: { event: 'StopStream', status: 'stopped' },
  timeout: { event: 'StopStream', status: 'timeout' },
  failed: { event: 'DroppedStream', status: 'failed' },
  dropped: { event: 'DroppedStream', status: 'failed' },
  degraded: { event: 'DegradedStream', status: 'connected' },
} as const;

export type StreamOutcome = keyof typeof STREAM_STATUS;

/** Where and how a stream's status events go, as its request gave them. */
export interface StreamNotice {
  streamId: string;
  callUuid: string;
  serviceUrl: string;
  /** `key1=val1,...`, sent as is on every event ('' when none). */
  extraHeaders: string;
}

/** The parameters of a stream status callback. */
export function streamStatusParams(
  notice: StreamNotice,
  outcome: StreamOutcome,
  at: number,
  extra: Record<string, string>,
): Record<string, string> {
  const { event, status } = STREAM_STATUS[outcome];
  return {
    Event: event,
    Status: status,
    StreamID: notice.streamId,
    CallUUID: notice.callUuid,
    ServiceURL: notice.serviceUrl,
    Timestamp: formatCallbackTime(at),
    ...(notice.extraHeaders === '' ? {} : { ExtraHeaders: notice.extraHeaders }),
    ...extra,
  };
}

/**
 * A stream's record once it has ended at `endedAt` after `streamedMs` of streaming: billed per
 * started minute at `rate` USD.
 */
export function endedStreamRecord(
  record: StreamRecord,
  ending: {
    endedAt: number;
    streamedMs: number;
    rate: string;
    status: 'stopped' | 'timeout' | 'failed';
  },
): StreamRecord {
  const seconds = Math.round(ending.streamedMs / 1000);
  const minutes = seconds === 0 ? 0 : Math.ceil(seconds / 60);
  return {
    ...record,
    end_time: formatTime(ending.endedAt),
    bill_duration: seconds,
    rounded_bill_duration: minutes * 60,
    billed_amount: (minutes * Number(ending.rate)).toFixed(5),
    status: ending.status,
  };
}
