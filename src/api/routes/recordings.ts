import { Readable } from 'node:stream';
import { Type, type Static } from 'typebox';
import { chargeRecording } from '../../call/billing/recording-charge.js';
import { msFigure } from '../../call/recordings/recording-callback.js';
import { CONTENT_TYPES } from '../../call/recordings/recording-file.js';
import type { RecordingRecord } from '../../call/recordings/recording-record.js';
import { invalidParameter, notFound } from '../../core/errors.js';
import { formatTime } from '../../core/record-time.js';
import type { MediaStore } from '../../messaging/mms/media-store.js';
import type { Collection } from '../../state/collection.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { refuseOutboundUrls, urlFieldsOf } from '../outbound-urls.js';
import { findVisible, listVisible } from '../owned-resources.js';
import {
  AuthIdParams,
  errorResponses,
  HttpMethod,
  HttpUrl,
  ListBody,
  ListQuery,
  Nullable,
  WithApiId,
} from '../schemas.js';
import { spanBound, timeFilterNames, type Comparison } from '../time-window.js';
import { callOwner, notConnected } from './live-calls.js';

/** What the recordings routes need besides the API context. */
export interface RecordingRoutesContext {
  collection: Collection<RecordingRecord>;
  /** Where this node's recordings' files are. */
  store: MediaStore;
  /**
   * In a cluster: this node, and the REST base URL (`http://host:port`) of another node while
   * it is alive, null otherwise. A request for a file another node's store holds goes there.
   */
  peers?: { node: string; baseUrl(node: string): Promise<string | null> };
}

/** How long another node has to start answering for a file it holds. */
const PEER_ANSWER_MS = 10_000;

const CallParams = Type.Object({ auth_id: Type.String(), call_uuid: Type.String() });
const IdParams = Type.Object({ auth_id: Type.String(), id: Type.String() });

/** The public API's default: a recording of a call from the API lasts at most a minute. */
const DEFAULT_TIME_LIMIT_S = 60;
/** Four hours: what one recording may last. */
const MAX_TIME_LIMIT_S = 14_400;
const FORMATS = ['mp3', 'wav'] as const;

/** Call Record API (POST Call/{call_uuid}/Record/). */
const RecordBody = Type.Object({
  time_limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_TIME_LIMIT_S,
      default: DEFAULT_TIME_LIMIT_S,
      description: `seconds, an integer from 1 to ${MAX_TIME_LIMIT_S}`,
    }),
  ),
  // Checked in code, so an unknown format is named as not supported.
  file_format: Type.Optional(Type.String({ default: 'mp3', description: 'mp3 or wav' })),
  record_channel_type: Type.Optional(
    Type.Union([Type.Literal('mono'), Type.Literal('stereo')], { description: 'mono or stereo' }),
  ),
  callback_url: Type.Optional(HttpUrl),
  callback_method: Type.Optional(HttpMethod),
});

/**
 * Stop recording: `URL` names one recording of the call (body or query); none stops them all.
 * The official Node SDK snake-cases every parameter name, so it sends `url`: taken as well.
 */
function stopUrl(body: unknown, query: unknown): string | undefined {
  for (const source of [body, query]) {
    const named = source as { URL?: unknown; url?: unknown } | null | undefined;
    for (const url of [named?.URL, named?.url]) {
      if (typeof url === 'string' && url !== '') return url;
    }
  }
  return undefined;
}

const Started = Type.Object({
  api_id: Type.String(),
  message: Type.String(),
  recording_id: Type.String(),
  url: Type.String(),
});

/** The Recording resource as the public API shows it. */
const RecordingObject = Type.Object({
  add_time: Type.String(),
  call_uuid: Type.String(),
  conference_name: Nullable(Type.String()),
  from_number: Type.String(),
  to_number: Type.String(),
  recording_duration_ms: Type.String(),
  recording_end_ms: Type.String(),
  recording_start_ms: Type.String(),
  recording_format: Type.String(),
  recording_id: Type.String(),
  recording_type: Type.String(),
  recording_url: Type.String(),
  resource_uri: Type.String(),
  rounded_recording_duration: Type.Integer({ description: 'seconds, whole minutes billed' }),
  recording_rate: Type.String({ description: 'USD per started minute' }),
  recording_amount: Type.String(),
});

const ListRecordingsQuery = Type.Object({
  subaccount: Type.Optional(Type.String()),
  call_uuid: Type.Optional(Type.String()),
  ...Object.fromEntries(
    timeFilterNames('add_time').map((name) => [
      name,
      Type.Optional(Type.String({ description: 'a UTC time YYYY-MM-DD HH:MM[:ss[.uuuuuu]]' })),
    ]),
  ),
});

/** A recording's file name in its URL: `{recording_id}.{format}`. */
const FILE_NAME = /^([0-9a-f-]{36})\.(mp3|wav)$/;

/**
 * Recording calls from the API (start, stop) and the Recording resource (list, get, delete,
 * and the file itself at its URL). Every route acts only on what the account sees; anything
 * else is 404.
 */
export function recordingRoutes(
  app: TypedApp,
  context: ApiContext,
  { collection, store, peers }: RecordingRoutesContext,
): void {
  const { uris, control, outbound } = context;

  app.post('/v1/Account/:auth_id/Call/:call_uuid/Record/', {
    schema: {
      tags: ['Recording'],
      summary: 'Record a call',
      params: CallParams,
      body: RecordBody,
      response: { 202: Started, ...errorResponses(400, 401, 404, 409) },
    },
    handler: async (request, reply) => {
      const body = request.body;
      const format = fileFormat(body.file_format ?? 'mp3');
      await refuseOutboundUrls(outbound, urlFieldsOf(body, ['callback_url']));
      const { call_uuid } = request.params;
      const started = await control.record(callOwner(request.principal), call_uuid, {
        format,
        channels: body.record_channel_type === 'stereo' ? 2 : 1,
        maxMs: (body.time_limit ?? DEFAULT_TIME_LIMIT_S) * 1000,
        callback: body.callback_url
          ? { url: body.callback_url, method: body.callback_method ?? 'POST', style: 'api' }
          : null,
        apiId: request.id,
      });
      if (started === null) throw notFound(`call ${call_uuid}`);
      if (started === 'not-connected') throw notConnected(call_uuid);
      reply.code(202);
      return {
        api_id: request.id,
        message: 'call recording started',
        recording_id: started.recordingId,
        url: started.url,
      };
    },
  });

  app.delete('/v1/Account/:auth_id/Call/:call_uuid/Record/', {
    schema: {
      tags: ['Recording'],
      summary: 'Stop recording a call',
      params: CallParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const { call_uuid } = request.params;
      const url = stopUrl(request.body, request.query);
      const stopped = await control.stopRecording(callOwner(request.principal), call_uuid, url);
      if (stopped === null) throw notFound(`call ${call_uuid}`);
      if (url && stopped === 0) throw notFound(`recording ${url} on call ${call_uuid}`);
      return reply.code(204).send(null);
    },
  });

  app.get('/v1/Account/:auth_id/Recording/', {
    schema: {
      tags: ['Recording'],
      summary: 'List recordings',
      params: AuthIdParams,
      querystring: Type.Intersect([ListQuery, ListRecordingsQuery]),
      response: { 200: ListBody(RecordingObject), ...errorResponses(400, 401) },
    },
    handler: async (request) => {
      const { limit, offset, subaccount, call_uuid } = request.query;
      const added = addTimeBounds(request.query as Record<string, unknown>);
      const page = await listVisible(
        collection,
        request.principal,
        { limit, offset, ...(subaccount ? { subaccount } : {}) },
        call_uuid === undefined && added === null
          ? undefined
          : (r) =>
              (call_uuid === undefined || r.call_uuid === call_uuid) &&
              (added === null || (r.created >= added.min && r.created <= added.max)),
      );
      return uris.list(request, { limit, offset, total: page.total }, page.items.map(present));
    },
  });

  /** The recording's object; at `{recording_id}.{format}`, its file. */
  app.get('/v1/Account/:auth_id/Recording/:id/', {
    schema: {
      tags: ['Recording'],
      summary: 'Retrieve a recording, or (at recording_id.format) its file',
      params: IdParams,
      response: { 200: WithApiId(RecordingObject), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const file = FILE_NAME.exec(request.params.id);
      const id = file ? file[1]! : request.params.id;
      const found = await findVisible(collection, request.principal, id, 'recording');
      if (!file) return { api_id: request.id, ...present(found) };
      if (file[2] !== found.recording_format) throw notFound(`recording ${request.params.id}`);
      // Streamed from the store: a recording of hours is not read whole to be served.
      const body =
        (await store.open(found.recording_id)) ??
        (await holderAnswer(found, request.url, 'GET', request.headers.authorization))?.body;
      if (!body) throw notFound(`recording ${request.params.id}`);
      return reply
        .type(CONTENT_TYPES[found.recording_format])
        .header('content-length', found.file_bytes)
        .send(body as never);
    },
  });

  app.delete('/v1/Account/:auth_id/Recording/:id/', {
    schema: {
      tags: ['Recording'],
      summary: 'Delete a recording (its file and its record)',
      params: IdParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const found = await findVisible(
        collection,
        request.principal,
        request.params.id,
        'recording',
      );
      // The node holding the file removes it and the record; one that is gone leaves its file.
      const there = await holderAnswer(found, request.url, 'DELETE', request.headers.authorization);
      if (there) return reply.code(204).send(null);
      await store.remove(found.recording_id);
      await collection.remove(found);
      return reply.code(204).send(null);
    },
  });

  /**
   * The same request, with the client's own credentials, to the live node whose store holds
   * the recording's file, when that is another node: its answer when it served it (200 to a
   * GET, with the file as `body`; 204 to a DELETE), else null. That node answers from its own
   * store, so a request goes one hop at most.
   */
  async function holderAnswer(
    found: RecordingRecord,
    url: string,
    method: 'GET' | 'DELETE',
    authorization: string | undefined,
  ): Promise<{ body: Readable } | null> {
    if (!peers || !found.node || found.node === peers.node) return null;
    const base = await peers.baseUrl(found.node);
    if (!base) return null;
    const answer = await fetch(`${base}${url}`, {
      method,
      headers: authorization ? { authorization } : {},
      signal: AbortSignal.timeout(PEER_ANSWER_MS),
    }).catch(() => null);
    if (answer?.status !== (method === 'GET' ? 200 : 204)) {
      await answer?.body?.cancel();
      return null;
    }
    return { body: answer.body ? Readable.fromWeb(answer.body as never) : Readable.from([]) };
  }

  function present(r: RecordingRecord): Static<typeof RecordingObject> {
    return {
      add_time: formatTime(r.created)!,
      call_uuid: r.call_uuid,
      conference_name: r.conference_name,
      from_number: r.from_number,
      to_number: r.to_number,
      recording_duration_ms: msFigure(r.recording_duration_ms),
      recording_end_ms: msFigure(r.recording_end_ms),
      recording_start_ms: msFigure(r.recording_start_ms),
      recording_format: r.recording_format,
      recording_id: r.recording_id,
      recording_type: r.recording_type,
      recording_url: r.recording_url,
      resource_uri: uris.account(r.auth_id, 'Recording', r.recording_id),
      ...(r.recording_amount === undefined
        ? chargeRecording(r.recording_duration_ms, '0.00000')
        : {
            rounded_recording_duration: r.rounded_recording_duration!,
            recording_rate: r.recording_rate!,
            recording_amount: r.recording_amount,
          }),
    };
  }
}

function fileFormat(value: string): (typeof FORMATS)[number] {
  const format = FORMATS.find((f) => f === value);
  if (!format) {
    throw invalidParameter(
      `invalid file_format: ${value} is not a supported format; must be mp3 or wav`,
    );
  }
  return format;
}

/** The add_time filters as inclusive ms bounds; null when none is given. */
function addTimeBounds(query: Record<string, unknown>): { min: number; max: number } | null {
  let min = -Infinity;
  let max = Infinity;
  let any = false;
  for (const filter of timeFilterNames('add_time')) {
    const raw = query[filter];
    if (typeof raw !== 'string') continue;
    any = true;
    const comparison = filter.slice('add_time'.length) as Comparison;
    const { start, span } = parseTime(raw, filter);
    const bound = spanBound(start, span, comparison);
    if (bound.min !== undefined) min = Math.max(min, bound.min);
    if (bound.max !== undefined) max = Math.min(max, bound.max);
  }
  return any ? { min, max } : null;
}

/** `YYYY-MM-DD HH:MM[:ss[.uuuuuu]]` (UTC) → its start in ms and the span it names. */
function parseTime(raw: string, filter: string): { start: number; span: number } {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?$/.exec(raw);
  const start = m
    ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? 0)) +
      Math.floor(Number((m[7] ?? '').padEnd(6, '0')) / 1000)
    : NaN;
  if (!Number.isFinite(start))
    throw invalidParameter(`invalid ${filter}: must be a UTC time YYYY-MM-DD HH:MM[:ss[.uuuuuu]]`);
  return { start, span: m![7] ? 1 : m![6] ? 1000 : 60_000 };
}
