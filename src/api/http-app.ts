import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import type { DestinationStream } from 'pino';
import { newUuid } from '../core/ids.js';
import type { TypedApp } from './api-context.js';
import { installErrorHandler } from './error-handler.js';
import { installMethodNotAllowed } from './method-not-allowed.js';

export interface HttpAppOptions {
  logLevel: string;
  /** Log paths replaced by `[redacted]`. */
  redact?: string[];
  /** Where logs go; stdout by default. */
  logStream?: DestinationStream;
}

/**
 * The HTTP server the REST API runs on, before any route: request ids, the trailing slash
 * optional, Ajv coercing form values, the error envelope, 405 with Allow, JSON and form
 * bodies, the OpenAPI document, and a POST without a body read as an empty form.
 */
export async function buildHttpApp(options: HttpAppOptions): Promise<TypedApp> {
  const app = Fastify({
    logger: {
      level: options.logLevel,
      ...(options.redact ? { redact: { paths: options.redact, censor: '[redacted]' } } : {}),
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    genReqId: () => newUuid(),
    routerOptions: { ignoreTrailingSlash: true },
    ajv: {
      customOptions: {
        verbose: true,
        coerceTypes: 'array',
        useDefaults: true,
        removeAdditional: true,
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  installErrorHandler(app);
  installMethodNotAllowed(app);
  await app.register(formbody);
  await app.register(swagger, {
    openapi: {
      info: { title: 'voxgate', version: '1', description: 'voxgate REST control plane' },
      components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } },
      security: [{ basic: [] }],
    },
  });
  // A POST without a body is an empty form, so that "missing parameter" is what the client hears.
  app.addHook('preValidation', async (request) => {
    if (request.method === 'POST' && request.body === undefined) request.body = {};
  });
  return app;
}
