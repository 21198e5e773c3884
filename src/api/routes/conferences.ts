import { Type } from 'typebox';
import type { ConferenceMember, ConferenceRoom } from '../../call/conferences/conference-room.js';
import { isSpeakLanguage, languageHasVoice } from '../../call/xml/speak-voices.js';
import { isAbsoluteUrl, HTTP_PROTOCOLS } from '../../core/absolute-url.js';
import { invalidParameter, notFound } from '../../core/errors.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
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
const PLAY_TAG = 'conference-member-play';
const SPEAK_TAG = 'conference-member-speak';

/**
 * The Conference API: the rooms of the account (its own auth id's; another account's room is
 * 404), their members, and what can be done to each member. Rooms live on this node.
 */
export function conferenceRoutes(app: TypedApp, context: ApiContext): void {
  const rooms = context.calls.conferences;
  const base = '/v1/Account/:auth_id/Conference/';
  const seconds = (since: number) => String(Math.floor((Date.now() - since) / 1000));

  const room = (principal: Principal, name: string): ConferenceRoom => {
    const found = rooms.find(principal.authId, name);
    if (!found || found.present().length === 0) throw notFound(`conference ${name}`);
    return found;
  };
  /** `all`, or member ids separated by commas: each must be in the room. */
  const members = (principal: Principal, name: string, ids: string): ConferenceMember[] => {
    const present = room(principal, name).present();
    if (ids === 'all') return present;
    return ids.split(',').map((id) => {
      const member = present.find((m) => m.id === id.trim());
      if (!member) throw notFound(`member ${id.trim()} of conference ${name}`);
      return member;
    });
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
      conferences: rooms
        .list(request.principal.authId)
        .filter((r) => r.present().length > 0)
        .map((r) => r.name),
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
      for (const r of rooms.list(request.principal.authId)) rooms.hangupRoom(r);
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
      const found = room(request.principal, request.params.conference_name);
      const present = found.present();
      return {
        api_id: request.id,
        conference_name: found.name,
        conference_run_time: seconds(found.createdAt),
        conference_member_count: String(present.length),
        members: present.map((m) => ({
          muted: m.muted,
          member_id: m.id,
          deaf: m.deaf,
          from: m.call.init.from,
          to: m.call.init.to,
          caller_name: m.call.init.callerName ?? '',
          direction: m.call.direction,
          call_uuid: m.call.uuid,
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
      rooms.hangupRoom(room(request.principal, request.params.conference_name));
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
      const { conference_name, member_id } = request.params;
      for (const m of members(request.principal, conference_name, member_id)) {
        void rooms.hangupMember(m);
      }
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
      const { conference_name, member_id } = request.params;
      for (const m of members(request.principal, conference_name, member_id)) m.leave('kicked');
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
        const { conference_name, member_id } = request.params;
        const chosen = members(request.principal, conference_name, member_id);
        await Promise.all(chosen.map((m) => rooms.setFlags(m, { [flag]: true })));
        return reply.code(202).send(accepted(request, on));
      },
    });
    app.delete(`${member}${path}/`, {
      schema: schema(`Un${path.toLowerCase()} a member`, 204),
      handler: async (request, reply) => {
        const { conference_name, member_id } = request.params;
        const chosen = members(request.principal, conference_name, member_id);
        await Promise.all(chosen.map((m) => rooms.setFlags(m, { [flag]: false })));
        return reply.code(204).send(null);
      },
    });
  }

  app.post(`${member}Play/`, {
    schema: schema('Play an audio file to a member', 202, PlayBody),
    handler: async (request, reply) => {
      const { conference_name, member_id } = request.params;
      const { url } = request.body as { url: string };
      if (!isAbsoluteUrl(url, HTTP_PROTOCOLS)) {
        throw invalidParameter('invalid url: must be an http or https URL');
      }
      for (const m of members(request.principal, conference_name, member_id)) {
        void m.call.leg.play({ kind: 'file', url }, { tag: PLAY_TAG }).catch(() => false);
      }
      return reply.code(202).send(accepted(request, 'play queued into conference'));
    },
  });

  app.post(`${member}Speak/`, {
    schema: schema('Speak text to a member', 202, SpeakBody),
    handler: async (request, reply) => {
      const { conference_name, member_id } = request.params;
      const body = request.body as { text: string; voice?: 'MAN' | 'WOMAN'; language?: string };
      const voice = body.voice ?? 'WOMAN';
      const language = body.language ?? 'en-US';
      if (!isSpeakLanguage(language) || !languageHasVoice(language, voice)) {
        throw invalidParameter(`invalid language or voice: ${language} has no ${voice} voice`);
      }
      for (const m of members(request.principal, conference_name, member_id)) {
        const source = { kind: 'speech', text: body.text, voice, language } as const;
        void m.call.leg.play(source, { tag: SPEAK_TAG }).catch(() => false);
      }
      return reply.code(202).send(accepted(request, 'speak queued into conference'));
    },
  });

  for (const [path, tag] of [
    ['Play', PLAY_TAG],
    ['Speak', SPEAK_TAG],
  ] as const) {
    app.delete(`${member}${path}/`, {
      schema: schema(`Stop what ${path} started for a member`, 204),
      handler: async (request, reply) => {
        const { conference_name, member_id } = request.params;
        const chosen = members(request.principal, conference_name, member_id);
        await Promise.all(chosen.map((m) => m.call.leg.stopPlayback(tag)));
        return reply.code(204).send(null);
      },
    });
  }
}
