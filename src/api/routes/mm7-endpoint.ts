import type { Mm7Inbound } from '../../messaging/mms/mm7-inbound.js';
import type { TypedApp } from '../api-context.js';
import { sendError } from '../error-handler.js';

/**
 * The MMSC's way in (`/v1/MM7/`): delivery reports and inbound MMS as MM7 SOAP requests, with
 * HTTP Basic auth of the MM7 credentials. The body is read raw: it is MIME, not JSON.
 */
export async function mm7Routes(app: TypedApp, mm7: Mm7Inbound): Promise<void> {
  await app.register(async (scope: TypedApp) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_r, body, done) => done(null, body));
    scope.post('/v1/MM7/', {
      // On the route rather than the parser, so that a 413 names the limit that applies.
      bodyLimit: 6 * 1024 * 1024,
      schema: { tags: ['MM7'], summary: 'Receive an MM7 request from the MMSC' },
      handler: async (request, reply) => {
        if (!mm7.authorized(request.headers.authorization))
          return sendError(
            request,
            reply.header('www-authenticate', 'Basic realm="voxgate MM7"'),
            401,
            'MM7 requests need the MM7 credentials (HTTP Basic)',
          );
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const answer = await mm7.handle(String(request.headers['content-type'] ?? ''), raw);
        return reply.code(answer.status).type(answer.contentType).send(answer.body);
      },
    });
  });
}
