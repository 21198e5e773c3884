import { Type, type Static } from 'typebox';
import { invalidParameter, notFound } from '../../core/errors.js';
import { parseFilterTime, recordTime } from '../../messaging/message-times.js';
import { parseSendRequest } from '../../messaging/send-request.js';
import { refuseOutboundUrls } from '../outbound-urls.js';
import type { MessageRecord } from '../../state/records.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { spanBound, timeFilterNames, timeWindow } from '../time-window.js';
import type { Principal } from '../auth.js';
import { findVisible, listIndex } from '../owned-resources.js';
import {
  AuthIdParams,
  errorResponses,
  ListBody,
  ListQuery,
  Nullable,
  WithApiId,
} from '../schemas.js';

/** The rule: a message list reads the default and at most the maximum window of calls. */

const Message = Type.Object({
  message_uuid: Type.String(),
  message_time: Type.String(),
  message_direction: Type.String(),
  message_state: Type.String(),
  message_type: Type.String(),
  from_number: Type.String(),
  to_number: Type.String(),
  units: Type.Integer(),
  total_rate: Type.String(),
  total_amount: Type.String(),
  carrier_fees_rate: Type.String(),
  carrier_fees: Type.String(),
  error_code: Nullable(Type.String()),
  error_message: Nullable(Type.String()),
  powerpack_id: Nullable(Type.String()),
  destination_country_iso2: Type.String(),
  destination_network: Nullable(Type.String()),
  requester_ip: Nullable(Type.String()),
  is_domestic: Type.Boolean(),
  replaced_sender: Nullable(Type.String()),
  conversation_id: Nullable(Type.String()),
  conversation_origin: Nullable(Type.String()),
  conversation_expiration_timestamp: Nullable(Type.String()),
  log: Type.String(),
  message_intent: Type.String(),
  message_sent_time: Nullable(Type.String()),
  message_updated_time: Type.String(),
  resource_uri: Type.String(),
});

const SendBody = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'src or powerpack_uuid, dst (several separated by <), text, type, url, method, message_expiry, log, trackable',
});

const TIME_FILTERS = timeFilterNames('message_time');
const EXACT_FILTERS = [
  'message_direction',
  'message_state',
  'message_type',
  'error_code',
  'powerpack_id',
  'from_number',
  'to_number',
  'conversation_id',
  'conversation_origin',
  'destination_country_iso2',
] as const;

const ListMessagesQuery = Type.Intersect([
  ListQuery,
  Type.Object({
    subaccount: Type.Optional(Type.String()),
    ...Object.fromEntries(
      [...TIME_FILTERS, ...EXACT_FILTERS].map((name) => [name, Type.Optional(Type.String())]),
    ),
  }),
]);

const MessageParams = Type.Object({ auth_id: Type.String(), message_uuid: Type.String() });

const ALLOWED: Record<string, readonly string[]> = {
  message_direction: ['inbound', 'outbound'],
  message_state: ['queued', 'sent', 'delivered', 'undelivered', 'failed', 'received', 'read'],
  message_type: ['sms', 'mms', 'chatapp', 'whatsapp'],
};

export function messageRoutes(
  app: TypedApp,
  { state, uris, clock, messages, mediaStore, outbound }: ApiContext,
): void {
  const present = (principal: Principal, m: MessageRecord): Static<typeof Message> => ({
    message_uuid: m.message_uuid,
    message_time: recordTime(m.created)!,
    message_direction: m.message_direction,
    message_state: m.message_state,
    message_type: m.message_type,
    from_number: m.from_number,
    to_number: m.to_number,
    units: m.units,
    total_rate: m.total_rate,
    total_amount: m.total_amount,
    carrier_fees_rate: m.carrier_fees_rate,
    carrier_fees: m.carrier_fees,
    error_code: m.error_code,
    error_message: m.error_message,
    powerpack_id: m.powerpack_id,
    destination_country_iso2: m.destination_country_iso2,
    destination_network: m.destination_network,
    requester_ip: m.requester_ip,
    is_domestic: m.is_domestic,
    replaced_sender: m.replaced_sender,
    conversation_id: m.conversation_id,
    conversation_origin: m.conversation_origin,
    conversation_expiration_timestamp: recordTime(m.conversation_expiration_timestamp),
    log: m.log,
    message_intent: m.message_intent,
    message_sent_time: recordTime(m.sent_time),
    message_updated_time: recordTime(m.updated_time)!,
    resource_uri: uris.account(principal.authId, 'Message', m.message_uuid),
  });

  app.post('/v1/Account/:auth_id/Message/', {
    schema: {
      tags: ['Message'],
      summary: 'Send a message',
      params: AuthIdParams,
      body: SendBody,
      response: {
        202: Type.Object({
          api_id: Type.String(),
          message: Type.String(),
          message_uuid: Type.Array(Type.String()),
          invalid_number: Type.Optional(Type.Array(Type.String())),
        }),
        ...errorResponses(400, 401, 422),
      },
    },
    handler: async (request, reply) => {
      const { principal } = request;
      const send = parseSendRequest(request.body ?? {});
      // MMS media are fetched while the request is answered, through the guard too.
      await refuseOutboundUrls(outbound, { url: send.url });
      const uuids = await messages.accept(
        {
          account: principal.tenant,
          subaccount: principal.isMain ? null : principal.authId,
          authId: principal.authId,
          requesterIp: request.ip,
        },
        send,
      );
      reply.code(202);
      return {
        api_id: request.id,
        message: 'message(s) queued',
        message_uuid: uuids,
        ...(send.invalid.length > 0 ? { invalid_number: send.invalid } : {}),
      };
    },
  });

  app.get('/v1/Account/:auth_id/Message/', {
    schema: {
      tags: ['Message'],
      summary: 'List messages',
      params: AuthIdParams,
      querystring: ListMessagesQuery,
      response: { 200: ListBody(Message), ...errorResponses(400, 401) },
    },
    handler: async (request) => {
      const { principal } = request;
      const q = request.query as Record<string, string | number | undefined>;
      const limit = Number(q.limit);
      const offset = Number(q.offset);
      const window = messageWindow(q, clock.now());
      const filter = messageFilter(q);
      const found = await state.messages.page(principal.tenant, {
        index: listIndex(principal, q.subaccount as string | undefined),
        scoreMin: window.min,
        scoreMax: window.max,
        offset: filter ? 0 : offset,
        limit: filter ? 0 : limit,
      });
      let page = found.items;
      let total = found.total;
      if (filter) {
        // The window is at most 30 days; only it is read, then filtered here.
        const matches = found.items.filter(filter);
        total = matches.length;
        page = matches.slice(offset, offset + limit);
      }
      return uris.list(
        request,
        { limit, offset, total },
        page.map((m) => present(principal, m)),
      );
    },
  });

  app.get('/v1/Account/:auth_id/Message/:message_uuid/', {
    schema: {
      tags: ['Message'],
      summary: 'Retrieve a message',
      params: MessageParams,
      response: { 200: WithApiId(Message), ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const found = await findVisible(
        state.messages,
        request.principal,
        request.params.message_uuid,
        'message',
      );
      return { api_id: request.id, ...present(request.principal, found) };
    },
  });

  const MediaItem = Type.Object({
    media_id: Type.String(),
    message_uuid: Type.String(),
    content_type: Type.String(),
    size: Type.Number(),
    file_name: Type.String(),
    media_url: Type.String(),
    date_created: Type.String(),
  });

  app.get('/v1/Account/:auth_id/Message/:message_uuid/Media/', {
    schema: {
      tags: ['Message'],
      summary: 'List the media of a message',
      params: MessageParams,
      response: {
        200: Type.Object({ api_id: Type.String(), objects: Type.Array(MediaItem) }),
        ...errorResponses(401, 404),
      },
    },
    handler: async (request) => {
      const { principal } = request;
      const message = await findVisible(
        state.messages,
        principal,
        request.params.message_uuid,
        'message',
      );
      const media = await state.media.all(message.account, `msg:${message.message_uuid}`);
      return {
        api_id: request.id,
        objects: media
          .sort((a, b) => a.index - b.index)
          .map((m) => ({
            media_id: m.media_id,
            message_uuid: m.message_uuid,
            content_type: m.content_type,
            size: m.size,
            file_name: m.file_name,
            media_url: uris.account(
              principal.authId,
              'Message',
              m.message_uuid,
              'Media',
              m.media_id,
            ),
            date_created: recordTime(m.created)!,
          })),
      };
    },
  });

  app.get('/v1/Account/:auth_id/Message/:message_uuid/Media/:media_id/', {
    schema: {
      tags: ['Message'],
      summary: 'Download one media file of a message',
      params: Type.Object({
        auth_id: Type.String(),
        message_uuid: Type.String(),
        media_id: Type.String(),
      }),
      response: { ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const { principal, params } = request;
      const message = await findVisible(state.messages, principal, params.message_uuid, 'message');
      const media = await state.media.get(message.account, params.media_id);
      if (!media || media.message_uuid !== message.message_uuid)
        throw notFound(`media ${params.media_id}`);
      const body = await mediaStore.get(media.file_id);
      if (!body) throw notFound(`media ${params.media_id}`);
      return reply.type(media.content_type).send(body as never);
    },
  });
}

/**
 * The message_time window a list reads (inclusive ms), as timeWindow() gives it: an exact
 * message_time is that second, a bound is the instant it names.
 */
export function messageWindow(
  q: Record<string, unknown>,
  now: number,
): { min: number; max: number | undefined } {
  return timeWindow(q, 'message_time', now, (value, comparison, filter) => {
    const start = parseFilterTime(value);
    if (start === null)
      throw invalidParameter(`invalid ${filter}: use the format yyyy-MM-dd HH:mm[:ss[.ffffff]]`);
    return spanBound(start, comparison === '' ? 1000 : 1, comparison);
  });
}

function messageFilter(q: Record<string, unknown>): ((m: MessageRecord) => boolean) | null {
  const checks: ((m: MessageRecord) => boolean)[] = [];
  for (const name of EXACT_FILTERS) {
    const raw = q[name];
    if (raw === undefined || raw === '') continue;
    let value = String(raw);
    const allowed = ALLOWED[name];
    if (allowed && !allowed.includes(value))
      throw invalidParameter(`invalid ${name}: must be one of ${allowed.join(', ')}`);
    if (name === 'message_type' && value === 'whatsapp') value = 'chatapp';
    if (name === 'error_code' && !/^\d+$/.test(value))
      throw invalidParameter('invalid error_code: must be an integer');
    if (name === 'from_number' || name === 'to_number') value = value.replace(/^\+/, '');
    const field = name as keyof MessageRecord;
    checks.push((m) =>
      name === 'error_code'
        ? m.error_code !== null && Number(m.error_code) === Number(value)
        : String(m[field] ?? '') === value,
    );
  }
  return checks.length === 0 ? null : (m) => checks.every((check) => check(m));
}
