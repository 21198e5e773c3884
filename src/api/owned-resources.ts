import { notFound } from '../core/errors.js';
import { subaccountIndex, type Collection, type Owned } from '../state/collection.js';
import type { Page } from '../state/document-store.js';
import type { Principal } from './auth.js';

/** A main account sees its tenant's resources; a subaccount sees only those assigned to it. */
export function visibleTo(doc: Owned | null, principal: Principal): boolean {
  if (!doc || doc.account !== principal.tenant) return false;
  return principal.isMain || doc.subaccount === principal.authId;
}

/** The resource with that id if the principal may see it; 404 otherwise, whoever owns it. */
export async function findVisible<T extends Owned>(
  collection: Collection<T>,
  principal: Principal,
  id: string,
  what: string,
): Promise<T> {
  const found = await collection.get(principal.tenant, id);
  if (!found || !visibleTo(found, principal)) throw notFound(`${what} ${id}`);
  return found;
}

/**
 * The index a principal lists from: a subaccount its own; a main account the whole tenant, or
 * one subaccount's when it asks for that.
 */
export function listIndex(principal: Principal, subaccount?: string): string | undefined {
  if (!principal.isMain) return subaccountIndex(principal.authId);
  return subaccount ? subaccountIndex(subaccount) : undefined;
}

/**
 * One page of what the principal can see, newest first. Without a filter the sorted index gives
 * the page directly; a filter no index answers reads the principal's whole scope first.
 */
export async function listVisible<T extends Owned>(
  collection: Collection<T>,
  principal: Principal,
  query: { limit: number; offset: number; subaccount?: string },
  filter?: (doc: T) => boolean,
): Promise<Page<T>> {
  const index = listIndex(principal, query.subaccount);
  const { limit, offset } = query;
  if (!filter) return collection.page(principal.tenant, { index, offset, limit });
  const matches = (await collection.all(principal.tenant, index)).filter(filter);
  return { items: matches.slice(offset, offset + limit), total: matches.length };
}

/** The owner fields of a resource the principal creates now: its tenant, and its own id when it is a subaccount. */
export function ownedBy(principal: Principal, now: number): Owned {
  return {
    account: principal.tenant,
    subaccount: principal.isMain ? null : principal.authId,
    created: now,
  };
}
