import { setTimeout as sleep } from 'node:timers/promises';
import { UniqueViolation } from '../core/errors.js';
import { newAuthId, newAuthToken } from '../core/ids.js';
import type { Clock } from '../core/clock.js';
import type { AccountRecord } from './records.js';
import type { State } from './state.js';

export interface MainAccount {
  authId: string;
  authToken: string;
  /** True only on the start that created it (and handed it to keepGenerated). */
  generated: boolean;
  /**
   * What became of the kept credentials (main-account.env), when there were any: `used` (the
   * store holds that account), `restored` (the store lacked it: stored again from the file), or
   * `passed-over` (the store's main account is another: that one is used).
   */
  kept?: { path: string; authId: string; outcome: 'used' | 'restored' | 'passed-over' };
}

const MARKER = { kind: 'marker', tenant: 'global', id: 'main-account' } as const;

/** Credentials a start handed out earlier (main-account.env), and what became of them. */
export interface KeptCredentials {
  authId: string;
  authToken: string;
  /** Where they are kept, for the log line that says which were used. */
  path: string;
}

/**
 * The main account comes from VOXGATE_AUTH_ID/VOXGATE_AUTH_TOKEN when they are set (its token
 * follows the variable); otherwise it is generated once and found again on later starts.
 * `keepGenerated` is given newly generated credentials before they are stored: when it
 * fails, nothing is stored, so no account exists whose token nobody was told.
 *
 * `kept` are the credentials an earlier start handed out (its main-account.env). A start that
 * failed after writing them may not have stored the account (the embedded store's log not yet
 * written, Redis gone): this start adopts them, creating the account when the store lacks it,
 * rather than generate another and replace the file a user may already have copied. Only a
 * main account the store names and holds comes before them (nodes sharing Redis all use it).
 */
export async function ensureMainAccount(
  state: State,
  clock: Clock,
  configured: { authId: string; authToken: string } | null,
  keepGenerated?: (account: { authId: string; authToken: string }) => Promise<void>,
  kept: KeptCredentials | null = null,
): Promise<MainAccount> {
  if (configured) {
    await storeMainAccount(state, clock, configured);
    return { ...configured, generated: false };
  }
  const marker = await state.store.get<{ auth_id: string }>(MARKER.kind, MARKER.tenant, MARKER.id);
  if (marker) {
    const account = await state.accounts.get(marker.auth_id, marker.auth_id);
    if (account) {
      const outcome = kept?.authId === account.auth_id ? 'used' : 'passed-over';
      return {
        authId: account.auth_id,
        authToken: account.auth_token,
        generated: false,
        ...(kept ? { kept: { path: kept.path, authId: kept.authId, outcome } } : {}),
      };
    }
  }
  if (kept) {
    const restored = await storeMainAccount(state, clock, kept);
    await putMarker(state, kept.authId);
    await state.store.durable();
    return {
      authId: kept.authId,
      authToken: kept.authToken,
      generated: false,
      kept: { path: kept.path, authId: kept.authId, outcome: restored ? 'restored' : 'used' },
    };
  }
  const record = mainRecord(newAuthId('MA'), newAuthToken(), clock.now());
  await keepGenerated?.({ authId: record.auth_id, authToken: record.auth_token });
  await state.accounts.create(record);
  await putMarker(state, record.auth_id);
  // Durable before the start goes on: a start that fails later must not lose it.
  await state.store.durable();
  return { authId: record.auth_id, authToken: record.auth_token, generated: true };
}

/** Creates the main account, or gives it this token; resolves to whether it was missing. */
async function storeMainAccount(
  state: State,
  clock: Clock,
  account: { authId: string; authToken: string },
): Promise<boolean> {
  let existing = await state.accounts.get(account.authId, account.authId);
  if (!existing) {
    try {
      await state.accounts.create(mainRecord(account.authId, account.authToken, clock.now()));
      return true;
    } catch (error) {
      if (!(error instanceof UniqueViolation)) throw error;
      existing = await writtenByAnother(state, account.authId);
      if (!existing) throw error;
    }
  }
  if (existing.auth_token !== account.authToken || existing.subaccount !== null) {
    const next = { ...existing, auth_token: account.authToken, modified: clock.now() };
    await state.accounts.update(next, existing);
  }
  return false;
}

/** How long a start waits for the main account another node claimed to be written. */
const CLAIMED_WRITE_WAIT_MS = 2000;
const CLAIMED_WRITE_POLL_MS = 20;

/**
 * The main account another node starting at the same moment claimed first: its auth id is
 * taken before its document is written (two commands), so it is read until it is there.
 */
async function writtenByAnother(state: State, authId: string): Promise<AccountRecord | null> {
  for (let waited = 0; ; waited += CLAIMED_WRITE_POLL_MS) {
    const account = await state.accounts.get(authId, authId);
    if (account || waited >= CLAIMED_WRITE_WAIT_MS) return account;
    await sleep(CLAIMED_WRITE_POLL_MS);
  }
}

/**
 * Writes again the main account a wiped store lost (Redis restarted empty or flushed): the
 * same auth id and token this gateway runs with, and, for a generated one (`fromConfig`
 * false), the marker later starts find it by. Resolves to whether anything was missing.
 * Several nodes may do it at once: the one that claims the auth id first writes the account.
 */
export async function restoreMainAccount(
  state: State,
  clock: Clock,
  account: { authId: string; authToken: string },
  fromConfig: boolean,
): Promise<boolean> {
  let restored = false;
  if (!(await state.accounts.get(account.authId, account.authId))) {
    try {
      await state.accounts.create(mainRecord(account.authId, account.authToken, clock.now()));
      restored = true;
    } catch (error) {
      if (!(error instanceof UniqueViolation)) throw error;
    }
  }
  if (!fromConfig && !(await state.store.get(MARKER.kind, MARKER.tenant, MARKER.id))) {
    await putMarker(state, account.authId);
    restored = true;
  }
  return restored;
}

function putMarker(state: State, authId: string): Promise<void> {
  return state.store.put(
    MARKER.kind,
    MARKER.tenant,
    MARKER.id,
    { auth_id: authId },
    { score: 0, indexes: [], unique: [] },
  );
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
