import { Type } from 'typebox';
import { notFound } from '../../core/errors.js';
import { LIMIT_NAMES, type AccountLimiter } from '../../limits/account-limiter.js';
import type { AccountLimits } from '../../state/records.js';
import type { State } from '../../state/state.js';
import type { TypedApp } from '../api-context.js';
import { audit } from '../audit.js';
import { errorResponses } from '../schemas.js';

/** A limit: at least 1; 0 or null clears it (the account has none of its own). */
const Limit = Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000 }), Type.Null()]);
const Limits = Type.Object({
  calls: Limit,
  calls_per_second: Limit,
  streams: Limit,
  messages_per_second: Limit,
});
const LimitsBody = Type.Object({
  /** The account (main or subaccount). */
  account: Type.String(),
  /** What applies now: its own settings, else (main account) the configuration's. */
  limits: Limits,
  /** What the operator set for it (null: nothing of its own). */
  set: Limits,
});

export interface AccountLimitContext {
  state: State;
  limits: AccountLimiter;
  tenant: string;
}

/**
 * The operator's view of the account limits (`/operator/v1/Account/{auth_id}/Limits/`): read
 * them, and set or clear (null) any of them for the main account or a subaccount. A change is
 * seen by this node at once and by the others within a second.
 */
export function accountLimitRoutes(scope: TypedApp, context: AccountLimitContext): void {
  const tags = ['Operator'];
  const params = Type.Object({ auth_id: Type.String() });
  const view = async (authId: string) => {
    const record = await context.state.accounts.get(context.tenant, authId);
    if (!record) throw notFound(`account ${authId}`);
    const set = Object.fromEntries(
      LIMIT_NAMES.map((name) => [name, record.limits?.[name] ?? null]),
    ) as unknown as AccountLimits;
    return {
      record,
      body: {
        account: authId,
        limits: await context.limits.limitsOf(context.tenant, authId),
        set,
      },
    };
  };

  scope.get('/operator/v1/Account/:auth_id/Limits/', {
    schema: {
      tags,
      summary: "Read an account's limits (operator)",
      params,
      response: { 200: LimitsBody, ...errorResponses(401, 404) },
    },
    handler: async (request) => {
      const { auth_id } = request.params as { auth_id: string };
      return (await view(auth_id)).body;
    },
  });

  scope.post('/operator/v1/Account/:auth_id/Limits/', {
    schema: {
      tags,
      summary: "Set or clear an account's limits (operator)",
      params,
      body: Type.Partial(Limits, { additionalProperties: false }),
      response: { 200: LimitsBody, ...errorResponses(400, 401, 404) },
    },
    handler: async (request) => {
      const { auth_id } = request.params as { auth_id: string };
      const changes = request.body as Partial<AccountLimits>;
      const { record } = await view(auth_id);
      const limits: Partial<AccountLimits> = { ...record.limits };
      for (const name of LIMIT_NAMES) {
        if (!(name in changes)) continue;
        const value = changes[name];
        if (!value) delete limits[name];
        else limits[name] = value;
      }
      await context.state.accounts.update({ ...record, limits, modified: Date.now() }, record);
      context.limits.forget(auth_id);
      audit(request.log, {
        actor: 'operator',
        action: 'account.limits.update',
        target: auth_id,
        changed: Object.keys(changes),
        detail: changes,
      });
      return (await view(auth_id)).body;
    },
  });
}
