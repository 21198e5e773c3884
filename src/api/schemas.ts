import { Type, type TSchema } from 'typebox';
import {
  HTTP_PROTOCOLS,
  isAbsoluteUrl,
  MAX_URL_LENGTH,
  WEBSOCKET_PROTOCOLS,
} from '../core/absolute-url.js';

/** Schemas shared by every resource: they validate, serialise and document at once. */
export const AuthIdParams = Type.Object({ auth_id: Type.String() });

export const ListQuery = Type.Object({
  limit: Type.Integer({
    minimum: 1,
    maximum: 20,
    default: 20,
    description: 'an integer from 1 to 20',
  }),
  offset: Type.Integer({ minimum: 0, default: 0, description: 'an integer of at least 0' }),
});

export const ErrorBody = Type.Object({ api_id: Type.String(), error: Type.String() });

export const MessageBody = Type.Object({ api_id: Type.String(), message: Type.String() });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A single object as retrieved: its fields and the request's api_id. */
export const WithApiId = <T extends TSchema>(object: T) =>
  Type.Intersect([Type.Object({ api_id: Type.String() }), object]);

export const ListMeta = Type.Object({
  limit: Type.Integer(),
  offset: Type.Integer(),
  total_count: Type.Integer(),
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
});

export const ListBody = <T extends TSchema>(item: T) =>
  Type.Object({ api_id: Type.String(), meta: ListMeta, objects: Type.Array(item) });

/** The error responses a route can give, for /docs. */
export const errorResponses = (...codes: number[]) =>
  Object.fromEntries(codes.map((code) => [code, ErrorBody]));

/** An HTTP method name as callback settings take it. */
export const HttpMethod = Type.Union([Type.Literal('GET'), Type.Literal('POST')], {
  description: 'GET or POST',
});

/**
 * The string formats URL parameters are checked with (http-app.ts gives them to Ajv): the one
 * rule of core/absolute-url.ts, which the parameters checked in code (calls, messages) use too.
 */
export const URL_FORMATS = {
  'http-url': (text: string) => isAbsoluteUrl(text, HTTP_PROTOCOLS),
  'websocket-url': (text: string) => isAbsoluteUrl(text, WEBSOCKET_PROTOCOLS),
};

export const HttpUrl = Type.String({
  format: 'http-url',
  maxLength: MAX_URL_LENGTH,
  description: 'an http or https URL',
});

export const WebSocketUrl = Type.String({
  format: 'websocket-url',
  maxLength: MAX_URL_LENGTH,
  description: 'a ws:// or wss:// URL',
});

/**
 * An endpoint's or a trunk's SDES-SRTP policy (call/srtp-policy.ts): SRTP keys travel only
 * over SIP over TLS; `optional` answers RTP/SAVP offers with SRTP and offers plain RTP.
 */
export const SrtpPolicyField = Type.Union(
  [Type.Literal('required'), Type.Literal('optional'), Type.Literal('off')],
  { description: 'required, optional or off' },
);

/** An endpoint's: SDES-SRTP's, or `dtls` for WebRTC's media in calls to it. */
export const EndpointSrtpPolicyField = Type.Union(
  [Type.Literal('required'), Type.Literal('optional'), Type.Literal('off'), Type.Literal('dtls')],
  { description: 'required, optional, off or dtls' },
);
