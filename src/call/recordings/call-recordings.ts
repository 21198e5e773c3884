import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallbackDelivery } from '../../callbacks/index.js';
import type { CallbackMethod } from '../../callbacks/signature.js';
import type { RecordingOutcome } from '../../media/recording/recording-spec.js';
import type { Collection } from '../../state/collection.js';
import type { MediaStore } from '../../messaging/mms/media-store.js';
import {
  chargeRecording,
  totalOfRecordings,
  type CallRecordingTotal,
} from '../billing/recording-charge.js';
import type { MediaService } from '../media-service.js';
import { recordingCallbackParams, type CallbackStyle } from './recording-callback.js';
import { recordingFile } from './recording-file.js';
import type { RecordingFormat, RecordingRecord } from './recording-record.js';

/** The rate when none is set: recordings cost nothing. */
const FREE = '0.00000';

/** The call a recording is of, as the recordings need it. */
export interface RecordedCall {
  uuid: string;
  /** The media session recorded: the call's first leg. */
  sessionId: string;
  from: string;
  to: string;
  owner: { authId: string; account: string; subaccount: string | null };
}

export interface RecordingRequest {
  format: RecordingFormat;
  channels: 1 | 2;
  maxMs?: number;
  silenceMs?: number;
  /** Told when the recording is stored (or failed): API parameter names or answer XML's. */
  callback?: { url: string; method: CallbackMethod; style: CallbackStyle } | null;
  /** The request's api_id, sent back on an API-style callback. */
  apiId?: string;
  /** The conference room recorded (its mix), when it is one: the record says so from the start. */
  conference?: string;
}

/** How a recording ended once its file is stored (or could not be). */
export interface RecordingResult {
  recordingId: string;
  callUuid: string;
  url: string;
  state: 'completed' | 'failed';
  reason: RecordingOutcome['reason'];
  durationMs: number;
  startMs: number;
  endMs: number;
  message?: string;
}

export interface StartedRecording {
  recordingId: string;
  url: string;
  /** Settles once the recording has ended and its file is stored, or it failed; never rejects. */
  ended: Promise<RecordingResult>;
  /** Ends it now (it is stored as any other). */
  stop(): Promise<unknown>;
}

export interface CallRecordingsOptions {
  recordings: Collection<RecordingRecord>;
  store: MediaStore;
  media: Pick<MediaService, 'send'>;
  callbacks: Pick<CallbackDelivery, 'send'>;
  /** Where the media worker writes recordings as they run, before they go to the store. */
  spoolDir: string;
  /** The stable URL of a recording's file. */
  fileUrl(authId: string, recordingId: string, format: RecordingFormat): string;
  /** USD per started minute of a recording (VOXGATE_RECORDING_RATE); free when absent. */
  ratePerMinute?: string;
  /** This gateway node, named on each record as the one whose store has the file. */
  node?: string;
  log: {
    info(fields: object, message: string): void;
    warn(fields: object, message: string): void;
  };
}

/**
 * The recordings of calls on this node: each is written by the media worker that holds the
 * call's leg into a spool file, then (in the format asked for) put in the media store, its
 * record stored and its callback sent. A recording that cannot be written ends failed; the
 * call goes on.
 */
export class CallRecordings {
  private readonly running = new Map<string, Map<string, { url: string; sessionId: string }>>();
  /** Per call, the ms each of its recordings wrote whole (null: failed), until its record takes them. */
  private readonly recorded = new Map<string, Promise<number | null>[]>();
  private spoolReady: Promise<unknown> | null = null;

  constructor(readonly options: CallRecordingsOptions) {}

  /** Starts recording a call; throws when the worker refuses (the leg is gone). */
  async start(call: RecordedCall, request: RecordingRequest): Promise<StartedRecording> {
    const { options } = this;
    const recordingId = randomUUID();
    const url = options.fileUrl(call.owner.authId, recordingId, request.format);
    this.spoolReady ??= mkdir(options.spoolDir, { recursive: true });
    await this.spoolReady;
    const path = join(options.spoolDir, `${recordingId}.wav`);
    const mine = this.running.get(call.uuid) ?? new Map();
    mine.set(recordingId, { url, sessionId: call.sessionId });
    this.running.set(call.uuid, mine);
    const recording = {
      recordingId,
      path,
      channels: request.channels,
      ...(request.maxMs !== undefined && { maxMs: request.maxMs }),
      ...(request.silenceMs !== undefined && { silenceMs: request.silenceMs }),
    };
    const worker = options.media.send({
      type: 'startRecording',
      sessionId: call.sessionId,
      recording,
    });
    const tally = this.recorded.get(call.uuid) ?? [];
    tally.push(
      worker.then(
        (outcome) => (outcome.state === 'completed' ? outcome.durationMs : null),
        () => null,
      ),
    );
    this.recorded.set(call.uuid, tally);
    const ended = worker
      .then(
        (outcome) => this.store(call, request, url, path, outcome),
        (error: Error) => this.failed(call, recordingId, url, error.message),
      )
      .then(async (result) => {
        this.forget(call.uuid, recordingId);
        await rm(path, { force: true });
        await rm(`${path}.mp3`, { force: true });
        this.report(call, request, result);
        return result;
      });
    return { recordingId, url, ended, stop: () => this.stop(call.uuid, url) };
  }

  /**
   * What a call's recordings came to, for its record once it has ended: the ms each wrote and
   * their charge summed (null when it had none). The recordings end with the call's leg; one
   * whose worker has not told its end within `waitMs` is left out. Each call is asked once.
   */
  async recordedOn(callUuid: string, waitMs = 3000): Promise<CallRecordingTotal | null> {
    const tally = this.recorded.get(callUuid);
    if (!tally) return null;
    this.recorded.delete(callUuid);
    const durations: number[] = [];
    const all = Promise.all(tally.map((ms) => ms.then((v) => v !== null && durations.push(v))));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([all, late]);
    clearTimeout(timer);
    return totalOfRecordings([...durations], this.options.ratePerMinute ?? FREE);
  }

  /** The URLs of the recordings running on a call. */
  runningOn(callUuid: string): string[] {
    return [...(this.running.get(callUuid)?.values() ?? [])].map((r) => r.url);
  }

  /**
   * Stops the recordings of a call: the one whose URL is `url`, or all; how many it stopped.
   * Each ends as it would have (stored, its callback sent).
   */
  async stop(callUuid: string, url?: string): Promise<number> {
    const mine = [...(this.running.get(callUuid)?.entries() ?? [])].filter(
      ([, r]) => url === undefined || r.url === url,
    );
    await Promise.all(
      mine.map(([recordingId, r]) =>
        this.options.media
          .send({ type: 'stopRecording', sessionId: r.sessionId, recordingId })
          .catch(() => undefined),
      ),
    );
    return mine.length;
  }

  /** Puts a finished recording in the store and keeps its record; a failure ends it failed. */
  private async store(
    call: RecordedCall,
    request: RecordingRequest,
    url: string,
    path: string,
    outcome: RecordingOutcome,
  ): Promise<RecordingResult> {
    const { recordingId } = outcome;
    if (outcome.state === 'failed') {
      return this.failed(call, recordingId, url, outcome.message ?? 'failed', outcome);
    }
    try {
      // Streamed from the spool to the store: a recording of hours is never held in memory.
      const file = await recordingFile(path, request.format);
      const bytes = await this.options.store.putStream(recordingId, createReadStream(file));
      const now = Date.now();
      await this.options.recordings.create({
        account: call.owner.account,
        subaccount: call.owner.subaccount,
        created: now,
        recording_id: recordingId,
        ...(this.options.node !== undefined && { node: this.options.node }),
        call_uuid: call.uuid,
        auth_id: call.owner.authId,
        recording_format: request.format,
        recording_type: request.conference === undefined ? 'call' : 'conference',
        conference_name: request.conference ?? null,
        recording_url: url,
        from_number: call.from,
        to_number: call.to,
        channels: outcome.channels,
        recording_start_ms: outcome.startedAt,
        recording_end_ms: outcome.endedAt,
        recording_duration_ms: outcome.durationMs,
        file_bytes: bytes,
        ...chargeRecording(outcome.durationMs, this.options.ratePerMinute ?? FREE),
      });
    } catch (error) {
      await this.options.store.remove(recordingId).catch(() => undefined);
      const reason = `the recording could not be stored: ${(error as Error).message}`;
      return this.failed(call, recordingId, url, reason, outcome);
    }
    return {
      recordingId,
      callUuid: call.uuid,
      url,
      state: 'completed',
      reason: outcome.reason,
      durationMs: outcome.durationMs,
      startMs: outcome.startedAt,
      endMs: outcome.endedAt,
    };
  }

  private failed(
    call: RecordedCall,
    recordingId: string,
    url: string,
    message: string,
    outcome?: RecordingOutcome,
  ): RecordingResult {
    this.options.log.warn(
      { callUuid: call.uuid, recordingId, reason: message },
      'recording failed',
    );
    const startMs = outcome?.startedAt ?? Date.now();
    return {
      recordingId,
      callUuid: call.uuid,
      url,
      state: 'failed',
      reason: 'failed',
      durationMs: outcome?.durationMs ?? 0,
      startMs,
      endMs: outcome?.endedAt ?? startMs,
      message,
    };
  }

  private forget(callUuid: string, recordingId: string): void {
    const mine = this.running.get(callUuid);
    mine?.delete(recordingId);
    if (mine?.size === 0) this.running.delete(callUuid);
  }

  private report(call: RecordedCall, request: RecordingRequest, result: RecordingResult): void {
    const callback = request.callback;
    if (!callback) return;
    this.options.callbacks
      .send({
        url: callback.url,
        method: callback.method,
        accountId: call.owner.authId,
        params: recordingCallbackParams(callback.style, result, request.apiId),
      })
      .catch((error: Error) =>
        this.options.log.warn(
          { recordingId: result.recordingId, reason: error.message },
          'recording callback failed',
        ),
      );
  }
}
