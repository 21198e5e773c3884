import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import { invalidParameter } from '../core/errors.js';
import { newUuid } from '../core/ids.js';
import type { TypedApp } from './api-context.js';
import { apiReference } from './api-reference.js';
import { clientErrorHandler } from './client-error.js';
import { frameworkErrorHandler, installErrorHandler } from './error-handler.js';
import { installMethodNotAllowed } from './method-not-allowed.js';
import { URL_FORMATS } from './schemas.js';

export interface HttpAppOptions {
  logLevel: string;
  /** Log paths replaced by `[redacted]`. */
  redact?: string[];
  /**
   * Where logs go; pino's JSON on stdout by default. The process entry passes a pino-pretty
   * stream for VOXGATE_LOG_FORMAT=pretty (src/log-output.ts, where the setting is declared).
   */
  logStream?: DestinationStream;
}

/** Longest path segment (an id) the router takes; a longer one answers 414. */
const MAX_PARAM_LENGTH = 100;

/**
 * The HTTP server the REST API runs on, before any route: request ids, the trailing slash
 * optional and a repeated slash read as one, Ajv coercing form values, the error envelope
 * (also for what the HTTP parser and the router refuse), 405 with Allow, JSON and form bodies
 * (any other type answers 415), the OpenAPI document and its browsable reference at /docs, and
 * a POST without a body read as an
 * empty form.
 */
export async function buildHttpApp(options: HttpAppOptions): Promise<TypedApp> {
  // The parser's refusals are logged through the app's logger, which exists only once it is built.
  let answerClientError: ReturnType<typeof clientErrorHandler> | null = null;
  const app = Fastify({
    logger: {
      level: options.logLevel,
      ...(options.redact ? { redact: { paths: options.redact, censor: '[redacted]' } } : {}),
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    genReqId: () => newUuid(),
    logController: new OneLinePerRequest(),
    routerOptions: {
      ignoreTrailingSlash: true,
      // The official Node SDK asks for its own account at `/v1/Account/{id}//` (its action
      // '/' after the base URL's '/'); the public API answers a repeated slash as one.
      ignoreDuplicateSlashes: true,
      maxParamLength: MAX_PARAM_LENGTH,
    },
    frameworkErrors: frameworkErrorHandler(MAX_PARAM_LENGTH),
    clientErrorHandler: (error, socket) => {
      if (answerClientError) answerClientError(error, socket);
      else socket.destroy();
    },
    ajv: {
      customOptions: {
        verbose: true,
        coerceTypes: 'array',
        useDefaults: true,
        removeAdditional: true,
        formats: URL_FORMATS,
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  answerClientError = clientErrorHandler(app.log);

  installErrorHandler(app);
  installMethodNotAllowed(app);
  // wire-compat.md: bodies are JSON or forms. Fastify also reads text/plain as a string, which
  // then failed the body's schema with a 400; without the parser it is a 415 naming both types.
  app.removeContentTypeParser('text/plain');
  // Fastify's JSON parser drops what JSON.parse said; the client hears where its body breaks.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // The official Node SDK 0.x labels every request `Content-Type: application/json`, its
    // DELETEs without a body too (RFC 9110 9.3.5: "content received in a DELETE request has
    // no generally defined semantics"). No content is no body, whatever its label says.
    if (request.method === 'DELETE' && body === '') return done(null, undefined);
    parseJson(request, body as string, (error, value) =>
      (error as { code?: string } | null)?.code === 'FST_ERR_CTP_INVALID_JSON_BODY'
        ? done(invalidJson(body as string), undefined)
        : done(error, value),
    );
  });
  await app.register(formbody);
  await app.register(swagger, {
    openapi: {
      info: { title: 'voxgate', version: '1', description: 'voxgate REST control plane' },
      components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } },
      security: [{ basic: [] }],
    },
  });
  await apiReference(app);
  // A POST without a body is an empty form, so that "missing parameter" is what the client hears.
  // (A hook that calls done costs no promise; this one runs for every request.)
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.method === 'POST' && request.body === undefined) request.body = {};
    done();
  });
  return app;
}

/**
 * Fastify's request log in one line per request, written once it is answered and naming the
 * request as the line Fastify writes when one comes in does: at the default level each REST
 * request was two log lines, each a write.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

function invalidJson(body: string): Error {
  try {
    JSON.parse(body);
    return invalidParameter('the JSON body has a __proto__ or constructor.prototype key');
  } catch (error) {
    return invalidParameter(`the body is not valid JSON: ${(error as Error).message}`);
  }
}
