import type { InboundCarrierMode } from '../call/incoming-carriers.js';
import { invalidParameter } from '../core/errors.js';
import type { ApplicationRecord, TrunkRecord } from '../state/records.js';
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

/**
 * The trunk a number's calls go to: one of the principal's inbound trunks, owned by the same
 * account as the number (a subaccount's number by that subaccount's trunk, a main account's by
 * the main account's), so a trunk never carries calls of an account that cannot see it.
 */
export async function resolveTrunk(
  state: State,
  principal: Principal,
  trunkId: string,
  numberOwner: string | null,
): Promise<TrunkRecord> {
  const trunk = await state.trunks.get(principal.tenant, trunkId);
  if (!trunk || !visibleTo(trunk, principal)) {
    throw invalidParameter(`invalid trunk_id: no inbound trunk ${trunkId} in this account`);
  }
  if (trunk.subaccount !== numberOwner) {
    throw invalidParameter(
      `invalid trunk_id: trunk ${trunkId} belongs to ${trunk.subaccount ?? 'the main account'}, the number to ${numberOwner ?? 'the main account'}`,
    );
  }
  return trunk;
}

/**
 * A number's `carrier`: with VOXGATE_INBOUND_CARRIERS=enforce the carrier_id of an
 * IncomingCarrier the principal sees (its own or its main account's), whose IP set its calls
 * must come from; with `open`, any label.
 */
export async function resolveNumberCarrier(
  state: State,
  principal: Principal,
  carrier: string,
  mode: InboundCarrierMode,
): Promise<string> {
  if (mode === 'open') return carrier;
  const found = await state.incomingCarriers.get(principal.tenant, carrier);
  if (!found || !(found.subaccount === null || visibleTo(found, principal))) {
    throw invalidParameter(
      `invalid carrier: ${carrier} is not the carrier_id of an IncomingCarrier of this account; create one with POST IncomingCarrier/ (name and the ip_set its calls come from)`,
    );
  }
  return found.carrier_id;
}
