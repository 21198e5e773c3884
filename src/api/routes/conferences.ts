import { Type } from 'typebox';
import type { ConferenceView, MemberAction } from '../../call/conferences/conference-control.js';
import { isSpeakLanguage, languageHasVoice } from '../../call/xml/speak-voices.js';
import { isAbsoluteUrl, HTTP_PROTOCOLS } from '../../core/absolute-url.js';
import { invalidParameter, notFound } from '../../core/errors.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { AuthIdParams, errorResponses } from '../schemas.js';

const RoomParams = Type.Object({ auth_id: Type.String(), conference_name: Type.String() });
const MemberParams = Type.Object({
  auth_id: Type.String(),
  conference_name: Type.String(),
  member_id: Type.String({ description: 'a member id, several separated by commas, or all' }),
});
const MemberAnswer = Type.Object({
  api_id: Type.String(),
  message: Type.String(),
  member_id: Type.String(),
});
const MemberView = Type.Object({
  muted: Type.Boolean(),
  member_id: Type.String(),
  deaf: Type.Boolean(),
  from: Type.String(),
  to: Type.String(),
  caller_name: Type.String(),
  direction: Type.String(),
  call_uuid: Type.String(),
  join_time: Type.String({ description: 'seconds since the member joined' }),
});
const RoomView = Type.Object({
  api_id: Type.String(),
  conference_name: Type.String(),
  conference_run_time: Type.String({ description: 'seconds since the conference began' }),
  conference_member_count: Type.String(),
  members: Type.Array(MemberView),
});
const PlayBody = Type.Object({ url: Type.String({ description: 'an http or https URL' }) });
const SpeakBody = Type.Object({
  text: Type.String({ minLength: 1 }),
  voice: Type.Optional(Type.Union([Type.Literal('MAN'), Type.Literal('WOMAN')])),
  language: Type.Optional(Type.String()),
});

const tags = ['Conference'];

/**
 * The Conference API: the rooms of the account (its own auth id's; another account's room is
 * 404), their members, and what can be done to each member, wherever the room lives
 * (ConferenceControl). Parameters are checked here, before the room's node is asked.
 */
export function conferenceRoutes(app: TypedApp, context: ApiContext): void {
  const rooms = context.conferences;
  const base = '/v1/Account/:auth_id/Conference/';
  const seconds = (since: number) => String(Math.floor((Date.now() - since) / 1000));

  const found = <T>(answer: T | null | false, name: string): T => {
    if (answer === null || answer === false) throw notFound(`conference ${name}`);
    return answer;
  };
  /** Acts on the members a request names; 404 when the room or a member is not there. */
  const onMembers = async (
    request: {
      principal: { authId: string };
      params: { conference_name: string; member_id: string };
    },
    action: MemberAction,
  ) => {
    const { conference_name, member_id } = request.params;
    found(
      await rooms.onMembers(request.principal.authId, conference_name, member_id, action),
      conference_name,
    );
  };

  app.get(base, {
    schema: {
      tags,
      summary: 'List the conferences going on',
      params: AuthIdParams,
      response: {
        200: Type.Object({ api_id: Type.String(), conferences: Type.Array(Type.String()) }),
        ...errorResponses(401),
      },
    },
    handler: async (request) => ({
      api_id: request.id,
      conferences: await rooms.list(request.principal.authId),
    }),
  });

  app.delete(base, {
    schema: {
      tags,
      summary: 'Hang up every conference',
      params: AuthIdParams,
      response: { 204: Type.Null(), ...errorResponses(401) },
    },
    handler: async (request, reply) => {
      await rooms.hangupAll(request.principal.authId);
      return reply.code(204).send(null);
    },
  });

  app.get(`${base}:conference_name/`, {
    schema: {
      tags,
      summary: 'Get a conference and its members',
      params: RoomParams,
      response: { 200: RoomView, ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const name = request.params.conference_name;
      const room: ConferenceView = found(await rooms.get(request.principal.authId, name), name);
      return {
        api_id: request.id,
        conference_name: room.name,
        conference_run_time: seconds(room.createdAt),
        conference_member_count: String(room.members.length),
        members: room.members.map((m) => ({
          muted: m.muted,
          member_id: m.memberId,
          deaf: m.deaf,
          from: m.from,
          to: m.to,
          caller_name: m.callerName,
          direction: m.direction,
          call_uuid: m.callUuid,
          join_time: seconds(m.joinedAt),
        })),
      };
    },
  });

  app.delete(`${base}:conference_name/`, {
    schema: {
      tags,
      summary: 'Hang up a conference',
      params: RoomParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const name = request.params.conference_name;
      found(await rooms.hangup(request.principal.authId, name), name);
      return reply.code(204).send(null);
    },
  });

  const member = `${base}:conference_name/Member/:member_id/`;
  const schema = (summary: string, code: 202 | 204, body?: typeof PlayBody | typeof SpeakBody) => ({
    tags,
    summary,
    params: MemberParams,
    ...(body && { body }),
    response: {
      ...(code === 202 ? { 202: MemberAnswer } : { 204: Type.Null() }),
      ...errorResponses(400, 401, 404),
    },
  });

  app.delete(member, {
    schema: schema('Hang up a member', 204),
    handler: async (request, reply) => {
      await onMembers(request, { kind: 'hangup' });
      return reply.code(204).send(null);
    },
  });

  /** A 202 for an action on members, naming them as asked. */
  const accepted = (request: { id: string; params: { member_id: string } }, message: string) => ({
    api_id: request.id,
    message,
    member_id: request.params.member_id,
  });

  app.post(`${member}Kick/`, {
    schema: schema('Kick a member out of a conference', 202),
    handler: async (request, reply) => {
      await onMembers(request, { kind: 'kick' });
      return reply.code(202).send(accepted(request, 'kicked'));
    },
  });

  for (const [path, flag, on] of [
    ['Mute', 'muted', 'muted'],
    ['Deaf', 'deaf', 'deaf'],
  ] as const) {
    app.post(`${member}${path}/`, {
      schema: schema(`${path} a member`, 202),
      handler: async (request, reply) => {
        await onMembers(request, { kind: 'flags', [flag]: true });
        return reply.code(202).send(accepted(request, on));
      },
    });
    app.delete(`${member}${path}/`, {
      schema: schema(`Un${path.toLowerCase()} a member`, 204),
      handler: async (request, reply) => {
        await onMembers(request, { kind: 'flags', [flag]: false });
        return reply.code(204).send(null);
      },
    });
  }

  app.post(`${member}Play/`, {
    schema: schema('Play an audio file to a member', 202, PlayBody),
    handler: async (request, reply) => {
      const { url } = request.body as { url: string };
      if (!isAbsoluteUrl(url, HTTP_PROTOCOLS)) {
        throw invalidParameter('invalid url: must be an http or https URL');
      }
      await onMembers(request, { kind: 'play', url });
      return reply.code(202).send(accepted(request, 'play queued into conference'));
    },
  });

  app.post(`${member}Speak/`, {
    schema: schema('Speak text to a member', 202, SpeakBody),
    handler: async (request, reply) => {
      const body = request.body as { text: string; voice?: 'MAN' | 'WOMAN'; language?: string };
      const voice = body.voice ?? 'WOMAN';
      const language = body.language ?? 'en-US';
      if (!isSpeakLanguage(language) || !languageHasVoice(language, voice)) {
        throw invalidParameter(`invalid language or voice: ${language} has no ${voice} voice`);
      }
      await onMembers(request, { kind: 'speak', text: body.text, voice, language });
      return reply.code(202).send(accepted(request, 'speak queued into conference'));
    },
  });

  for (const [path, what] of [
    ['Play', 'play'],
    ['Speak', 'speak'],
  ] as const) {
    app.delete(`${member}${path}/`, {
      schema: schema(`Stop what ${path} started for a member`, 204),
      handler: async (request, reply) => {
        await onMembers(request, { kind: 'stop', what });
        return reply.code(204).send(null);
      },
    });
  }
}
