import { Type } from 'typebox';
import { invalidParameter, notFound } from '../../core/errors.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { refuseOutboundUrls, urlFieldsOf } from '../outbound-urls.js';
import { errorResponses, HttpMethod, HttpUrl } from '../schemas.js';

const RoomParams = Type.Object({ auth_id: Type.String(), conference_name: Type.String() });

/**
 * Record a conference (the public API's parameters; the transcription ones are taken and not
 * acted on).
 */
const RecordBody = Type.Object({
  // Checked in code, so an unknown format is named as not supported.
  file_format: Type.Optional(Type.String({ default: 'mp3', description: 'mp3 or wav' })),
  callback_url: Type.Optional(HttpUrl),
  callback_method: Type.Optional(HttpMethod),
  transcription_type: Type.Optional(Type.String()),
  transcription_url: Type.Optional(Type.String()),
  transcription_method: Type.Optional(Type.String()),
});

const Started = Type.Object({
  api_id: Type.String(),
  message: Type.String(),
  recording_id: Type.String(),
  url: Type.String(),
});

const tags = ['Conference'];

/**
 * The Conference API's Record: start recording a room's mix (stored and served as call
 * recordings are, by the node that holds the room) and stop its recordings. A room not going
 * on, or another account's, is 404.
 */
export function conferenceRecordRoutes(app: TypedApp, context: ApiContext): void {
  const rooms = context.conferences;
  const path = '/v1/Account/:auth_id/Conference/:conference_name/Record/';

  app.post(path, {
    schema: {
      tags,
      summary: 'Record a conference',
      params: RoomParams,
      body: Type.Optional(RecordBody),
      response: { 202: Started, ...errorResponses(400, 401, 404, 409) },
    },
    handler: async (request, reply) => {
      const body = request.body ?? {};
      const format = body.file_format ?? 'mp3';
      if (format !== 'mp3' && format !== 'wav') {
        throw invalidParameter(
          `invalid file_format: ${format} is not a supported format; must be mp3 or wav`,
        );
      }
      await refuseOutboundUrls(context.outbound, urlFieldsOf(body, ['callback_url']));
      const name = request.params.conference_name;
      const started = await rooms.record(request.principal.authId, name, {
        format,
        callback: body.callback_url
          ? { url: body.callback_url, method: body.callback_method ?? 'POST' }
          : null,
        apiId: request.id,
      });
      if (!started) throw notFound(`conference ${name}`);
      reply.code(202);
      return {
        api_id: request.id,
        message: 'conference recording started',
        recording_id: started.recordingId,
        url: started.url,
      };
    },
  });

  app.delete(path, {
    schema: {
      tags,
      summary: 'Stop recording a conference',
      params: RoomParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const name = request.params.conference_name;
      if (!(await rooms.stopRecording(request.principal.authId, name))) {
        throw notFound(`conference ${name}`);
      }
      return reply.code(204).send(null);
    },
  });
}
