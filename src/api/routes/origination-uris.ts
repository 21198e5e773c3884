import { Type } from 'typebox';
import { conflict, invalidParameter, missingParameter } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import type { OriginationUriRecord } from '../../state/records.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { findVisible, listVisible } from '../owned-resources.js';
import {
  AuthIdParams,
  errorResponses,
  ListBody,
  ListQuery,
  Nullable,
  WithApiId,
} from '../schemas.js';

export const URI_FORMATS =
  'an IPv4 address, an IPv4 address with :port, an FQDN, an FQDN with :port, ' +
  'or sip:<user>@<host> where the host may carry a :port';

const IPV4_OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${IPV4_OCTET}(?:\\.${IPV4_OCTET}){3}$`);
/** RFC 1035 2.3.1: letters, digits and hyphens, starting and ending with a letter or digit. */
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
/** RFC 3261 25.1: user = 1*( unreserved / escaped / user-unreserved ). */
const SIP_USER = /^(?:[A-Za-z0-9\-_.!~*'()&=+$,;?/]|%[0-9A-Fa-f]{2})+$/;

function hostProblem(host: string): string | null {
  if (/^[\d.]+$/.test(host)) {
    return IPV4.test(host) ? null : `${host} is not an IPv4 address (four numbers 0-255)`;
  }
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  const labels = name.split('.');
  if (labels.length < 2) return `${host} is not fully qualified (it needs a domain)`;
  if (name.length > 253) return 'an FQDN has at most 253 characters';
  const bad = labels.find((label) => !LABEL.test(label));
  if (bad !== undefined) {
    return `FQDN label "${bad}" is not 1 to 63 letters, digits or hyphens without a leading or trailing hyphen`;
  }
  if (/^\d+$/.test(labels[labels.length - 1]!))
    return 'the last label of an FQDN cannot be numeric';
  return null;
}

function hostPortProblem(text: string): string | null {
  const match = /^([^:]+)(?::(\d+))?$/.exec(text);
  if (!match) return `${text} is not <host> or <host>:<port>`;
  const [, host, port] = match;
  if (port !== undefined && (!/^[1-9]\d{0,4}$/.test(port) || Number(port) > 65535)) {
    return `port ${port} is not from 1 to 65535`;
  }
  return hostProblem(host!);
}

/**
 * Checks a destination against the formats the service accepts; returns what is wrong with it,
 * or null when it is acceptable.
 */
export function originationUriProblem(uri: string): string | null {
  if (/^sips?:/i.test(uri)) {
    const sip = /^sip:([^@]+)@(.+)$/i.exec(uri);
    if (!sip) return 'a SIP URI must be sip:<user>@<host>';
    if (!SIP_USER.test(sip[1]!)) return `"${sip[1]}" is not a valid SIP user part`;
    return hostPortProblem(sip[2]!);
  }
  return hostPortProblem(uri);
}

const Name = Type.String({ maxLength: 100, description: 'at most 100 characters' });
const Uri = Type.String({ minLength: 1, maxLength: 512, description: URI_FORMATS });
const AuthenticationNeeded = Type.Boolean({ description: 'true or false' });
const Username = Type.String({
  minLength: 1,
  maxLength: 128,
  description: 'from 1 to 128 characters',
});
const Password = Type.String({
  minLength: 1,
  maxLength: 128,
  description: 'from 1 to 128 characters',
});

const UriParams = Type.Object({ auth_id: Type.String(), uri_uuid: Type.String() });

// The response schemas name every field that leaves; `password` is not one of them.
const OriginationUri = Type.Object({
  uri_uuid: Type.String(),
  name: Nullable(Type.String()),
  uri: Type.String(),
  authentication_needed: Type.Boolean(),
  username: Nullable(Type.String()),
  resource_uri: Type.String(),
});

const UriChanged = Type.Object({
  api_id: Type.String(),
  message: Type.String(),
  uri_uuid: Type.String(),
});

function checkUri(uri: string): void {
  const problem = originationUriProblem(uri);
  if (problem) throw invalidParameter(`invalid uri: must be ${URI_FORMATS}; ${problem}`);
}

/** With authentication the username and password must be present; without it neither is kept. */
function authentication(needed: boolean, username: string | null, password: string | null) {
  if (!needed) return { authentication_needed: false, username: null, password: null };
  for (const [name, value] of [
    ['username', username],
    ['password', password],
  ] as const) {
    if (!value) {
      throw missingParameter(
        `missing required parameter: ${name} (required when authentication_needed is true)`,
      );
    }
  }
  return { authentication_needed: true, username, password };
}

export function originationUriRoutes(app: TypedApp, { state, uris, clock }: ApiContext): void {
  const present = (principal: Principal, u: OriginationUriRecord) => ({
    uri_uuid: u.uri_uuid,
    name: u.name,
    uri: u.uri,
    authentication_needed: u.authentication_needed,
    username: u.authentication_needed ? u.username : null,
    resource_uri: uris.account(principal.authId, 'SipTrunk', 'URI', u.uri_uuid),
  });
  const findUri = (principal: Principal, id: string): Promise<OriginationUriRecord> =>
    findVisible(state.originationUris, principal, id, 'origination URI');

  app.post('/v1/Account/:auth_id/SipTrunk/URI/', {
    schema: {
      tags: ['Origination URI'],
      params: AuthIdParams,
      body: Type.Object(
        {
          name: Type.Optional(Name),
          uri: Uri,
          authentication_needed: Type.Optional(AuthenticationNeeded),
          username: Type.Optional(Username),
          password: Type.Optional(Password),
        },
        { required: ['uri'] },
      ),
      response: { 201: UriChanged, ...errorResponses(400, 401, 422) },
    },
    handler: async (request, reply) => {
      const { principal, body } = request;
      checkUri(body.uri);
      const record: OriginationUriRecord = {
        account: principal.tenant,
        subaccount: principal.isMain ? null : principal.authId,
        created: clock.now(),
        uri_uuid: newUuid(),
        name: body.name ?? null,
        uri: body.uri,
        ...authentication(
          body.authentication_needed ?? false,
          body.username ?? null,
          body.password ?? null,
        ),
      };
      await state.originationUris.create(record);
      reply.code(201);
      return {
        api_id: request.id,
        message: 'Origination URI created successfully.',
        uri_uuid: record.uri_uuid,
      };
    },
  });

  app.get('/v1/Account/:auth_id/SipTrunk/URI/', {
    schema: {
      tags: ['Origination URI'],
      params: AuthIdParams,
      querystring: ListQuery,
      response: { 200: ListBody(OriginationUri), ...errorResponses(400, 401) },
    },
    handler: async (request) => {
      const { principal } = request;
      const { limit, offset } = request.query;
      const page = await listVisible(state.originationUris, principal, { limit, offset });
      return uris.list(
        request,
        { limit, offset, total: page.total },
        page.items.map((u) => present(principal, u)),
      );
    },
  });

  app.get('/v1/Account/:auth_id/SipTrunk/URI/:uri_uuid/', {
    schema: {
      tags: ['Origination URI'],
      params: UriParams,
      response: {
        200: WithApiId(OriginationUri),
        ...errorResponses(401, 404),
      },
    },
    handler: async (request) => {
      const found = await findUri(request.principal, request.params.uri_uuid);
      return { api_id: request.id, ...present(request.principal, found) };
    },
  });

  app.post('/v1/Account/:auth_id/SipTrunk/URI/:uri_uuid/', {
    schema: {
      tags: ['Origination URI'],
      params: UriParams,
      body: Type.Object({
        name: Type.Optional(Name),
        uri: Type.Optional(Uri),
        authentication_needed: Type.Optional(AuthenticationNeeded),
        username: Type.Optional(Username),
        password: Type.Optional(Password),
      }),
      response: { 200: UriChanged, ...errorResponses(400, 401, 404, 422) },
    },
    handler: async (request) => {
      const { principal, body } = request;
      const current = await findUri(principal, request.params.uri_uuid);
      if (body.uri !== undefined) checkUri(body.uri);
      const next: OriginationUriRecord = {
        ...current,
        name: body.name ?? current.name,
        uri: body.uri ?? current.uri,
        ...authentication(
          body.authentication_needed ?? current.authentication_needed,
          body.username ?? current.username,
          body.password ?? current.password,
        ),
      };
      await state.originationUris.update(next, current);
      return {
        api_id: request.id,
        message: 'origination uri updated successfully.',
        uri_uuid: current.uri_uuid,
      };
    },
  });

  app.delete('/v1/Account/:auth_id/SipTrunk/URI/:uri_uuid/', {
    schema: {
      tags: ['Origination URI'],
      params: UriParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404, 409) },
    },
    handler: async (request, reply) => {
      const found = await findUri(request.principal, request.params.uri_uuid);
      // Deleting a URI a trunk routes to would make that trunk's inbound calls fail (the API
      // document says so), so it is refused until no trunk uses it: the operator repoints or
      // deletes the trunk first and never loses inbound routing by accident. Trunks only use
      // URIs of their own account, so every trunk named here is one the caller can see.
      const trunks = await state.trunks.all(found.account, `uri:${found.uri_uuid}`);
      if (trunks.length > 0) {
        throw conflict(
          `origination URI ${found.uri_uuid} is in use by trunk ${trunks.map((t) => t.trunk_id).join(', ')}; ` +
            'point the trunk at another URI or delete the trunk first',
        );
      }
      await state.originationUris.remove(found);
      return reply.code(204).send(null);
    },
  });
}
