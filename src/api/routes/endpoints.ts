import { Type } from 'typebox';
import { endpointAorKey, liveBindings } from '../../call/registrar-directory.js';
import { ha1, md5Hex } from '../../core/digest.js';
import { UniqueViolation } from '../../core/errors.js';
import { newNumericId, randomDigits } from '../../core/ids.js';
import type { BindingRecord, EndpointRecord } from '../../state/records.js';
import type { State } from '../../state/state.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { audit, fieldsOf } from '../audit.js';
import type { Principal } from '../auth.js';
import { findVisible, listVisible, ownedBy } from '../owned-resources.js';
import { resolveApplication } from '../ownership.js';
import {
  AuthIdParams,
  ListBody,
  ListQuery,
  MessageBody,
  Nullable,
  EndpointSrtpPolicyField,
  errorResponses,
} from '../schemas.js';
import { DEFAULT_SRTP_POLICY } from '../../call/srtp-policy.js';

const Username = Type.String({
  pattern: '^[A-Za-z][A-Za-z0-9]{0,24}$',
  description: '1 to 25 letters or digits, starting with a letter',
});
const Password = Type.String({
  minLength: 5,
  maxLength: 128,
  description: 'from 5 to 128 characters',
});
const Alias = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,100}$',
  description: '1 to 100 letters, numbers, hyphens or underscores',
});
const AppId = Type.String({
  maxLength: 64,
  description: 'the app_id of one of your applications',
});

/** The 12 digits appended to the supplied username make the SIP user globally unique. */
const USERNAME_SUFFIX_DIGITS = 12;
const USERNAME_ATTEMPTS = 5;

const EndpointParams = Type.Object({ auth_id: Type.String(), endpoint_id: Type.String() });
const EndpointUpdate = Type.Object({
  password: Type.Optional(Password),
  alias: Type.Optional(Alias),
  app_id: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'the app_id of one of your applications, or empty to detach',
    }),
  ),
  srtp: Type.Optional(EndpointSrtpPolicyField),
});

const EndpointListItem = Type.Object({
  alias: Type.String(),
  application: Nullable(Type.String()),
  endpoint_id: Type.String(),
  resource_uri: Type.String(),
  sip_registered: Type.String(),
  sip_uri: Type.String(),
  username: Type.String(),
});

const EndpointBody = Type.Object({
  api_id: Type.String(),
  alias: Type.String(),
  application: Nullable(Type.String()),
  endpoint_id: Type.String(),
  password: Type.String(),
  resource_uri: Type.String(),
  sip_contact: Nullable(Type.String()),
  sip_expires: Nullable(Type.String()),
  sip_registered: Type.String(),
  sip_uri: Type.String(),
  sip_user_agent: Nullable(Type.String()),
  srtp: Type.String(),
  sub_account: Nullable(Type.String()),
  username: Type.String(),
});

/** The digest credentials stored for a SIP user; the plaintext password is never kept. */
function credentials(username: string, password: string) {
  return {
    username,
    password_md5: md5Hex(password),
    ha1_md5: ha1('MD5', username, password),
    ha1_sha256: ha1('SHA-256', username, password),
  };
}

type EndpointDraft = Omit<EndpointRecord, keyof ReturnType<typeof credentials>>;

/** Creates the endpoint under a fresh `<username><12 digits>`, retrying when that user is taken. */
async function createUnderFreshUsername(
  state: State,
  draft: EndpointDraft,
  supplied: string,
  password: string,
): Promise<EndpointRecord> {
  for (let attempt = 1; ; attempt++) {
    const record = {
      ...draft,
      ...credentials(supplied + randomDigits(USERNAME_SUFFIX_DIGITS), password),
    };
    try {
      await state.endpoints.create(record);
      return record;
    } catch (error) {
      const clash = error instanceof UniqueViolation && error.space === 'sip_user';
      if (!clash || attempt >= USERNAME_ATTEMPTS) throw error;
    }
  }
}

export function endpointRoutes(app: TypedApp, { state, uris, clock, sipDomain }: ApiContext): void {
  // Every URI in a response is under the caller's own auth id, the only path its credentials open.
  const links = (principal: Principal, e: EndpointRecord) => ({
    application: e.app_id ? uris.account(principal.authId, 'Application', e.app_id) : null,
    resource_uri: uris.account(principal.authId, 'Endpoint', e.endpoint_id),
  });
  // Registration state comes from the registrar's bindings, read with their expiry applied,
  // so an endpoint whose binding ran out shows unregistered on every node.
  const bindingsOf = (e: EndpointRecord) =>
    liveBindings(state, e.account, e.endpoint_id, clock.now());
  const listItem = (principal: Principal, e: EndpointRecord, bindings: BindingRecord[]) => ({
    alias: e.alias,
    endpoint_id: e.endpoint_id,
    sip_registered: bindings.length > 0 ? 'true' : 'false',
    sip_uri: `sip:${e.username}@${sipDomain}`,
    username: e.username,
    ...links(principal, e),
  });
  const findEndpoint = (principal: Principal, id: string): Promise<EndpointRecord> =>
    findVisible(state.endpoints, principal, id, 'endpoint');

  app.post('/v1/Account/:auth_id/Endpoint/', {
    schema: {
      tags: ['Endpoint'],
      summary: 'Create a SIP endpoint',
      params: AuthIdParams,
      body: Type.Object(
        {
          username: Username,
          password: Password,
          alias: Alias,
          app_id: Type.Optional(AppId),
          srtp: Type.Optional(EndpointSrtpPolicyField),
        },
        { required: ['username', 'password', 'alias'] },
      ),
      response: {
        201: Type.Object({
          alias: Type.String(),
          api_id: Type.String(),
          endpoint_id: Type.String(),
          message: Type.String(),
          username: Type.String(),
        }),
        ...errorResponses(400, 401, 409, 422),
      },
    },
    handler: async (request, reply) => {
      const { principal } = request;
      const { username, password, alias, app_id, srtp } = request.body;
      if (app_id) await resolveApplication(state, principal, app_id);
      const record = await createUnderFreshUsername(
        state,
        {
          ...ownedBy(principal, clock.now()),
          endpoint_id: newNumericId(14),
          alias,
          app_id: app_id || null,
          ...(srtp && { srtp }),
        },
        username,
        password,
      );
      audit(request.log, {
        actor: principal.authId,
        action: 'endpoint.create',
        target: record.endpoint_id,
        credential: true,
        detail: { username: record.username },
      });
      reply.code(201);
      return {
        alias: record.alias,
        api_id: request.id,
        endpoint_id: record.endpoint_id,
        message: 'created',
        username: record.username,
      };
    },
  });

  app.get('/v1/Account/:auth_id/Endpoint/', {
    schema: {
      tags: ['Endpoint'],
      summary: 'List SIP endpoints',
      params: AuthIdParams,
      querystring: ListQuery,
      response: { 200: ListBody(EndpointListItem), ...errorResponses(400, 401) },
    },
    handler: async (request) => {
      const { principal } = request;
      const { limit, offset } = request.query;
      const page = await listVisible(state.endpoints, principal, { limit, offset });
      return uris.list(
        request,
        { limit, offset, total: page.total },
        await Promise.all(page.items.map(async (e) => listItem(principal, e, await bindingsOf(e)))),
      );
    },
  });

  app.get('/v1/Account/:auth_id/Endpoint/:endpoint_id/', {
    schema: {
      tags: ['Endpoint'],
      summary: 'Retrieve a SIP endpoint',
      params: EndpointParams,
      response: { 200: EndpointBody, ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const e = await findEndpoint(request.principal, request.params.endpoint_id);
      const bindings = await bindingsOf(e);
      // The binding that lives longest is the one shown (a phone may bind several contacts).
      const latest = bindings.reduce<BindingRecord | null>(
        (best, b) => (best === null || b.expires_at > best.expires_at ? b : best),
        null,
      );
      return {
        api_id: request.id,
        ...listItem(request.principal, e, bindings),
        // The API returns the MD5 of the password, never the password itself.
        password: e.password_md5,
        sub_account: e.subaccount,
        sip_contact: latest?.contact ?? null,
        sip_expires: latest ? sipTimestamp(latest.expires_at) : null,
        sip_user_agent: latest?.user_agent ?? null,
        srtp: e.srtp ?? DEFAULT_SRTP_POLICY,
      };
    },
  });

  app.post('/v1/Account/:auth_id/Endpoint/:endpoint_id/', {
    schema: {
      tags: ['Endpoint'],
      summary: 'Update a SIP endpoint',
      params: EndpointParams,
      body: EndpointUpdate,
      response: { 200: MessageBody, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const { principal } = request;
      const { password, alias, app_id, srtp } = request.body;
      const current = await findEndpoint(principal, request.params.endpoint_id);
      if (app_id) await resolveApplication(state, principal, app_id);
      const next: EndpointRecord = {
        ...current,
        alias: alias ?? current.alias,
        app_id: app_id === undefined ? current.app_id : app_id || null,
        ...(srtp && { srtp }),
        ...(password === undefined ? {} : credentials(current.username, password)),
      };
      await state.endpoints.update(next, current);
      audit(request.log, {
        actor: principal.authId,
        action: 'endpoint.update',
        target: current.endpoint_id,
        changed: fieldsOf(request.body, EndpointUpdate),
        ...(password === undefined ? {} : { credential: true }),
      });
      return { api_id: request.id, message: 'changed' };
    },
  });

  app.delete('/v1/Account/:auth_id/Endpoint/:endpoint_id/', {
    schema: {
      tags: ['Endpoint'],
      summary: 'Delete a SIP endpoint',
      params: EndpointParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const endpoint = await findEndpoint(request.principal, request.params.endpoint_id);
      await state.endpoints.remove(endpoint);
      audit(request.log, {
        actor: request.principal.authId,
        action: 'endpoint.delete',
        target: endpoint.endpoint_id,
        credential: true,
      });
      const registration = await state.registrations.get(
        endpoint.account,
        endpointAorKey(endpoint.endpoint_id),
      );
      if (registration) await state.registrations.remove(registration);
      return reply.code(204).send(null);
    },
  });
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, as the API writes times. */
const sipTimestamp = (ms: number): string =>
  new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
