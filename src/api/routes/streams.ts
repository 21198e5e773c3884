import { Type, type Static } from 'typebox';
import {
  EXTRA_HEADERS_MAX_BYTES,
  STREAM_CONTENT_TYPES,
  STREAM_DEFAULTS,
  STREAM_TIMEOUT_MAX_SECONDS,
  streamRequestProblem,
  type StreamRequest,
} from '../../call/streams/stream-request.js';
import { invalidParameter, notFound } from '../../core/errors.js';
import { formatTime } from '../../core/record-time.js';
import type { StreamRecord } from '../../state/records.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { visibleTo } from '../owned-resources.js';
import { refuseOutboundUrls } from '../outbound-urls.js';
import {
  errorResponses,
  HttpUrl,
  ListBody,
  ListQuery,
  Nullable,
  WebSocketUrl,
  WithApiId,
} from '../schemas.js';
import { callOwner, notConnected } from './live-calls.js';

const CallParams = Type.Object({ auth_id: Type.String(), call_uuid: Type.String() });
const StreamParams = Type.Object({
  auth_id: Type.String(),
  call_uuid: Type.String(),
  stream_id: Type.String(),
});

const Flag = (fallback: boolean) =>
  Type.Boolean({ description: 'true or false', default: fallback });

/**
 * voice-calls-and-streams.md, Start an audio stream. Booleans arrive as JSON booleans or, in
 * forms and as the document writes noise_cancellation, as the strings "true" and "false" (the
 * schema coerces them). The schema checks each parameter alone; streamRequestProblem then
 * checks what the API and the answer XML share: the URL itself, the track a bidirectional
 * stream may carry, and extra_headers' size in bytes.
 */
const StartStreamBody = Type.Object({
  service_url: WebSocketUrl,
  bidirectional: Type.Optional(Flag(STREAM_DEFAULTS.bidirectional)),
  audio_track: Type.Optional(
    Type.Union([Type.Literal('inbound'), Type.Literal('outbound'), Type.Literal('both')], {
      description: 'inbound, outbound or both (inbound only when bidirectional is true)',
      default: STREAM_DEFAULTS.audioTrack,
    }),
  ),
  stream_timeout: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: STREAM_TIMEOUT_MAX_SECONDS,
      description: `a whole number of seconds from 1 to ${STREAM_TIMEOUT_MAX_SECONDS}`,
      default: STREAM_DEFAULTS.streamTimeout,
    }),
  ),
  content_type: Type.Optional(
    Type.Union(
      STREAM_CONTENT_TYPES.map((type) => Type.Literal(type)),
      {
        description: `one of ${STREAM_CONTENT_TYPES.join(', ')}`,
        default: STREAM_DEFAULTS.contentType,
      },
    ),
  ),
  status_callback_url: Type.Optional(HttpUrl),
  status_callback_method: Type.Optional(
    Type.Union([Type.Literal('GET'), Type.Literal('POST')], {
      description: 'GET or POST',
      default: STREAM_DEFAULTS.statusCallbackMethod,
    }),
  ),
  extra_headers: Type.Optional(
    Type.String({
      description: `key1=val1,key2=val2 pairs of at most ${EXTRA_HEADERS_MAX_BYTES} bytes`,
    }),
  ),
  noise_cancellation: Type.Optional(Flag(STREAM_DEFAULTS.noiseCancellation)),
  noise_cancellation_level: Type.Optional(
    Type.Integer({
      minimum: 60,
      maximum: 100,
      description: 'an integer from 60 to 100',
      default: STREAM_DEFAULTS.noiseCancellationLevel,
    }),
  ),
});
type StartStreamBody = Static<typeof StartStreamBody>;

/** wire-compat.md, the create-stream response. */
const StreamStartedBody = Type.Object({
  api_id: Type.String(),
  message: Type.String(),
  stream_id: Type.String(),
});

/**
 * voice-calls-and-streams.md, Audio stream, with what wire-compat.md adds: created_at,
 * resource_uri and the account the stream belongs to (auth_id: the subaccount's when it is a
 * subaccount's call). end_time and the billing fields are null while the stream runs.
 */
const StreamObject = Type.Object({
  stream_id: Type.String(),
  call_uuid: Type.String(),
  service_url: Type.String(),
  bidirectional: Type.Boolean(),
  audio_track: Type.String(),
  content_type: Type.String(),
  start_time: Type.String(),
  end_time: Nullable(Type.String()),
  bill_duration: Nullable(Type.Integer()),
  billed_amount: Nullable(Type.String()),
  rounded_bill_duration: Nullable(Type.Integer()),
  created_at: Type.String(),
  auth_id: Type.String(),
  resource_uri: Type.String(),
});

/** voice-calls-and-streams.md: "Stream list items carry only ..." */
const StreamListItem = Type.Object({
  stream_id: Type.String(),
  call_uuid: Type.String(),
  service_url: Type.String(),
  audio_track: Type.String(),
  bidirectional: Type.Boolean(),
  start_time: Type.String(),
  end_time: Nullable(Type.String()),
});

/** The validated request the call engine takes; 400 naming the rule when one is broken. */
function streamRequest(body: StartStreamBody): StreamRequest {
  const request: StreamRequest = {
    serviceUrl: body.service_url,
    bidirectional: body.bidirectional ?? STREAM_DEFAULTS.bidirectional,
    audioTrack: body.audio_track ?? STREAM_DEFAULTS.audioTrack,
    streamTimeout: body.stream_timeout ?? STREAM_DEFAULTS.streamTimeout,
    contentType: body.content_type ?? STREAM_DEFAULTS.contentType,
    statusCallbackUrl: body.status_callback_url ?? null,
    statusCallbackMethod: body.status_callback_method ?? STREAM_DEFAULTS.statusCallbackMethod,
    extraHeaders: body.extra_headers ?? '',
    noiseCancellation: body.noise_cancellation ?? STREAM_DEFAULTS.noiseCancellation,
    noiseCancellationLevel: body.noise_cancellation_level ?? STREAM_DEFAULTS.noiseCancellationLevel,
  };
  const problem = streamRequestProblem(request);
  if (problem !== null) throw invalidParameter(problem);
  return request;
}

/** The streams collection lists a call's streams under this index (state.ts). */
const callIndex = (callUuid: string) => `call:${callUuid}`;

/**
 * A call's audio streams: start one, read one or the list, stop one or all. Records are read
 * from the streams collection (they outlive the call); starting and stopping act on the live
 * call through the call engine. Every route answers 404 for a call or stream the account does
 * not see (a main account sees its subaccounts'; a subaccount only its own).
 */
export function streamRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, control, outbound } = context;

  const present = (principal: Principal, s: StreamRecord): Static<typeof StreamObject> => ({
    stream_id: s.stream_id,
    call_uuid: s.call_uuid,
    service_url: s.service_url,
    bidirectional: s.bidirectional,
    audio_track: s.audio_track,
    content_type: s.content_type,
    start_time: s.start_time,
    end_time: s.end_time,
    bill_duration: s.bill_duration,
    billed_amount: s.billed_amount,
    rounded_bill_duration: s.rounded_bill_duration,
    created_at: formatTime(s.created)!,
    auth_id: s.subaccount ?? s.account,
    resource_uri: uris.account(principal.authId, 'Call', s.call_uuid, 'Stream', s.stream_id),
  });

  const listItem = (s: StreamRecord): Static<typeof StreamListItem> => ({
    stream_id: s.stream_id,
    call_uuid: s.call_uuid,
    service_url: s.service_url,
    audio_track: s.audio_track,
    bidirectional: s.bidirectional,
    start_time: s.start_time,
    end_time: s.end_time,
  });

  /**
   * wire-compat.md: 201 with the new stream's id; 404 when there is no such live call, 409 when
   * it has no audio to stream yet (not answered, no early media).
   */
  app.post('/v1/Account/:auth_id/Call/:call_uuid/Stream/', {
    schema: {
      tags: ['Stream'],
      summary: 'Start an audio stream on a call',
      params: CallParams,
      body: StartStreamBody,
      response: { 201: StreamStartedBody, ...errorResponses(400, 401, 404, 409, 422) },
    },
    handler: async (request, reply) => {
      const { call_uuid } = request.params;
      const stream = streamRequest(request.body);
      await refuseOutboundUrls(outbound, {
        service_url: stream.serviceUrl,
        status_callback_url: stream.statusCallbackUrl,
      });
      const started = await control.startStream(callOwner(request.principal), call_uuid, stream);
      if (!started) throw notFound(`call ${call_uuid}`);
      if (started === 'not-connected') throw notConnected(call_uuid);
      reply.code(201);
      return {
        api_id: request.id,
        message: 'audio streaming started',
        stream_id: started.streamId,
      };
    },
  });

  /**
   * Whether the principal has the call: live or queued now, or its record kept (stream records
   * outlive both, so a call with a stream the principal sees is known too).
   */
  const knowsCall = async (principal: Principal, callUuid: string): Promise<boolean> => {
    const owner = callOwner(principal);
    if (await control.get(owner, 'live', callUuid)) return true;
    if (await control.get(owner, 'queued', callUuid)) return true;
    const record = await state.calls.get(principal.tenant, callUuid);
    return record !== null && visibleTo(record, principal);
  };

  /**
   * wire-compat.md: 404 for an unknown call, or one that is not the account's; a call it has,
   * live or ended, lists its streams (none is an empty list).
   */
  app.get('/v1/Account/:auth_id/Call/:call_uuid/Stream/', {
    schema: {
      tags: ['Stream'],
      summary: 'List the audio streams of a call',
      params: CallParams,
      querystring: ListQuery,
      response: { 200: ListBody(StreamListItem), ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const principal = request.principal;
      const { call_uuid } = request.params;
      const { limit, offset } = request.query;
      // A call has few streams: all of them are read, then those the principal sees are paged.
      const streams = (await state.streams.all(principal.tenant, callIndex(call_uuid))).filter(
        (s) => visibleTo(s, principal),
      );
      if (streams.length === 0 && !(await knowsCall(principal, call_uuid)))
        throw notFound(`call ${call_uuid}`);
      return uris.list(
        request,
        { limit, offset, total: streams.length },
        streams.slice(offset, offset + limit).map(listItem),
      );
    },
  });

  app.get('/v1/Account/:auth_id/Call/:call_uuid/Stream/:stream_id/', {
    schema: {
      tags: ['Stream'],
      summary: 'Retrieve an audio stream',
      params: StreamParams,
      response: { 200: WithApiId(StreamObject), ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const { call_uuid, stream_id } = request.params;
      const principal = request.principal;
      const found = await state.streams.get(principal.tenant, stream_id);
      if (!found || found.call_uuid !== call_uuid || !visibleTo(found, principal)) {
        throw notFound(`stream ${stream_id}`);
      }
      return { api_id: request.id, ...present(principal, found) };
    },
  });

  /** voice-calls-and-streams.md: stops one running stream, 204. */
  app.delete('/v1/Account/:auth_id/Call/:call_uuid/Stream/:stream_id/', {
    schema: {
      tags: ['Stream'],
      summary: 'Stop an audio stream',
      params: StreamParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const { call_uuid, stream_id } = request.params;
      if (!(await control.stopStream(callOwner(request.principal), call_uuid, stream_id))) {
        throw notFound(`stream ${stream_id}`);
      }
      return reply.code(204).send(null);
    },
  });

  /** Stops every running stream of a live call: 204, even when none was running. */
  app.delete('/v1/Account/:auth_id/Call/:call_uuid/Stream/', {
    schema: {
      tags: ['Stream'],
      summary: 'Stop every audio stream on a call',
      params: CallParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const { call_uuid } = request.params;
      if ((await control.stopStreams(callOwner(request.principal), call_uuid)) === null) {
        throw notFound(`call ${call_uuid}`);
      }
      return reply.code(204).send(null);
    },
  });
}
