import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, StoreUnavailable, UniqueViolation } from '../core/errors.js';
import { validationMessage, type SchemaError } from './validation-message.js';

/**
 * The one error handler. Every error leaves as `{"api_id": "...", "error": "..."}`: 4xx messages
 * say exactly what was wrong; 5xx messages are hidden from the client and logged.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof StoreUnavailable) {
      // Redis is restarting or failing over: the client may try again, which a 500 would not say.
      request.log.warn({ detail: error.detail }, 'state store unavailable');
      reply.header('retry-after', '2');
      return sendError(request, reply, 503, error.message);
    }
    const { status, message } = describe(error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    return sendError(request, reply, status, message);
  });
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
): FastifyReply {
  return reply.code(status).type('application/json').send({ api_id: request.id, error: message });
}

function describe(error: FastifyError): { status: number; message: string } {
  if (error instanceof ApiError) return { status: error.status, message: error.message };
  if (error instanceof UniqueViolation) return { status: 409, message: error.message };
  if (error.validation) {
    return validationMessage(error.validation as SchemaError[], error.validationContext ?? 'body');
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 400,
        message: 'Content-Type must be application/json or application/x-www-form-urlencoded',
      };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'the JSON body is empty' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 400, message: 'the request body is too large' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, message: 'Content-Length does not match the body' };
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return { status: 400, message: 'the body is not valid JSON' };
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return { status, message: error.message };
  return { status: 500, message: 'internal error' };
}
