import { Type, type Static } from 'typebox';
import { newNumericId } from '../../core/ids.js';
import { subaccountIndex } from '../../state/collection.js';
import type { ApplicationRecord } from '../../state/records.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { formatTime } from '../../core/record-time.js';
import { findVisible, listVisible } from '../owned-resources.js';
import { resolveSubaccount } from '../ownership.js';
import {
  AuthIdParams,
  errorResponses,
  HttpMethod,
  HttpUrl,
  ListBody,
  ListQuery,
  MessageBody,
  Nullable,
  WithApiId,
} from '../schemas.js';

const AppName = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}$',
  description:
    '1 to 100 letters, digits, spaces, dots, hyphens or underscores, starting with a letter or digit',
});
const Flag = Type.Boolean({ description: 'true or false' });
const OptionalUrl = Type.Union([HttpUrl, Type.Literal('')], {
  description: 'an http or https URL, or empty',
});

const Settings = {
  answer_url: HttpUrl,
  answer_method: Type.Optional(HttpMethod),
  hangup_url: Type.Optional(OptionalUrl),
  hangup_method: Type.Optional(HttpMethod),
  fallback_answer_url: Type.Optional(OptionalUrl),
  fallback_method: Type.Optional(HttpMethod),
  message_url: Type.Optional(OptionalUrl),
  message_method: Type.Optional(HttpMethod),
  default_number_app: Type.Optional(Flag),
  default_endpoint_app: Type.Optional(Flag),
  subaccount: Type.Optional(Type.String()),
};

const CreateBody = Type.Object(
  { app_name: AppName, ...Settings },
  { required: ['app_name', 'answer_url'] },
);
const UpdateBody = Type.Partial(Type.Object({ app_name: AppName, ...Settings }));

const Application = Type.Object({
  app_id: Type.String(),
  app_name: Type.String(),
  answer_url: Type.String(),
  answer_method: Type.String(),
  hangup_url: Type.String(),
  hangup_method: Type.String(),
  fallback_answer_url: Type.String(),
  fallback_method: Type.String(),
  message_url: Type.String(),
  message_method: Type.String(),
  default_app: Type.Boolean(),
  default_number_app: Type.Boolean(),
  default_endpoint_app: Type.Boolean(),
  enabled: Type.Boolean(),
  sip_uri: Type.String(),
  sub_account: Nullable(Type.String()),
  created: Type.String(),
  resource_uri: Type.String(),
});

const AppParams = Type.Object({ auth_id: Type.String(), app_id: Type.String() });

export function applicationRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, clock, sipDomain } = context;

  const present = (principal: Principal, a: ApplicationRecord): Static<typeof Application> => ({
    app_id: a.app_id,
    app_name: a.app_name,
    answer_url: a.answer_url,
    answer_method: a.answer_method,
    hangup_url: a.hangup_url ?? '',
    hangup_method: a.hangup_method,
    fallback_answer_url: a.fallback_answer_url ?? '',
    fallback_method: a.fallback_method,
    message_url: a.message_url ?? '',
    message_method: a.message_method,
    default_app: a.default_number_app,
    default_number_app: a.default_number_app,
    default_endpoint_app: a.default_endpoint_app,
    enabled: true,
    sip_uri: `sip:${a.app_id}@${sipDomain}`,
    sub_account: a.subaccount,
    created: formatTime(a.created)!,
    resource_uri: uris.account(principal.authId, 'Application', a.app_id),
  });

  const find = (principal: Principal, id: string) =>
    findVisible(state.applications, principal, id, 'application');

  /** At most one default number app and one default endpoint app per (sub)account. */
  const clearOtherDefaults = async (chosen: ApplicationRecord) => {
    if (!chosen.default_number_app && !chosen.default_endpoint_app) return;
    const index = chosen.subaccount ? subaccountIndex(chosen.subaccount) : undefined;
    for (const other of await state.applications.all(chosen.account, index)) {
      if (other.app_id === chosen.app_id || other.subaccount !== chosen.subaccount) continue;
      const next = {
        ...other,
        default_number_app: chosen.default_number_app ? false : other.default_number_app,
        default_endpoint_app: chosen.default_endpoint_app ? false : other.default_endpoint_app,
      };
      if (
        next.default_number_app !== other.default_number_app ||
        next.default_endpoint_app !== other.default_endpoint_app
      ) {
        await state.applications.update(next, other);
      }
    }
  };

  app.post('/v1/Account/:auth_id/Application/', {
    schema: {
      tags: ['Application'],
      params: AuthIdParams,
      body: CreateBody,
      response: {
        201: Type.Object({ api_id: Type.String(), message: Type.String(), app_id: Type.String() }),
        ...errorResponses(400, 401, 422),
      },
    },
    handler: async (request, reply) => {
      const b = request.body;
      const now = clock.now();
      const record: ApplicationRecord = {
        account: request.principal.tenant,
        subaccount: await resolveSubaccount(state, request.principal, b.subaccount),
        created: now,
        modified: now,
        app_id: newNumericId(17),
        app_name: b.app_name,
        answer_url: b.answer_url,
        answer_method: b.answer_method ?? 'POST',
        // Without a hangup URL the hangup request goes to the answer URL.
        hangup_url: b.hangup_url || b.answer_url,
        hangup_method: b.hangup_method ?? 'POST',
        fallback_answer_url: b.fallback_answer_url || null,
        fallback_method: b.fallback_method ?? 'POST',
        message_url: b.message_url || null,
        message_method: b.message_method ?? 'POST',
        default_number_app: b.default_number_app ?? false,
        default_endpoint_app: b.default_endpoint_app ?? false,
      };
      await state.applications.create(record);
      await clearOtherDefaults(record);
      reply.code(201);
      return { api_id: request.id, message: 'created', app_id: record.app_id };
    },
  });

  app.get('/v1/Account/:auth_id/Application/', {
    schema: {
      tags: ['Application'],
      params: AuthIdParams,
      querystring: Type.Intersect([
        ListQuery,
        Type.Object({
          app_name: Type.Optional(Type.String({ description: 'text the name contains' })),
          subaccount: Type.Optional(Type.String()),
        }),
      ]),
      response: { 200: ListBody(Application), ...errorResponses(400, 401) },
    },
    handler: async (request) => {
      const { limit, offset, app_name, subaccount } = request.query;
      const principal = request.principal;
      const needle = app_name?.toLowerCase();
      const { items: apps, total } = await listVisible(
        state.applications,
        principal,
        { limit, offset, subaccount },
        needle ? (a) => a.app_name.toLowerCase().includes(needle) : undefined,
      );
      return uris.list(
        request,
        { limit, offset, total },
        apps.map((a) => present(principal, a)),
      );
    },
  });

  app.get('/v1/Account/:auth_id/Application/:app_id/', {
    schema: {
      tags: ['Application'],
      params: AppParams,
      response: {
        200: WithApiId(Application),
        ...errorResponses(401, 404),
      },
    },
    handler: async (request) => {
      const found = await find(request.principal, request.params.app_id);
      return { api_id: request.id, ...present(request.principal, found) };
    },
  });

  app.post('/v1/Account/:auth_id/Application/:app_id/', {
    schema: {
      tags: ['Application'],
      params: AppParams,
      body: UpdateBody,
      response: { 200: MessageBody, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const current = await find(request.principal, request.params.app_id);
      const b = request.body;
      const next: ApplicationRecord = {
        ...current,
        subaccount:
          b.subaccount === undefined
            ? current.subaccount
            : await resolveSubaccount(state, request.principal, b.subaccount),
        modified: clock.now(),
        app_name: b.app_name ?? current.app_name,
        answer_url: b.answer_url ?? current.answer_url,
        answer_method: b.answer_method ?? current.answer_method,
        hangup_url: b.hangup_url === undefined ? current.hangup_url : b.hangup_url || null,
        hangup_method: b.hangup_method ?? current.hangup_method,
        fallback_answer_url:
          b.fallback_answer_url === undefined
            ? current.fallback_answer_url
            : b.fallback_answer_url || null,
        fallback_method: b.fallback_method ?? current.fallback_method,
        message_url: b.message_url === undefined ? current.message_url : b.message_url || null,
        message_method: b.message_method ?? current.message_method,
        default_number_app: b.default_number_app ?? current.default_number_app,
        default_endpoint_app: b.default_endpoint_app ?? current.default_endpoint_app,
      };
      await state.applications.update(next, current);
      await clearOtherDefaults(next);
      return { api_id: request.id, message: 'changed' };
    },
  });

  app.delete('/v1/Account/:auth_id/Application/:app_id/', {
    schema: {
      tags: ['Application'],
      params: AppParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const found = await find(request.principal, request.params.app_id);
      await state.applications.remove(found);
      // Numbers and endpoints that pointed at it are left without an application.
      const attached = `app:${found.app_id}`;
      for (const n of await state.numbers.all(found.account, attached)) {
        await state.numbers.update({ ...n, app_id: null }, n);
      }
      for (const e of await state.endpoints.all(found.account, attached)) {
        await state.endpoints.update({ ...e, app_id: null }, e);
      }
      return reply.code(204).send(null);
    },
  });
}
