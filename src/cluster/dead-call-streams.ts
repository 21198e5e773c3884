import { endedStreamRecord, streamStatusParams } from '../call/streams/stream-status.js';
import type { CallbackDelivery } from '../callbacks/index.js';
import type { State } from '../state/state.js';
import type { LiveCallEntry } from './live-call-directory.js';

/** The Reason of a dead node's streams' status callbacks. */
export const NODE_FAILURE_REASON = 'the gateway node running the call failed';

/**
 * Ends the streams of a call whose node died, as streams whose connection dropped (the voice
 * document's "Stream failed (connection failed or dropped)"): each stream record still open is
 * closed at `endedAt` as failed, billed from its connection to then, and its status callback
 * gets DroppedStream with Status failed. The open records are found by the call (the streams'
 * `call:` index), their callback settings in the call's live entry: a stream that started as
 * the node died (its record written, the entry not yet) is closed without a callback.
 * Resolves to how many were closed.
 */
export async function closeStreamsOfDeadCall(
  entry: LiveCallEntry,
  endedAt: number,
  services: {
    state: State;
    callbacks: CallbackDelivery;
    /** USD per started minute of streaming. */
    streamRate: string;
    log: { warn(object: object, message: string): void };
  },
): Promise<number> {
  const { state, callbacks, streamRate, log } = services;
  const records = await state.streams.all(entry.account, `call:${entry.uuid}`);
  const open = records.filter((r) => r.end_time === null);
  for (const record of open) {
    const live = entry.streams?.find((s) => s.streamId === record.stream_id);
    const connectedAt = live?.connectedAt ?? null;
    const done = endedStreamRecord(record, {
      endedAt,
      streamedMs: connectedAt === null ? 0 : Math.max(0, endedAt - connectedAt),
      rate: streamRate,
      status: 'failed',
    });
    await state.streams.update(done, record);
    if (!live?.statusCallback) continue;
    const notice = {
      streamId: record.stream_id,
      callUuid: entry.uuid,
      serviceUrl: live.serviceUrl,
      extraHeaders: live.extraHeaders,
    };
    // Sent, not awaited: a slow client must not hold up the closing of the other calls.
    callbacks
      .send({
        url: live.statusCallback.url,
        method: live.statusCallback.method,
        accountId: entry.authId,
        params: streamStatusParams(notice, 'dropped', endedAt, { Reason: NODE_FAILURE_REASON }),
      })
      .catch((error: Error) =>
        log.warn(
          { streamId: record.stream_id, reason: error.message },
          'stream callback of a dead node failed',
        ),
      );
  }
  return open.length;
}
