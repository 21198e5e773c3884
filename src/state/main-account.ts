import { newAuthId, newAuthToken } from '../core/ids.js';
import type { Clock } from '../core/clock.js';
import type { AccountRecord } from './records.js';
import type { State } from './state.js';

export interface MainAccount {
  authId: string;
  authToken: string;
  /** True only on the start that created it (and handed it to keepGenerated). */
  generated: boolean;
}

const MARKER = { kind: 'marker', tenant: 'global', id: 'main-account' } as const;

/**
 * The main account comes from VOXGATE_AUTH_ID/VOXGATE_AUTH_TOKEN when they are set (its token
 * follows the variable); otherwise it is generated once and found again on later starts.
 * `keepGenerated` is given newly generated credentials before they are stored: when it
 * fails, nothing is stored, so no account exists whose token nobody was told.
 */
export async function ensureMainAccount(
  state: State,
  clock: Clock,
  configured: { authId: string; authToken: string } | null,
  keepGenerated?: (account: { authId: string; authToken: string }) => Promise<void>,
): Promise<MainAccount> {
  if (configured) {
    const existing = await state.accounts.get(configured.authId, configured.authId);
    if (!existing) {
      await state.accounts.create(mainRecord(configured.authId, configured.authToken, clock.now()));
    } else if (existing.auth_token !== configured.authToken || existing.subaccount !== null) {
      const next = { ...existing, auth_token: configured.authToken, modified: clock.now() };
      await state.accounts.update(next, existing);
    }
    return { ...configured, generated: false };
  }
  const marker = await state.store.get<{ auth_id: string }>(MARKER.kind, MARKER.tenant, MARKER.id);
  if (marker) {
    const account = await state.accounts.get(marker.auth_id, marker.auth_id);
    if (account)
      return { authId: account.auth_id, authToken: account.auth_token, generated: false };
  }
  const record = mainRecord(newAuthId('MA'), newAuthToken(), clock.now());
  await keepGenerated?.({ authId: record.auth_id, authToken: record.auth_token });
  await state.accounts.create(record);
  await state.store.put(
    MARKER.kind,
    MARKER.tenant,
    MARKER.id,
    { auth_id: record.auth_id },
    {
      score: 0,
      indexes: [],
      unique: [],
    },
  );
  return { authId: record.auth_id, authToken: record.auth_token, generated: true };
}

function mainRecord(authId: string, authToken: string, now: number): AccountRecord {
  return {
    account: authId,
    subaccount: null,
    created: now,
    modified: now,
    auth_id: authId,
    auth_token: authToken,
    name: 'main',
    enabled: true,
  };
}
