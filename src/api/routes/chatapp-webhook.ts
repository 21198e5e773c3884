import { Type } from 'typebox';
import type { ChatAppWebhooks } from '../../messaging/chatapp/chatapp-webhooks.js';
import type { TypedApp } from '../api-context.js';
import { sendError } from '../error-handler.js';

const Params = Type.Object({ biz_account_id: Type.String() });

/**
 * The endpoint upstream calls (`/v1/ChatApp/Webhook/{biz_account_id}/`): no Basic auth; the
 * subscription check answers the challenge for the right verify token, and a POST must carry
 * the app secret's signature over its exact bytes, so its body is kept raw until checked.
 */
export async function chatAppWebhookRoutes(
  app: TypedApp,
  webhooks: ChatAppWebhooks,
): Promise<void> {
  await app.register(async (scope: TypedApp) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );
    const url = '/v1/ChatApp/Webhook/:biz_account_id/';
    const tags = ['Chat-app webhook'];

    scope.get(url, {
      schema: {
        tags,
        summary: 'Answer the chat-app webhook subscription check',
        params: Params,
        querystring: Type.Record(Type.String(), Type.String()),
      },
      handler: async (request, reply) => {
        const query = request.query as Record<string, string>;
        const challenge = await webhooks.subscribe(request.params.biz_account_id, {
          mode: query['hub.mode'],
          verifyToken: query['hub.verify_token'],
          challenge: query['hub.challenge'],
        });
        if (challenge === null)
          return sendError(request, reply, 403, 'the subscription check does not match');
        return reply.type('text/plain').send(challenge);
      },
    });

    scope.post(url, {
      schema: { tags, summary: 'Receive chat-app webhook events', params: Params },
      handler: async (request, reply) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const signature = request.headers['x-hub-signature-256'];
        const outcome = await webhooks.receive(
          request.params.biz_account_id,
          raw,
          typeof signature === 'string' ? signature : undefined,
        );
        if (outcome === 'unauthorized')
          return sendError(
            request,
            reply,
            401,
            'the X-Hub-Signature-256 signature does not verify',
          );
        if (outcome === 'malformed')
          return sendError(request, reply, 400, 'the body is not a webhook JSON object');
        return reply.type('text/plain').send('EVENT_RECEIVED');
      },
    });
  });
}
