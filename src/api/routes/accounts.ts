import { Type } from 'typebox';
import { ApiError, notFound } from '../../core/errors.js';
import { newAuthId, newAuthToken } from '../../core/ids.js';
import type { AccountRecord } from '../../state/records.js';
import { subaccountIndex } from '../../state/collection.js';
import { SUBACCOUNTS_INDEX } from '../../state/state.js';
import type { ApiContext, TypedApp } from '../api-context.js';
import { audit, fieldsOf } from '../audit.js';
import type { Principal } from '../auth.js';
import { formatTime } from '../../core/record-time.js';
import {
  AuthIdParams,
  errorResponses,
  ListBody,
  ListQuery,
  MessageBody,
  Nullable,
  WithApiId,
} from '../schemas.js';
import { reassignSubaccountResources } from './subaccount-cascade.js';

const Name = Type.String({ minLength: 1, maxLength: 100, description: '1 to 100 characters' });
const Enabled = Type.Boolean({ description: 'true or false' });
const AccountUpdate = Type.Object({ name: Type.Optional(Name) });
const SubaccountUpdate = Type.Object({
  name: Type.Optional(Name),
  enabled: Type.Optional(Enabled),
});

const AccountBody = Type.Object({
  api_id: Type.String(),
  account_type: Type.String(),
  auth_id: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  created: Type.String(),
  modified: Nullable(Type.String()),
  resource_uri: Type.String(),
});

const Subaccount = Type.Object({
  account: Type.String(),
  auth_id: Type.String(),
  auth_token: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  created: Type.String(),
  modified: Nullable(Type.String()),
  resource_uri: Type.String(),
});

const SubaccountParams = Type.Object({ auth_id: Type.String(), subauth_id: Type.String() });

function requireMain(principal: Principal): void {
  if (!principal.isMain) {
    throw new ApiError('unauthorized', 'only the main account can manage subaccounts');
  }
}

export function accountRoutes(
  app: TypedApp,
  { state, uris, clock, authenticator }: ApiContext,
): void {
  const present = (a: AccountRecord) => ({
    account: uris.account(a.account),
    auth_id: a.auth_id,
    auth_token: a.auth_token,
    name: a.name,
    enabled: a.enabled,
    created: formatTime(a.created)!,
    modified: a.modified === a.created ? null : formatTime(a.modified),
    resource_uri: uris.account(a.account, 'Subaccount', a.auth_id),
  });

  const findSubaccount = async (principal: Principal, id: string): Promise<AccountRecord> => {
    const sub = await state.accounts.get(principal.tenant, id);
    if (!sub || sub.subaccount === null) throw notFound(`subaccount ${id}`);
    return sub;
  };

  app.get('/v1/Account/:auth_id/', {
    schema: {
      tags: ['Account'],
      summary: 'Retrieve the account',
      params: AuthIdParams,
      response: { 200: AccountBody, ...errorResponses(401) },
    },
    handler: async (request) => {
      const a = request.principal.account;
      return {
        api_id: request.id,
        account_type: request.principal.isMain ? 'standard' : 'subaccount',
        auth_id: a.auth_id,
        name: a.name,
        enabled: a.enabled,
        created: formatTime(a.created)!,
        modified: a.modified === a.created ? null : formatTime(a.modified),
        resource_uri: uris.account(a.auth_id),
      };
    },
  });

  app.post('/v1/Account/:auth_id/', {
    schema: {
      tags: ['Account'],
      summary: 'Update the account',
      params: AuthIdParams,
      body: AccountUpdate,
      response: { 200: MessageBody, ...errorResponses(400, 401) },
    },
    handler: async (request) => {
      const current = await state.accounts.get(request.principal.tenant, request.principal.authId);
      if (!current) throw notFound(`account ${request.principal.authId}`);
      if (request.body.name !== undefined) {
        await state.accounts.update(
          { ...current, name: request.body.name, modified: clock.now() },
          current,
        );
        authenticator.forget(current.auth_id);
        audit(request.log, {
          actor: request.principal.authId,
          action: 'account.update',
          target: current.auth_id,
          changed: fieldsOf(request.body, AccountUpdate),
        });
      }
      return { api_id: request.id, message: 'changed' };
    },
  });

  app.post('/v1/Account/:auth_id/Subaccount/', {
    schema: {
      tags: ['Subaccount'],
      summary: 'Create a subaccount',
      params: AuthIdParams,
      body: Type.Object({ name: Name, enabled: Type.Optional(Enabled) }, { required: ['name'] }),
      response: {
        201: Type.Object({
          api_id: Type.String(),
          auth_id: Type.String(),
          auth_token: Type.String(),
          message: Type.String(),
        }),
        ...errorResponses(400, 401, 422),
      },
    },
    handler: async (request, reply) => {
      requireMain(request.principal);
      const now = clock.now();
      const record: AccountRecord = {
        account: request.principal.tenant,
        subaccount: null,
        created: now,
        modified: now,
        auth_id: newAuthId('SA'),
        auth_token: newAuthToken(),
        name: request.body.name,
        enabled: request.body.enabled ?? true,
      };
      // A subaccount belongs to itself, so it lands in its own `sub:` index and sees itself.
      record.subaccount = record.auth_id;
      await state.accounts.create(record);
      audit(request.log, {
        actor: request.principal.authId,
        action: 'subaccount.create',
        target: record.auth_id,
        credential: true,
        detail: { enabled: record.enabled },
      });
      reply.code(201);
      return {
        api_id: request.id,
        auth_id: record.auth_id,
        auth_token: record.auth_token,
        message: 'created',
      };
    },
  });

  app.get('/v1/Account/:auth_id/Subaccount/', {
    schema: {
      tags: ['Subaccount'],
      summary: 'List subaccounts',
      params: AuthIdParams,
      querystring: ListQuery,
      response: { 200: ListBody(Subaccount), ...errorResponses(400, 401) },
    },
    handler: async (request) => {
      requireMain(request.principal);
      const { limit, offset } = request.query;
      const page = await state.accounts.page(request.principal.tenant, {
        index: SUBACCOUNTS_INDEX,
        offset,
        limit,
      });
      return uris.list(request, { limit, offset, total: page.total }, page.items.map(present));
    },
  });

  app.get('/v1/Account/:auth_id/Subaccount/:subauth_id/', {
    schema: {
      tags: ['Subaccount'],
      summary: 'Retrieve a subaccount',
      params: SubaccountParams,
      response: {
        200: WithApiId(Subaccount),
        ...errorResponses(401, 404),
      },
    },
    handler: async (request) => {
      requireMain(request.principal);
      const sub = await findSubaccount(request.principal, request.params.subauth_id);
      return { api_id: request.id, ...present(sub) };
    },
  });

  app.post('/v1/Account/:auth_id/Subaccount/:subauth_id/', {
    schema: {
      tags: ['Subaccount'],
      summary: 'Update a subaccount',
      params: SubaccountParams,
      body: SubaccountUpdate,
      response: { 200: MessageBody, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      requireMain(request.principal);
      const sub = await findSubaccount(request.principal, request.params.subauth_id);
      const next = {
        ...sub,
        name: request.body.name ?? sub.name,
        enabled: request.body.enabled ?? sub.enabled,
        modified: clock.now(),
      };
      await state.accounts.update(next, sub);
      authenticator.forget(sub.auth_id);
      audit(request.log, {
        actor: request.principal.authId,
        action: 'subaccount.update',
        target: sub.auth_id,
        changed: fieldsOf(request.body, SubaccountUpdate),
        detail: { enabled: next.enabled },
      });
      return { api_id: request.id, message: 'changed' };
    },
  });

  app.delete('/v1/Account/:auth_id/Subaccount/:subauth_id/', {
    schema: {
      tags: ['Subaccount'],
      summary: 'Delete a subaccount',
      params: SubaccountParams,
      querystring: Type.Object({
        cascade: Type.Optional(Type.Boolean({ description: 'true or false' })),
      }),
      response: { 204: Type.Null(), ...errorResponses(401, 404) },
    },
    handler: async (request, reply) => {
      requireMain(request.principal);
      const sub = await findSubaccount(request.principal, request.params.subauth_id);
      // Its credentials stop working first, then its resources move to the main account
      // (or, with cascade=true, are deleted with it).
      await state.accounts.remove(sub);
      authenticator.forget(sub.auth_id);
      audit(request.log, {
        actor: request.principal.authId,
        action: 'subaccount.delete',
        target: sub.auth_id,
        credential: true,
        detail: { cascade: request.query.cascade === true },
      });
      await reassignSubaccountResources(
        state,
        sub.account,
        subaccountIndex(sub.auth_id),
        request.query.cascade === true,
      );
      return reply.code(204).send(null);
    },
  });
}
