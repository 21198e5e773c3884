import { Type, type Static } from 'typebox';
import { conflict, invalidParameter, notFound } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import { countryOf, normaliseE164 } from '../../core/phone-number.js';
import { formatTime } from '../../core/record-time.js';
import type { PowerpackRecord } from '../../state/records.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import type { Principal } from '../auth.js';
import { findVisible, listIndex, ownedBy, visibleTo } from '../owned-resources.js';
import { resolveApplication } from '../ownership.js';
import { resourceRoutes } from '../resource-routes.js';
import { errorResponses, ListBody, ListQuery, Nullable, WithApiId } from '../schemas.js';

const Name = Type.String({ minLength: 1, maxLength: 100, description: '1 to 100 characters' });

const Powerpack = Type.Object({
  uuid: Type.String(),
  name: Type.String(),
  sticky_sender: Type.Boolean(),
  local_connect: Type.Boolean(),
  application_id: Nullable(Type.String()),
  application_type: Type.String(),
  number_pool: Type.String(),
  created_on: Type.String(),
  resource_uri: Type.String(),
});

const CreateBody = Type.Object(
  {
    name: Name,
    sticky_sender: Type.Optional(Type.Boolean()),
    local_connect: Type.Optional(Type.Boolean()),
    application_id: Type.Optional(Type.String()),
  },
  { required: ['name'] },
);

const UpdateBody = Type.Object({
  name: Type.Optional(Name),
  sticky_sender: Type.Optional(Type.Boolean()),
  local_connect: Type.Optional(Type.Boolean()),
  application_id: Type.Optional(Type.String({ description: 'an application id, or empty' })),
});

const PoolNumber = Type.Object({
  number: Type.String(),
  country_iso2: Type.String(),
  type: Type.String(),
  account_phone_number_resource: Type.String(),
  added_on: Type.String(),
});

const PoolParams = Type.Object({ auth_id: Type.String(), id: Type.String() });
const PoolNumberParams = Type.Object({
  auth_id: Type.String(),
  id: Type.String(),
  number: Type.String(),
});

/** Powerpacks: pools of sender numbers that `POST Message/` picks from (`powerpack_uuid`). */
export function powerpackRoutes(app: TypedApp, context: ApiContext): void {
  const { state, uris, clock } = context;

  /** A powerpack's name is unique in its tenant. */
  const checkName = async (principal: Principal, name: string, except?: string) => {
    const all = await state.powerpacks.all(principal.tenant);
    if (all.some((p) => p.name === name && p.uuid !== except))
      throw conflict(`a powerpack named ${name} already exists`);
  };
  const appId = async (principal: Principal, id: string | undefined, fallback: string | null) => {
    if (id === undefined) return fallback;
    if (id === '') return null;
    return (await resolveApplication(state, principal, id)).app_id;
  };

  resourceRoutes(app, context, {
    path: 'Powerpack',
    tag: 'Powerpack',
    what: 'powerpack',
    collection: state.powerpacks,
    view: Powerpack,
    createBody: CreateBody,
    updateBody: UpdateBody,
    present: (principal, p): Static<typeof Powerpack> => ({
      uuid: p.uuid,
      name: p.name,
      sticky_sender: p.sticky_sender,
      local_connect: p.local_connect,
      application_id: p.application_id,
      application_type: 'XML',
      number_pool: uris.account(principal.authId, 'Powerpack', p.uuid, 'Number'),
      created_on: formatTime(p.created)!,
      resource_uri: uris.account(principal.authId, 'Powerpack', p.uuid),
    }),
    create: async (principal, body) => {
      await checkName(principal, body.name);
      const now = clock.now();
      return {
        ...ownedBy(principal, now),
        modified: now,
        uuid: newUuid(),
        name: body.name,
        numbers: [],
        sticky_sender: body.sticky_sender ?? true,
        local_connect: body.local_connect ?? true,
        application_id: await appId(principal, body.application_id, null),
      };
    },
    created: (p) => ({ message: 'created', uuid: p.uuid, name: p.name }),
    update: async (principal, current, body) => {
      if (body.name !== undefined) await checkName(principal, body.name, current.uuid);
      return {
        ...current,
        name: body.name ?? current.name,
        sticky_sender: body.sticky_sender ?? current.sticky_sender,
        local_connect: body.local_connect ?? current.local_connect,
        application_id: await appId(principal, body.application_id, current.application_id),
        modified: clock.now(),
      };
    },
    updated: () => ({ message: 'changed' }),
  });

  const findPool = (principal: Principal, id: string) =>
    findVisible(state.powerpacks, principal, id, 'powerpack');
  const poolNumber = (principal: Principal, p: PowerpackRecord, number: string) => ({
    number,
    country_iso2: countryOf(number),
    type: 'local',
    account_phone_number_resource: uris.account(principal.authId, 'Number', number),
    added_on: formatTime(p.modified)!,
  });
  const tags = ['Powerpack'];
  const pool = '/v1/Account/:auth_id/Powerpack/:id/Number/';

  app.get(pool, {
    schema: {
      tags,
      summary: "List a powerpack's numbers",
      params: PoolParams,
      querystring: ListQuery,
      response: { 200: ListBody(PoolNumber), ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const p = await findPool(request.principal, request.params.id);
      const { limit, offset } = request.query;
      return uris.list(
        request,
        { limit, offset, total: p.numbers.length },
        p.numbers.slice(offset, offset + limit).map((n) => poolNumber(request.principal, p, n)),
      );
    },
  });

  app.get(`${pool}:number/`, {
    schema: {
      tags,
      summary: 'Retrieve a number in a powerpack',
      params: PoolNumberParams,
      response: { 200: WithApiId(PoolNumber), ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const p = await findPool(request.principal, request.params.id);
      const number = normaliseE164(request.params.number) ?? request.params.number;
      if (!p.numbers.includes(number)) throw notFound(`number ${number} in powerpack ${p.uuid}`);
      return { api_id: request.id, ...poolNumber(request.principal, p, number) };
    },
  });

  app.post(`${pool}:number/`, {
    schema: {
      tags,
      summary: 'Add a number to a powerpack',
      params: PoolNumberParams,
      response: { 200: WithApiId(PoolNumber), ...errorResponses(400, 401, 404, 409) },
    },
    handler: async (request) => {
      const { principal } = request;
      const p = await findPool(principal, request.params.id);
      const number = normaliseE164(request.params.number);
      const held = number ? await state.numbers.get(principal.tenant, number) : null;
      if (!number || !held || !visibleTo(held, principal))
        throw invalidParameter(`number ${request.params.number} is not a number of this account`);
      if (!p.numbers.includes(number)) {
        const others = await state.powerpacks.all(principal.tenant, listIndex(principal));
        const owner = others.find((o) => o.uuid !== p.uuid && o.numbers.includes(number));
        if (owner) throw conflict(`number ${number} is already in powerpack ${owner.uuid}`);
        await state.powerpacks.update(
          { ...p, numbers: [...p.numbers, number], modified: clock.now() },
          p,
        );
      }
      return { api_id: request.id, ...poolNumber(principal, p, number) };
    },
  });

  app.delete(`${pool}:number/`, {
    schema: {
      tags,
      summary: 'Remove a number from a powerpack',
      params: PoolNumberParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      const p = await findPool(request.principal, request.params.id);
      const number = normaliseE164(request.params.number) ?? request.params.number;
      if (!p.numbers.includes(number)) throw notFound(`number ${number} in powerpack ${p.uuid}`);
      await state.powerpacks.update(
        { ...p, numbers: p.numbers.filter((n) => n !== number), modified: clock.now() },
        p,
      );
      return reply.code(204).send(null);
    },
  });
}
