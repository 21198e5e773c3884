import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, StoreUnavailable, UniqueViolation } from '../core/errors.js';
import { ACCOUNT_CHALLENGE } from './auth.js';
import { validationMessage, type SchemaError } from './validation-message.js';

/**
 * The one error handler. Every error leaves as `{"api_id": "...", "error": "..."}`: 4xx messages
 * say exactly what was wrong; 5xx messages are hidden from the client and logged.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(answerError);
}

/**
 * Fastify's `frameworkErrors`: what it meets before routing (a path it cannot decode, a path
 * segment longer than the router takes) is answered as every other error.
 */
export function frameworkErrorHandler(
  maxParamLength: number,
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    const path = request.raw.url?.split('?')[0] ?? '/';
    if (error.code === 'FST_ERR_BAD_URL')
      return void sendError(request, reply, 400, badPercentEncoding(path));
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
      return void sendError(
        request,
        reply,
        414,
        `the request's path is too long: a segment of it exceeds ${maxParamLength} characters`,
      );
    return void answerError(error, request, reply);
  };
}

function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof StoreUnavailable) {
    // Redis is restarting or failing over: the client may try again, which a 500 would not say.
    request.log.warn({ detail: error.detail }, 'state store unavailable');
    reply.header('retry-after', '2');
    return sendError(request, reply, 503, error.message);
  }
  const { status, message } = describe(error, request);
  if (status >= 500) request.log.error({ err: error }, 'request failed');
  return sendError(request, reply, status, message);
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
): FastifyReply {
  // RFC 7235 3.1: the server generating a 401 response MUST send a WWW-Authenticate header
  // field containing at least one challenge applicable to the target resource. A scope with
  // other credentials (the operator's bearer token, MM7) sets its own before it refuses.
  if (status === 401 && !reply.hasHeader('www-authenticate'))
    reply.header('www-authenticate', ACCOUNT_CHALLENGE);
  return reply.code(status).type('application/json').send({ api_id: request.id, error: message });
}

function describe(
  error: FastifyError,
  request: FastifyRequest,
): { status: number; message: string } {
  if (error instanceof ApiError) return { status: error.status, message: error.message };
  if (error instanceof UniqueViolation) return { status: 409, message: error.message };
  if (error.validation) {
    return validationMessage(error.validation as SchemaError[], error.validationContext ?? 'body');
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, message: unsupportedMediaType(request.headers['content-type']) };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'the JSON body is empty' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        message: `the request body exceeds ${request.routeOptions.bodyLimit} bytes`,
      };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, message: 'Content-Length does not match the body' };
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return { status: 400, message: `the body is not valid JSON: ${error.message}` };
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return { status, message: error.message };
  return { status: 500, message: 'internal error' };
}

/** Names the first broken escape: a `%` without two hex digits, or escapes that are not UTF-8. */
function badPercentEncoding(path: string): string {
  const broken = /%(?![0-9A-Fa-f]{2})/.exec(path);
  if (broken)
    return `the request's path is not valid percent-encoding: "${path.slice(broken.index, broken.index + 3)}" is not % and two hexadecimal digits`;
  return "the request's path is not valid percent-encoding: its escaped bytes are not UTF-8";
}

function unsupportedMediaType(given: string | undefined): string {
  const supported = 'application/json or application/x-www-form-urlencoded';
  if (!given) return `the request has a body but no Content-Type: send ${supported}`;
  return `Content-Type ${JSON.stringify(given.slice(0, 100))} is not supported: send ${supported}`;
}
