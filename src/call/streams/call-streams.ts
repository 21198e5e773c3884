import { randomUUID } from 'node:crypto';
import type { CallbackDelivery } from '../../callbacks/index.js';
import { ApiError } from '../../core/errors.js';
import { describeHit, type AccountLimiter } from '../../limits/account-limiter.js';
import { formatTime } from '../../core/record-time.js';
import type { StreamForkSpec, StreamNews } from '../../media/worker/protocol.js';
import type { StreamRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';
import type { CallLeg } from '../legs/call-leg.js';
import type { OwedRecords } from '../owed-records.js';
import type { StreamRequest } from './stream-request.js';
import { endedStreamRecord, streamStatusParams, type StreamOutcome } from './stream-status.js';

/** What a call's streams need from it and from the gateway. */
export interface StreamHost {
  uuid: string;
  leg: CallLeg;
  owner: { authId: string; account: string; subaccount: string | null };
  services: {
    state: State;
    callbacks: CallbackDelivery;
    /** Where its record goes when it ends, the store away or not. */
    records: Pick<OwedRecords, 'write'>;
    /** The account limits (concurrent streams); none: no limits. */
    limits?: AccountLimiter;
    log: { warn(object: object, message: string): void };
  };
  /** USD per started minute of streaming. */
  streamRate: string;
  /** Told when a stream starts, connects or ends (the cluster keeps what runs where). */
  onChange?: () => void;
}

/** What another node needs to close a running stream, should the node running it die. */
export interface LiveStream {
  streamId: string;
  serviceUrl: string;
  extraHeaders: string;
  statusCallback: { url: string; method: 'GET' | 'POST' } | null;
  /** When its server accepted the socket (billing starts there), null before. */
  connectedAt: number | null;
}

interface Running {
  request: StreamRequest;
  record: StreamRecord;
  /** Settles when the stream has ended and its record is written. */
  ended: Promise<void>;
  end: () => void;
  /** When the server accepted the socket: billing starts there, not at the request. */
  connectedAt?: number;
}

/**
 * The audio streams of one call, on the main thread: each is recorded when it starts, signed
 * and handed to the leg's media worker (which owns the socket), reported to its status callback
 * as the worker's news comes in, and billed and closed in its record when it ends. The call
 * ending ends them all, whatever the worker says afterwards.
 */
export class CallStreams {
  private readonly running = new Map<string, Running>();

  constructor(private readonly host: StreamHost) {}

  /**
   * Starts a stream; resolves with its id once its record is stored and the worker has it. A
   * stream beyond the account's limit of concurrent streams is refused: with `refusal` throw
   * (a REST request), a 429 and no stream; with record (the answer XML's Stream), a stream that
   * fails at once, recorded and reported to its status callback with the reason.
   */
  async start(request: StreamRequest, refusal: 'throw' | 'record' = 'record'): Promise<string> {
    const { host } = this;
    const streamId = randomUUID();
    const hit = (await host.services.limits?.admit('streams', host.owner, streamId)) ?? null;
    if (hit && refusal === 'throw') throw new ApiError('rate_limited', describeHit(hit));
    const now = Date.now();
    const record: StreamRecord = {
      account: host.owner.account,
      subaccount: host.owner.subaccount,
      created: now,
      stream_id: streamId,
      call_uuid: host.uuid,
      service_url: request.serviceUrl,
      bidirectional: request.bidirectional,
      audio_track: request.audioTrack,
      content_type: request.contentType,
      start_time: formatTime(now)!,
      end_time: null,
      bill_duration: null,
      rounded_bill_duration: null,
      billed_amount: null,
      status: 'connecting',
    };
    await host.services.state.streams.create(record);
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    this.running.set(streamId, { request, record, ended, end });
    this.host.onChange?.();
    if (hit) {
      await this.finish(streamId, 'failed', describeHit(hit), 0);
      return streamId;
    }
    let started = false;
    try {
      const spec = await this.forkSpec(streamId, request);
      started = await host.leg.startStream(spec);
    } catch (error) {
      await this.finish(
        streamId,
        'failed',
        `the stream could not start: ${(error as Error).message}`,
        0,
      );
      return streamId;
    }
    if (!started) await this.finish(streamId, 'failed', 'the call has no media to stream', 0);
    return streamId;
  }

  /** What the media worker needs to run the stream, its upgrade request signed. */
  private async forkSpec(streamId: string, request: StreamRequest): Promise<StreamForkSpec> {
    const { host } = this;
    const headers =
      (await host.services.callbacks.signedHeaders(host.owner.authId, request.serviceUrl)) ?? {};
    const [encoding, rate] = parseContentType(request.contentType);
    return {
      streamId,
      callId: host.uuid,
      accountId: host.owner.authId,
      serviceUrl: request.serviceUrl,
      headers,
      extraHeaders: request.extraHeaders,
      tracks: request.audioTrack === 'both' ? ['inbound', 'outbound'] : [request.audioTrack],
      encoding,
      rate,
      bidirectional: request.bidirectional,
      timeoutMs: request.streamTimeout * 1000,
      noiseCancellationLevel: request.noiseCancellation ? request.noiseCancellationLevel : null,
    };
  }

  /** Stops a running stream (REST); false when it is not running. */
  async stop(streamId: string): Promise<boolean> {
    const running = this.running.get(streamId);
    if (!running) return false;
    const stopped = await this.host.leg.stopStream(streamId).catch(() => false);
    // The worker's news finishes it; if the worker no longer had it, finish it here.
    if (!stopped) await this.finish(streamId, 'stopped', 'stopped', 0);
    await running.ended;
    return true;
  }

  async stopAll(): Promise<number> {
    const ids = [...this.running.keys()];
    await Promise.all(ids.map((id) => this.stop(id)));
    return ids.length;
  }

  /** The streams running now. */
  live(): LiveStream[] {
    return [...this.running.values()].map(({ request, record, connectedAt }) => ({
      streamId: record.stream_id,
      serviceUrl: request.serviceUrl,
      extraHeaders: request.extraHeaders,
      statusCallback: request.statusCallbackUrl
        ? { url: request.statusCallbackUrl, method: request.statusCallbackMethod }
        : null,
      connectedAt: connectedAt ?? null,
    }));
  }

  /** Settles when the stream has ended (at once when it is not running): keepCallAlive. */
  whenEnded(streamId: string): Promise<void> {
    return this.running.get(streamId)?.ended ?? Promise.resolve();
  }

  /** The worker's news of a stream. */
  news(streamId: string, news: StreamNews): void {
    const running = this.running.get(streamId);
    if (!running) return;
    if (news.state === 'connected') {
      running.connectedAt = Date.now();
      const connected = { ...running.record, status: 'connected' as const };
      void this.host.services.state.streams.update(connected, running.record).catch(() => {});
      running.record = connected;
      this.host.onChange?.();
      this.callback(running, 'connected', {});
      return;
    }
    if (news.state === 'degraded') {
      this.callback(running, 'degraded', { BufferUsage: `${news.percent}%` });
      return;
    }
    void this.finish(streamId, news.state, news.message, news.connectedMs);
  }

  /** The call is over: every stream still running ends as stopped. */
  async callEnded(): Promise<void> {
    await Promise.all(
      [...this.running.keys()].map((id) => this.finish(id, 'stopped', 'the call ended', null)),
    );
  }

  private async finish(
    streamId: string,
    state: Exclude<StreamNews['state'], 'connected' | 'degraded'>,
    message: string,
    connectedMs: number | null,
  ): Promise<void> {
    const running = this.running.get(streamId);
    if (!running) return;
    this.running.delete(streamId);
    if (state === 'failed' || state === 'dropped') {
      // The server went away or could not keep up: the operator hears of it, not only the
      // tenant's status callback.
      this.host.services.log.warn(
        { streamId, callUuid: this.host.uuid, state, reason: message },
        'audio stream ended by its WebSocket server or connection',
      );
    }
    void this.host.services.limits
      ?.release('streams', streamId)
      .catch((error: Error) =>
        this.host.services.log.warn({ err: error, streamId }, 'the stream limit was not released'),
      );
    const now = Date.now();
    // The worker's own figure when it has one; else (the call ended under the stream) from
    // the connection, not the request: the connection attempts are not billed.
    const streamedMs =
      connectedMs ?? (running.connectedAt === undefined ? 0 : now - running.connectedAt);
    const done = endedStreamRecord(running.record, {
      endedAt: now,
      streamedMs,
      rate: this.host.streamRate,
      status: state === 'dropped' ? 'failed' : state,
    });
    await this.host.services.records.write({ kind: 'stream', record: done });
    this.host.onChange?.();
    this.callback(running, state, { Reason: message });
    running.end();
  }

  private callback(running: Running, outcome: StreamOutcome, extra: Record<string, string>): void {
    const { request, record } = running;
    if (!request.statusCallbackUrl) return;
    const notice = {
      streamId: record.stream_id,
      callUuid: this.host.uuid,
      serviceUrl: request.serviceUrl,
      extraHeaders: request.extraHeaders,
    };
    this.host.services.callbacks
      .send({
        url: request.statusCallbackUrl,
        method: request.statusCallbackMethod,
        accountId: this.host.owner.authId,
        params: streamStatusParams(notice, outcome, Date.now(), extra),
      })
      .catch((error: Error) =>
        this.host.services.log.warn(
          { streamId: record.stream_id, reason: error.message },
          'stream callback failed',
        ),
      );
  }
}

function parseContentType(type: string): ['l16' | 'mulaw', 8000 | 16000 | 24000] {
  const [kind, rate] = type.split(';rate=');
  return [kind === 'audio/x-mulaw' ? 'mulaw' : 'l16', Number(rate) as 8000 | 16000 | 24000];
}
