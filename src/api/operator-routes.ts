import { Type } from 'typebox';
import { bearerToken } from '../core/authorization-header.js';
import { notFound, unauthorized } from '../core/errors.js';
import { sameSecret } from '../core/same-secret.js';
import type { TollfreeStatus } from '../state/records.js';
import type { State } from '../state/state.js';
import type { TollfreeVerifications } from '../tollfree/verifications.js';
import type { TypedApp } from './api-context.js';
import { audit } from './audit.js';
import { errorResponses } from './schemas.js';
import type { AccountLimiter } from '../limits/account-limiter.js';
import { accountLimitRoutes } from './routes/account-limits.js';

/** The challenge of a 401 from the operator interface. */
const OPERATOR_CHALLENGE = 'Bearer realm="voxgate operator"';

const STATUSES = ['SUBMITTED', 'PROCESSING', 'UPDATE_REQUIRED', 'APPROVED', 'REJECTED'];

const Request = Type.Object({
  uuid: Type.String(),
  account: Type.String(),
  number: Type.String(),
  profile_uuid: Type.String(),
  usecase: Type.String(),
  status: Type.String(),
  rejection_reason: Type.String(),
  error_message: Type.String(),
  created: Type.String(),
  last_modified: Type.String(),
});

export interface OperatorContext {
  state: State;
  tollfree: TollfreeVerifications;
  /** The tenant whose accounts the operator reviews. */
  tenant: string;
  token: string;
  /** Starts this node's drain (the same as SIGTERM); its node id. */
  drain?: () => string;
  /** The account limits the operator sets (routes/account-limits.ts). */
  limits: AccountLimiter;
}

/**
 * The interface of whoever runs the gateway (`/operator/v1/`), above the accounts: it reviews
 * toll-free verification requests of every account. A bearer token (VOXGATE_OPERATOR_TOKEN)
 * is the only credential it takes; account credentials never open it, and the token never
 * opens an account's interface (that one takes HTTP Basic alone).
 */
export async function operatorRoutes(app: TypedApp, context: OperatorContext): Promise<void> {
  await app.register(async (scope: TypedApp) => {
    scope.addHook('onRequest', async (request, reply) => {
      if (!sameSecret(bearerToken(request.headers.authorization) ?? '', context.token)) {
        // RFC 6750 3: the bearer scheme's challenge, with a realm of its own.
        reply.header('www-authenticate', OPERATOR_CHALLENGE);
        throw unauthorized(
          'the operator interface takes its bearer token (VOXGATE_OPERATOR_TOKEN)',
        );
      }
    });
    const tags = ['Operator'];
    const present = (v: Awaited<ReturnType<State['tollfreeVerifications']['all']>>[number]) => ({
      uuid: v.uuid,
      account: v.subaccount ?? v.account,
      number: v.number,
      profile_uuid: v.profile_uuid,
      usecase: v.usecase,
      status: v.status,
      rejection_reason: v.rejection_reason,
      error_message: v.error_message,
      created: new Date(v.created).toISOString(),
      last_modified: new Date(v.modified).toISOString(),
    });

    scope.get('/operator/v1/TollfreeVerification/', {
      schema: {
        tags,
        summary: "List every account's toll-free verifications (operator)",
        querystring: Type.Object({
          status: Type.Optional(Type.Union(STATUSES.map((s) => Type.Literal(s)))),
        }),
        response: {
          200: Type.Object({ objects: Type.Array(Request) }),
          ...errorResponses(400, 401),
        },
      },
      handler: async (request) => {
        const { status } = request.query as { status?: string };
        const all = await context.state.tollfreeVerifications.all(context.tenant);
        return {
          objects: all
            .filter((v) => !status || v.status === status)
            .sort((a, b) => a.created - b.created)
            .map(present),
        };
      },
    });

    scope.post('/operator/v1/TollfreeVerification/:uuid/', {
      schema: {
        tags,
        summary: 'Set the review status of a toll-free verification (operator)',
        params: Type.Object({ uuid: Type.String() }),
        body: Type.Object(
          {
            status: Type.Union(
              ['PROCESSING', 'APPROVED', 'REJECTED', 'UPDATE_REQUIRED'].map((s) => Type.Literal(s)),
            ),
            rejection_reason: Type.Optional(Type.String({ maxLength: 500 })),
            error_message: Type.Optional(Type.String({ maxLength: 500 })),
          },
          { required: ['status'] },
        ),
        response: { 200: Request, ...errorResponses(400, 401, 404, 409, 422) },
      },
      handler: async (request) => {
        const { uuid } = request.params as { uuid: string };
        const body = request.body as {
          status: TollfreeStatus;
          rejection_reason?: string;
          error_message?: string;
        };
        const current = await context.state.tollfreeVerifications.get(context.tenant, uuid);
        if (!current) throw notFound(`toll-free verification ${uuid}`);
        const moved = await context.tollfree.move(current, body.status, {
          ...(body.rejection_reason === undefined
            ? {}
            : { rejection_reason: body.rejection_reason }),
          ...(body.error_message === undefined ? {} : { error_message: body.error_message }),
        });
        audit(request.log, {
          actor: 'operator',
          action: 'tollfree_verification.review',
          target: uuid,
          detail: { from: current.status, to: moved.status },
        });
        return present(moved);
      },
    });

    accountLimitRoutes(scope, context);

    /** Drains this node as SIGTERM does: no new work, running calls go on, then it exits. */
    scope.post('/operator/v1/Node/Drain/', {
      schema: {
        tags,
        summary: 'Drain this node (operator)',
        response: {
          202: Type.Object({ node: Type.String(), state: Type.Literal('draining') }),
          ...errorResponses(401, 404),
        },
      },
      handler: async (request, reply) => {
        if (!context.drain) throw notFound('draining (this gateway is not started by its process)');
        const node = context.drain();
        audit(request.log, { actor: 'operator', action: 'node.drain', target: node });
        return reply.code(202).send({ node, state: 'draining' as const });
      },
    });
  });
}
