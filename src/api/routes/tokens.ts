import { SignJWT } from 'jose';
import { Type, type Static } from 'typebox';
import { invalidParameter, missingParameter } from '../../core/errors.js';
import { visibleTo } from '../owned-resources.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { audit } from '../audit.js';
import { AuthIdParams, errorResponses } from '../schemas.js';

/** wire-compat.md: exp is 3 minutes to 24 hours after creation. */
export const TOKEN_MIN_LIFETIME_S = 3 * 60;
export const TOKEN_MAX_LIFETIME_S = 24 * 60 * 60;
/** Without exp a token lives one hour from when it becomes valid. */
export const TOKEN_DEFAULT_LIFETIME_S = 60 * 60;

/** wire-compat.md: the header client SDKs expect, exactly. */
export const TOKEN_HEADER = { alg: 'HS256', typ: 'JWT', cty: 'plivo;v=1' } as const;

const UnixTime = Type.Integer({ minimum: 0, description: 'an integer number of Unix seconds' });
const Allow = Type.Boolean({ description: 'true or false' });
const VoicePermissions = Type.Object({
  incoming_allow: Type.Optional(Allow),
  outgoing_allow: Type.Optional(Allow),
});

/**
 * The permissions arrive as JSON `per: {voice: {...}}`; form bodies, which cannot nest, may send
 * `per[voice][incoming_allow]` keys or plain `incoming_allow`/`outgoing_allow` fields. Where
 * both are given, `per` wins; anything not given is false.
 */
const TokenRequest = Type.Object({
  iss: Type.Optional(Type.String({ description: 'your own auth id' })),
  sub: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: '1 to 255 characters' }),
  ),
  nbf: Type.Optional(UnixTime),
  exp: Type.Optional(UnixTime),
  per: Type.Optional(
    Type.Object(
      { voice: Type.Optional(VoicePermissions) },
      { description: 'an object {"voice": {"incoming_allow": bool, "outgoing_allow": bool}}' },
    ),
  ),
  incoming_allow: Type.Optional(Allow),
  outgoing_allow: Type.Optional(Allow),
  'per[voice][incoming_allow]': Type.Optional(Allow),
  'per[voice][outgoing_allow]': Type.Optional(Allow),
  app: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'the app_id of one of your applications',
    }),
  ),
});

type TokenBody = Static<typeof TokenRequest>;

function permissions(body: TokenBody) {
  const voice = body.per?.voice;
  return {
    voice: {
      incoming_allow:
        voice?.incoming_allow ?? body['per[voice][incoming_allow]'] ?? body.incoming_allow ?? false,
      outgoing_allow:
        voice?.outgoing_allow ?? body['per[voice][outgoing_allow]'] ?? body.outgoing_allow ?? false,
    },
  };
}

/** nbf defaults to now, exp to an hour after nbf (or now, if nbf is past); both are checked. */
function validity(body: TokenBody, now: number): { nbf: number; exp: number } {
  const nbf = body.nbf ?? now;
  const exp = body.exp ?? Math.max(now, nbf) + TOKEN_DEFAULT_LIFETIME_S;
  const earliest = now + TOKEN_MIN_LIFETIME_S;
  const latest = now + TOKEN_MAX_LIFETIME_S;
  if (exp < earliest || exp > latest) {
    throw invalidParameter(
      `invalid exp: must be from 3 minutes to 24 hours from now (${earliest} to ${latest} in Unix seconds)` +
        (body.exp === undefined ? `; the default exp of nbf + 1 hour is ${exp}` : `; got ${exp}`),
    );
  }
  if (nbf >= exp) throw invalidParameter(`invalid nbf: must be before exp (${exp})`);
  return { nbf, exp };
}

export function tokenRoutes(app: TypedApp, { state, clock }: ApiContext): void {
  app.post('/v1/Account/:auth_id/JWT/Token/', {
    schema: {
      tags: ['Token'],
      summary: 'Create a JWT access token',
      params: AuthIdParams,
      body: TokenRequest,
      response: {
        200: Type.Object({ api_id: Type.String(), token: Type.String() }),
        ...errorResponses(400, 401, 422),
      },
    },
    handler: async (request) => {
      const { principal, body } = request;
      if (body.iss !== undefined && body.iss !== principal.authId) {
        throw invalidParameter(`invalid iss: must be your own auth id ${principal.authId}`);
      }
      const per = permissions(body);
      // An incoming call is routed to the token's subject, so a token that may receive calls
      // must name one.
      if (per.voice.incoming_allow && body.sub === undefined) {
        throw missingParameter(
          'missing required parameter: sub (required when incoming_allow is true)',
        );
      }
      if (body.app !== undefined) {
        const application = await state.applications.get(principal.tenant, body.app);
        if (!visibleTo(application, principal)) {
          throw invalidParameter(`invalid app: no application ${body.app} in this account`);
        }
      }
      const { nbf, exp } = validity(body, Math.floor(clock.now() / 1000));
      const claims = {
        iss: principal.authId,
        ...(body.sub === undefined ? {} : { sub: body.sub }),
        nbf,
        exp,
        per,
        ...(body.app === undefined ? {} : { app: body.app }),
      };
      // Signed with the caller's own auth token: a subaccount's tokens with the subaccount's.
      const token = await new SignJWT(claims)
        .setProtectedHeader({ ...TOKEN_HEADER })
        .sign(new TextEncoder().encode(principal.account.auth_token));
      audit(request.log, {
        actor: principal.authId,
        action: 'access_token.create',
        target: principal.authId,
        credential: true,
        detail: { sub: body.sub ?? null, exp },
      });
      return { api_id: request.id, token };
    },
  });
}
