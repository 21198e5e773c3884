import rateLimit from '@fastify/rate-limit';
import { ApiError } from '../core/errors.js';
import type { RedisClient } from '../state/redis-connection.js';
import type { ApiContext, RouteModule, TypedApp } from './api-context.js';
import { installAuthentication } from './auth.js';
import { redisRateStore } from './rate-limit-store.js';
import { accountRoutes } from './routes/accounts.js';
import { callControlRoutes } from './routes/call-control.js';
import { callCreateRoutes } from './routes/call-create.js';
import { applicationRoutes } from './routes/applications.js';
import { callRoutes } from './routes/calls.js';
import { conferenceRecordRoutes } from './routes/conference-record.js';
import { conferenceRoutes } from './routes/conferences.js';
import { chatAppAccountRoutes } from './routes/chatapp-accounts.js';
import { chatAppTemplateRoutes } from './routes/chatapp-templates.js';
import { liveCallRoutes } from './routes/live-calls.js';
import { messageRoutes } from './routes/messages.js';
import { incomingCarrierRoutes } from './routes/incoming-carriers.js';
import { numberRoutes } from './routes/numbers.js';
import { powerpackRoutes } from './routes/powerpacks.js';
import { profileRoutes } from './routes/profiles.js';
import { tollfreeVerificationRoutes } from './routes/tollfree-verifications.js';
import { sipDirectoryRoutes } from './routes/sip-directory.js';
import { streamRoutes } from './routes/streams.js';
import { recordingRoutes } from './routes/recordings.js';

/** Every resource, in the order /docs lists them. */
const RESOURCES: RouteModule[] = [
  accountRoutes,
  applicationRoutes,
  numberRoutes,
  incomingCarrierRoutes,
  sipDirectoryRoutes,
  callRoutes,
  (scope, context) => callCreateRoutes(scope, context, context.launcher ?? context.calls),
  callControlRoutes,
  streamRoutes,
  (scope, context) => context.recordings && recordingRoutes(scope, context, context.recordings),
  liveCallRoutes,
  conferenceRoutes,
  conferenceRecordRoutes,
  messageRoutes,
  powerpackRoutes,
  chatAppAccountRoutes,
  chatAppTemplateRoutes,
  profileRoutes,
  tollfreeVerificationRoutes,
];

export interface RestApiOptions {
  /** Requests per second per auth id per endpoint; 0 turns the limit off. */
  rateLimit: number;
  /** Shares the rate-limit counters between nodes when set (one server, Sentinel or Cluster). */
  redis: RedisClient | null;
}

/**
 * The `/v1/Account/{auth_id}/...` API (and the `/v2/` live-call listing): authenticated, rate
 * limited, one module per resource. Every route registered in the scope is authenticated,
 * whatever its prefix.
 */
export async function restApi(
  app: TypedApp,
  context: ApiContext,
  options: RestApiOptions,
): Promise<void> {
  await app.register(async (scope: TypedApp) => {
    installAuthentication(scope, context.authenticator);
    if (options.rateLimit > 0) {
      await scope.register(rateLimit, {
        global: true,
        hook: 'preHandler',
        max: options.rateLimit,
        timeWindow: 1000,
        nameSpace: 'vg:ratelimit:',
        // While Redis is unreachable requests are let through the limit: the state store they
        // go on to answers 503 with a message saying why, where the limiter would answer 500.
        ...(options.redis
          ? { store: redisRateStore(options.redis, 'vg:ratelimit:'), skipOnError: true }
          : {}),
        keyGenerator: (request) =>
          `${request.principal.authId}:${request.method}:${request.routeOptions.url ?? request.url}`,
        errorResponseBuilder: (_request, limit) =>
          new ApiError(
            'rate_limited',
            `rate limit exceeded: at most ${limit.max} requests per second on this endpoint; retry in ${limit.after}`,
          ),
      });
    }
    for (const register of RESOURCES) register(scope, context);
  });
}
