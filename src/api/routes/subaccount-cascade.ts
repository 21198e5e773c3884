import type { Collection, Owned } from '../../state/collection.js';
import type { State } from '../../state/state.js';

/**
 * When a subaccount is deleted its resources either move to the main account or, with cascade,
 * go with it. Every collection that can hold subaccount resources is listed here.
 */
export async function reassignSubaccountResources(
  state: State,
  tenant: string,
  index: string,
  cascade: boolean,
): Promise<void> {
  const collections: Collection<Owned>[] = [
    state.applications,
    state.numbers,
    state.endpoints,
    state.originationUris,
    state.trunks,
    state.powerpacks,
    state.incomingCarriers,
    state.chatAppAccounts,
    state.chatAppTemplates,
    state.chatAppDeletedNames,
    state.profiles,
    state.tollfreeVerifications,
  ] as unknown as Collection<Owned>[];
  for (const collection of collections) {
    for (const doc of await collection.all(tenant, index)) {
      if (cascade) await collection.remove(doc);
      else await collection.update({ ...doc, subaccount: null }, doc);
    }
  }
}
