import { Type, type Static, type TSchema } from 'typebox';
import type { Collection, Owned } from '../state/collection.js';
import type { ApiContext, TypedApp } from './api-context.js';
import { audit, fieldsOf } from './audit.js';
import type { Principal } from './auth.js';
import { refuseOutboundUrls, urlFieldsOf } from './outbound-urls.js';
import { findVisible, listVisible } from './owned-resources.js';
import { errorResponses, ListBody, ListQuery, MessageBody, WithApiId } from './schemas.js';

/**
 * What one REST resource owned by accounts declares; resourceRoutes() gives it create, list,
 * get, update and delete under `/v1/Account/{auth_id}/{path}/`, with their schemas for /docs.
 */
export interface ResourceSpec<
  T extends Owned,
  V extends TSchema,
  C extends TSchema,
  U extends TSchema,
> {
  /** `Powerpack`, `SipTrunk/URI`... */
  path: string;
  tag: string;
  /** The name the answers and 404s give it: `powerpack`. */
  what: string;
  collection: Collection<T>;
  view: V;
  createBody: C;
  updateBody: U;
  present(principal: Principal, record: T): Static<V>;
  /** Checks the body and builds the record to store; throws an ApiError naming the field. */
  create(principal: Principal, body: Static<C>): Promise<T>;
  /** The 201 answer beside api_id, and its schema (any object when not given). */
  created(record: T): Record<string, unknown>;
  createdAnswer?: TSchema;
  update(principal: Principal, current: T, body: Static<U>): Promise<T>;
  /** The 200 answer to an update beside api_id, and its schema (`message` when not given). */
  updated(record: T): Record<string, unknown>;
  updatedAnswer?: TSchema;
  /** May refuse a delete (409 naming what holds the record). */
  beforeDelete?(record: T): Promise<void>;
  /** What a write or a delete changes elsewhere (other records that pointed at this one). */
  afterWrite?(record: T): Promise<void>;
  afterDelete?(record: T): Promise<void>;
  /**
   * For resources that hold credentials: an audit line for each create, update and delete
   * (`{kind}.create`...), marked `credential` when one of the fields named was written (or,
   * on a delete, held).
   */
  audit?: { kind: string; id(record: T): string; credentials: readonly string[] };
  /**
   * Body fields holding URLs the gateway will fetch (callbacks, answer XML): checked against
   * the outbound policy once the body is valid, before the record is written.
   */
  outboundUrls?: readonly string[];
  /** List filters besides limit and offset: their schema, and the filter a query makes. */
  listFilters?: {
    query: TSchema;
    filter(query: Record<string, string | undefined>): {
      subaccount?: string;
      match?: (record: T) => boolean;
    };
  };
}

export function resourceRoutes<
  T extends Owned,
  V extends TSchema,
  C extends TSchema,
  U extends TSchema,
>(app: TypedApp, { uris, outbound }: ApiContext, spec: ResourceSpec<T, V, C, U>): void {
  const base = `/v1/Account/:auth_id/${spec.path}/`;
  const IdParams = Type.Object({ auth_id: Type.String(), id: Type.String() });
  const AuthIdParams = Type.Object({ auth_id: Type.String() });
  const tags = [spec.tag];
  const summary = summaries(spec.what);
  const find = (principal: Principal, id: string) =>
    findVisible(spec.collection, principal, id, spec.what);
  const auditWrite = (
    request: { log: TypedApp['log']; principal: Principal },
    verb: 'create' | 'update' | 'delete',
    record: T,
    fields: string[],
  ) => {
    if (!spec.audit) return;
    const { kind, id, credentials } = spec.audit;
    audit(request.log, {
      actor: request.principal.authId,
      action: `${kind}.${verb}`,
      target: id(record),
      ...(verb === 'update' ? { changed: fields } : {}),
      ...(fields.some((f) => credentials.includes(f)) ? { credential: true } : {}),
    });
  };
  const checkUrls = (body: unknown) =>
    spec.outboundUrls
      ? refuseOutboundUrls(outbound, urlFieldsOf(body, spec.outboundUrls))
      : Promise.resolve();

  app.post(base, {
    schema: {
      tags,
      summary: summary.create,
      params: AuthIdParams,
      body: spec.createBody,
      response: {
        201: spec.createdAnswer ?? Type.Record(Type.String(), Type.Unknown()),
        ...errorResponses(400, 401, 409, 422),
      },
    },
    handler: async (request, reply) => {
      const record = await spec.create(request.principal, request.body as Static<C>);
      await checkUrls(request.body);
      await spec.collection.create(record);
      auditWrite(request, 'create', record, fieldsOf(request.body, spec.createBody));
      await spec.afterWrite?.(record);
      reply.code(201);
      return { api_id: request.id, ...spec.created(record) };
    },
  });

  app.get(base, {
    schema: {
      tags,
      summary: summary.list,
      params: AuthIdParams,
      querystring: spec.listFilters
        ? Type.Intersect([ListQuery, spec.listFilters.query])
        : ListQuery,
      response: { 200: ListBody(spec.view), ...errorResponses(400, 401) },
    },
    handler: async (request) => {
      const { principal } = request;
      const { limit, offset } = request.query;
      const { subaccount, match } =
        spec.listFilters?.filter(request.query as unknown as Record<string, string | undefined>) ??
        {};
      const page = await listVisible(
        spec.collection,
        principal,
        { limit, offset, ...(subaccount === undefined ? {} : { subaccount }) },
        match,
      );
      // The view schema is the resource's own: TypeScript cannot follow it through the generic.
      return uris.list(
        request,
        { limit, offset, total: page.total },
        page.items.map((r) => spec.present(principal, r)),
      ) as never;
    },
  });

  app.get(`${base}:id/`, {
    schema: {
      tags,
      summary: summary.get,
      params: IdParams,
      response: { 200: WithApiId(spec.view) as TSchema, ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const found = await find(request.principal, request.params.id);
      return { api_id: request.id, ...(spec.present(request.principal, found) as object) } as never;
    },
  });

  app.post(`${base}:id/`, {
    schema: {
      tags,
      summary: summary.update,
      params: IdParams,
      body: spec.updateBody,
      response: {
        200: spec.updatedAnswer ?? MessageBody,
        ...errorResponses(400, 401, 404, 409, 422),
      },
    },
    handler: async (request) => {
      const current = await find(request.principal, request.params.id);
      const next = await spec.update(request.principal, current, request.body as Static<U>);
      await checkUrls(request.body);
      await spec.collection.update(next, current);
      auditWrite(request, 'update', next, fieldsOf(request.body, spec.updateBody));
      await spec.afterWrite?.(next);
      return { api_id: request.id, ...spec.updated(next) } as never;
    },
  });

  app.delete(`${base}:id/`, {
    schema: {
      tags,
      summary: summary.remove,
      params: IdParams,
      response: { 204: Type.Null(), ...errorResponses(401, 404, 409) },
    },
    handler: async (request, reply) => {
      const found = await find(request.principal, request.params.id);
      await spec.beforeDelete?.(found);
      await spec.collection.remove(found);
      const held = Object.keys(found).filter((f) => Boolean(found[f as keyof T]));
      auditWrite(request, 'delete', found, held);
      await spec.afterDelete?.(found);
      return reply.code(204).send(null);
    },
  });
}

/** The one-line summaries /docs shows for a resource's five operations. */
function summaries(what: string) {
  const one = `${/^[aeiou]/i.test(what) ? 'an' : 'a'} ${what}`;
  return {
    create: `Create ${one}`,
    list: `List ${what}s`,
    get: `Retrieve ${one}`,
    update: `Update ${one}`,
    remove: `Delete ${one}`,
  };
}
