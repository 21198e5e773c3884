import { invalidParameter } from '../core/errors.js';
import type { ApplicationRecord } from '../state/records.js';
import type { State } from '../state/state.js';
import type { Principal } from './auth.js';
import { visibleTo } from './owned-resources.js';

/**
 * The subaccount a new or moved resource belongs to. A main account may name one of its
 * subaccounts; a subaccount's resources are always its own.
 */
export async function resolveSubaccount(
  state: State,
  principal: Principal,
  requested: string | undefined,
): Promise<string | null> {
  if (!principal.isMain) {
    if (requested !== undefined && requested !== '' && requested !== principal.authId) {
      throw invalidParameter(
        'invalid subaccount: a subaccount can only assign resources to itself',
      );
    }
    return principal.authId;
  }
  if (requested === undefined || requested === '') return null;
  const sub = await state.accounts.get(principal.tenant, requested);
  if (!sub || sub.subaccount === null) {
    throw invalidParameter(`invalid subaccount: ${requested} is not a subaccount of this account`);
  }
  return sub.auth_id;
}

/** The application an `app_id` parameter names; it must be one the caller can see. */
export async function resolveApplication(
  state: State,
  principal: Principal,
  appId: string,
): Promise<ApplicationRecord> {
  const app = await state.applications.get(principal.tenant, appId);
  if (!app || !visibleTo(app, principal)) {
    throw invalidParameter(`invalid app_id: no application ${appId} in this account`);
  }
  return app;
}
