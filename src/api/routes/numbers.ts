import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { Type, type Static } from 'typebox';
import { UniqueViolation, conflict, invalidParameter } from '../../core/errors.js';
import { normaliseE164 } from '../../core/phone-number.js';
import type { NumberRecord } from '../../state/records.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { findVisible, listVisible } from '../owned-resources.js';
import {
  resolveApplication,
  resolveNumberCarrier,
  resolveSubaccount,
  resolveTrunk,
} from '../ownership.js';
import {
  AuthIdParams,
  errorResponses,
  ListBody,
  ListQuery,
  MessageBody,
  Nullable,
  WithApiId,
} from '../schemas.js';

const NUMBER_TYPES = ['local', 'national', 'mobile', 'tollfree', 'fixed'] as const;
const NumberType = Type.Union(
  NUMBER_TYPES.map((t) => Type.Literal(t)),
  { description: `one of ${NUMBER_TYPES.join(', ')}` },
);
const Label = (what: string) =>
  Type.String({ minLength: 1, maxLength: 100, description: `${what} of 1 to 100 characters` });
const Alias = Type.String({ maxLength: 100, description: 'at most 100 characters' });

const TrunkId = Type.String({
  maxLength: 64,
  description:
    'an inbound trunk id: calls to the number go to the trunk instead of the application; empty to detach',
});

const AddBody = Type.Object(
  {
    numbers: Type.String({ minLength: 1, description: 'comma-separated E.164 numbers' }),
    carrier: Label(
      "the carrier_id of the IncomingCarrier the number's calls come from (any label with VOXGATE_INBOUND_CARRIERS=open)",
    ),
    region: Label('a region'),
    number_type: Type.Optional(NumberType),
    app_id: Type.Optional(Type.String()),
    trunk_id: Type.Optional(TrunkId),
    subaccount: Type.Optional(Type.String()),
  },
  { required: ['numbers', 'carrier', 'region'] },
);

const UpdateBody = Type.Object({
  app_id: Type.Optional(Type.String({ description: 'an application id, or empty to detach' })),
  trunk_id: Type.Optional(TrunkId),
  alias: Type.Optional(Alias),
  subaccount: Type.Optional(Type.String()),
  carrier: Type.Optional(
    Label("the carrier_id of the IncomingCarrier the number's calls come from"),
  ),
});

const PhoneNumber = Type.Object({
  number: Type.String(),
  alias: Nullable(Type.String()),
  application: Nullable(Type.String()),
  app_id: Nullable(Type.String()),
  trunk_id: Nullable(Type.String()),
  carrier: Type.String(),
  region: Type.String(),
  country: Nullable(Type.String()),
  number_type: Type.String(),
  sub_account: Nullable(Type.String()),
  added_on: Type.String(),
  voice_enabled: Type.Boolean(),
  sms_enabled: Type.Boolean(),
  mms_enabled: Type.Boolean(),
  resource_uri: Type.String(),
});

const NumberParams = Type.Object({ auth_id: Type.String(), number: Type.String() });

export function numberRoutes(
  app: TypedApp,
  { state, uris, clock, inboundCarriers }: ApiContext,
): void {
  const present = (principal: Principal, n: NumberRecord): Static<typeof PhoneNumber> => ({
    number: n.number,
    alias: n.alias,
    application: n.app_id ? uris.account(principal.authId, 'Application', n.app_id) : null,
    app_id: n.app_id,
    trunk_id: n.trunk_id ?? null,
    carrier: n.carrier,
    region: n.region,
    country: parsePhoneNumberFromString(`+${n.number}`)?.country ?? null,
    number_type: n.number_type,
    sub_account: n.subaccount,
    added_on: new Date(n.created).toISOString().slice(0, 10),
    voice_enabled: n.voice_enabled,
    sms_enabled: n.sms_enabled,
    mms_enabled: n.mms_enabled,
    resource_uri: uris.account(principal.authId, 'Number', n.number),
  });

  const find = async (principal: Principal, raw: string) => {
    const number = normaliseE164(raw) ?? raw;
    return findVisible(state.numbers, principal, number, 'number');
  };

  app.post('/v1/Account/:auth_id/Number/', {
    schema: {
      tags: ['Number'],
      summary: 'Add numbers from a carrier',
      params: AuthIdParams,
      body: AddBody,
      response: {
        201: Type.Object({
          api_id: Type.String(),
          message: Type.String(),
          numbers: Type.Array(Type.String()),
        }),
        ...errorResponses(400, 401, 409, 422),
      },
    },
    handler: async (request, reply) => {
      const b = request.body;
      const raw = b.numbers
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      const numbers: string[] = [];
      for (const entry of raw) {
        const number = normaliseE164(entry);
        if (!number)
          throw invalidParameter(`invalid numbers: ${entry} is not a valid E.164 number`);
        if (!numbers.includes(number)) numbers.push(number);
      }
      if (numbers.length === 0)
        throw invalidParameter('invalid numbers: must be comma-separated E.164 numbers');
      const subaccount = await resolveSubaccount(state, request.principal, b.subaccount);
      if (b.app_id) await resolveApplication(state, request.principal, b.app_id);
      if (b.trunk_id) await resolveTrunk(state, request.principal, b.trunk_id, subaccount);
      const carrier = await resolveNumberCarrier(
        state,
        request.principal,
        b.carrier,
        inboundCarriers,
      );
      const now = clock.now();
      const added: NumberRecord[] = [];
      try {
        for (const number of numbers) {
          const record: NumberRecord = {
            account: request.principal.tenant,
            subaccount,
            created: now,
            number,
            alias: null,
            app_id: b.app_id || null,
            trunk_id: b.trunk_id || null,
            carrier,
            region: b.region,
            number_type: b.number_type ?? 'local',
            voice_enabled: true,
            sms_enabled: true,
            mms_enabled: true,
          };
          await state.numbers.create(record);
          added.push(record);
        }
      } catch (error) {
        // All or nothing: give back the numbers this request already added.
        for (const record of added) await state.numbers.remove(record);
        if (error instanceof UniqueViolation)
          throw conflict(`number ${error.value} is already in use`);
        throw error;
      }
      reply.code(201);
      return { api_id: request.id, message: 'created', numbers };
    },
  });

  app.get('/v1/Account/:auth_id/Number/', {
    schema: {
      tags: ['Number'],
      summary: 'List numbers',
      params: AuthIdParams,
      querystring: Type.Intersect([
        ListQuery,
        Type.Object({
          number_type: Type.Optional(NumberType),
          number_startswith: Type.Optional(
            Type.String({ pattern: '^\\+?\\d{1,15}$', description: 'up to 15 digits' }),
          ),
          alias: Type.Optional(Type.String()),
          subaccount: Type.Optional(Type.String()),
          app_id: Type.Optional(Type.String()),
        }),
      ]),
      response: { 200: ListBody(PhoneNumber), ...errorResponses(400, 401) },
    },
    handler: async (request) => {
      const { limit, offset, number_type, number_startswith, alias, subaccount, app_id } =
        request.query;
      const principal = request.principal;
      const prefix = number_startswith?.replace(/^\+/, '');
      const matches = (n: NumberRecord) =>
        (!number_type || n.number_type === number_type) &&
        (!prefix || n.number.startsWith(prefix)) &&
        (alias === undefined || n.alias === alias) &&
        (!app_id || n.app_id === app_id);
      const filtered = number_type || prefix || alias !== undefined || app_id;
      const { items, total } = await listVisible(
        state.numbers,
        principal,
        { limit, offset, subaccount },
        filtered ? matches : undefined,
      );
      return uris.list(
        request,
        { limit, offset, total },
        items.map((n) => present(principal, n)),
      );
    },
  });

  app.get('/v1/Account/:auth_id/Number/:number/', {
    schema: {
      tags: ['Number'],
      summary: 'Retrieve a number',
      params: NumberParams,
      response: {
        200: WithApiId(PhoneNumber),
        ...errorResponses(401, 404),
      },
    },
    handler: async (request) => {
      const found = await find(request.principal, request.params.number);
      return { api_id: request.id, ...present(request.principal, found) };
    },
  });

  app.post('/v1/Account/:auth_id/Number/:number/', {
    schema: {
      tags: ['Number'],
      summary: 'Update a number',
      params: NumberParams,
      body: UpdateBody,
      response: { 200: MessageBody, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const current = await find(request.principal, request.params.number);
      const b = request.body;
      let appId = current.app_id;
      if (b.app_id !== undefined)
        appId =
          b.app_id === ''
            ? null
            : (await resolveApplication(state, request.principal, b.app_id)).app_id;
      const subaccount =
        b.subaccount === undefined
          ? current.subaccount
          : await resolveSubaccount(state, request.principal, b.subaccount);
      const trunkId = b.trunk_id === undefined ? (current.trunk_id ?? null) : b.trunk_id || null;
      // The trunk must be the number's owner's, also when the number moves to another owner.
      if (trunkId) await resolveTrunk(state, request.principal, trunkId, subaccount);
      const next: NumberRecord = {
        ...current,
        app_id: appId,
        trunk_id: trunkId,
        alias: b.alias === undefined ? current.alias : b.alias || null,
        subaccount,
        carrier:
          b.carrier === undefined
            ? current.carrier
            : await resolveNumberCarrier(state, request.principal, b.carrier, inboundCarriers),
      };
      await state.numbers.update(next, current);
      return { api_id: request.id, message: 'changed' };
    },
  });

  app.delete('/v1/Account/:auth_id/Number/:number/', {
    schema: {
      tags: ['Number'],
      summary: 'Remove a number',
      params: NumberParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      await state.numbers.remove(await find(request.principal, request.params.number));
      return reply.code(204).send(null);
    },
  });
}
