import swaggerUi from '@fastify/swagger-ui';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TypedApp } from './api-context.js';

/** Where the reference is served: the page, and under it `json`, `yaml` and `static/`. */
export const API_REFERENCE_PATH = '/docs';

/**
 * What the page may load: its own origin only (the UI's scripts, styles and the OpenAPI
 * document), and images inlined as data: URLs (the logo). A browser refuses anything else, so
 * a gateway on a closed network never has its readers' browsers reach out.
 */
const CONTENT_SECURITY_POLICY = {
  'default-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  // The UI sets a few inline styles; styles load nothing by themselves (url() falls under img-src).
  'style-src': ["'self'", "'unsafe-inline'"],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'self'"],
};

/**
 * The browsable API reference at /docs: Swagger UI, its assets served from the package (no
 * CDN), reading the OpenAPI document from /docs/json. Like /health and /metrics it is outside
 * the authenticated scope: it describes the API, it holds no account's data.
 *
 * /docs answered the OpenAPI JSON before it was a page, and tools (SDK generators, scripts)
 * may still fetch it there: a request that does not ask for HTML (a browser's Accept names
 * text/html; curl, fetch and SDK generators send `*\/*` or application/json) gets the JSON.
 */
export async function apiReference(app: TypedApp): Promise<void> {
  const page = [API_REFERENCE_PATH, `${API_REFERENCE_PATH}/`];
  await app.register(swaggerUi, {
    routePrefix: API_REFERENCE_PATH,
    // Swagger UI would otherwise send the document to validator.swagger.io for a badge: the
    // plugin's option (false writes null into the page) and the UI's own, both off.
    validatorUrl: false,
    uiConfig: { validatorUrl: null, deepLinking: true, docExpansion: 'list' },
    theme: { title: 'voxgate API reference' },
    staticCSP: CONTENT_SECURITY_POLICY,
    uiHooks: {
      onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
        if (!page.includes(request.routeOptions.url ?? '')) return;
        reply.header('vary', 'accept');
        if (asksForHtml(request.headers.accept)) return;
        return reply.type('application/json; charset=utf-8').send(app.swagger());
      },
    },
  });
}

function asksForHtml(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*(text\/html|application\/xhtml\+xml)\b/i.test(accept);
}
