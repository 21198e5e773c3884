import { Type } from 'typebox';
import { invalidParameter, missingParameter } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { originationUriProblem, URI_FORMATS } from '../../sip/origination-uri-format.js';
import { ownedBy } from '../owned-resources.js';
import { resourceRoutes } from '../resource-routes.js';
import { Nullable } from '../schemas.js';

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

const CreateBody = Type.Object(
  {
    name: Type.Optional(Name),
    uri: Uri,
    authentication_needed: Type.Optional(AuthenticationNeeded),
    username: Type.Optional(Username),
    password: Type.Optional(Password),
  },
  { required: ['uri'] },
);

const UpdateBody = Type.Object({
  name: Type.Optional(Name),
  uri: Type.Optional(Uri),
  authentication_needed: Type.Optional(AuthenticationNeeded),
  username: Type.Optional(Username),
  password: Type.Optional(Password),
});

export function originationUriRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, clock } = context;
  resourceRoutes(app, context, {
    path: 'SipTrunk/URI',
    tag: 'Origination URI',
    what: 'origination URI',
    collection: state.originationUris,
    view: OriginationUri,
    createBody: CreateBody,
    updateBody: UpdateBody,
    audit: {
      kind: 'origination_uri',
      id: (u) => u.uri_uuid,
      credentials: ['authentication_needed', 'username', 'password'],
    },
    present: (principal, u) => ({
      uri_uuid: u.uri_uuid,
      name: u.name,
      uri: u.uri,
      authentication_needed: u.authentication_needed,
      username: u.authentication_needed ? u.username : null,
      resource_uri: uris.account(principal.authId, 'SipTrunk', 'URI', u.uri_uuid),
    }),
    create: async (principal, body) => {
      checkUri(body.uri);
      return {
        ...ownedBy(principal, clock.now()),
        uri_uuid: newUuid(),
        name: body.name ?? null,
        uri: body.uri,
        ...authentication(
          body.authentication_needed ?? false,
          body.username ?? null,
          body.password ?? null,
        ),
      };
    },
    created: (u) => ({ message: 'Origination URI created successfully.', uri_uuid: u.uri_uuid }),
    createdAnswer: UriChanged,
    update: async (_principal, current, body) => {
      if (body.uri !== undefined) checkUri(body.uri);
      return {
        ...current,
        name: body.name ?? current.name,
        uri: body.uri ?? current.uri,
        ...authentication(
          body.authentication_needed ?? current.authentication_needed,
          body.username ?? current.username,
          body.password ?? current.password,
        ),
      };
    },
    updated: (u) => ({ message: 'origination uri updated successfully.', uri_uuid: u.uri_uuid }),
    updatedAnswer: UriChanged,
    // SIP document: "Deleting a URI attached to an active trunk as primary or fallback makes
    // inbound calls fail": the delete goes through, and the trunk's calls then skip the URI
    // (both gone: they fail with 5020 Routing Error and a log line naming the URIs).
  });
}
