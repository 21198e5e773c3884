import type { Scheduler } from '../core/scheduler.js';
import type { DocumentEntry, DocumentStore } from '../state/document-store.js';
import { messageIdKeys } from './sms/delivery-receipt.js';

/** Which part of which message a carrier's message id stands for. */
export interface PartRef {
  account: string;
  message_uuid: string;
  part: number;
}

const KIND = 'carrier_message_id';
/** Every carrier id lives under one tenant: a receipt names no account. */
const TENANT = 'carriers';
/** Scored by when the part was sent, so that ids whose receipt never came can be swept. */
const entry = (sentAt: number): DocumentEntry => ({ score: sentAt, indexes: [], unique: [] });
/** How long a sent part's id waits for its receipt (carriers keep trying for two or three days). */
export const CARRIER_ID_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const SWEEP_BATCH = 500;

/** What the store keeps: the part and its own key, for the sweep. */
interface StoredRef extends PartRef {
  key: string;
}
/** Ids kept in memory besides the store, newest last; the oldest go first past this. */
const MEMORY_LIMIT = 200_000;

/**
 * The carrier message ids of sent parts, so a receipt finds its message on any node and after a
 * restart. An id is stored under its canonical form (lower case, no leading zeros) and found
 * through any of the forms a carrier may write it in (hex or decimal). Ids just sent are also
 * kept in memory, where a receipt that comes right after the submit_sm_resp finds them before
 * the store write has finished.
 */
export class CarrierMessageIds {
  private readonly recent = new Map<string, PartRef>();
  /** Receipts waiting for an id this node is about to remember, by key. */
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly store: DocumentStore,
    private readonly scheduler: Scheduler,
  ) {}

  remember(carrier: string, carrierId: string, ref: PartRef): Promise<void> {
    const key = `${carrier}:${messageIdKeys(carrierId)[0]}`;
    this.recent.set(key, ref);
    for (const wake of this.waiters.get(key) ?? []) wake();
    if (this.recent.size > MEMORY_LIMIT) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
    const stored: StoredRef = { ...ref, key };
    return this.store.put(KIND, TENANT, key, stored, entry(this.scheduler.now()));
  }

  async find(carrier: string, carrierId: string): Promise<PartRef | null> {
    const keys = messageIdKeys(carrierId).map((k) => `${carrier}:${k}`);
    for (const key of keys) {
      const ref = this.recent.get(key);
      if (ref) return ref;
    }
    for (const key of keys) {
      const stored = await this.store.get<StoredRef>(KIND, TENANT, key);
      if (stored)
        return { account: stored.account, message_uuid: stored.message_uuid, part: stored.part };
    }
    return null;
  }

  /**
   * Resolves when this node remembers `carrierId` (a receipt read in the same turn as the
   * submit_sm_resp that names it), or after `ms` at the latest.
   */
  rememberedOrAfter(carrier: string, carrierId: string, ms: number): Promise<void> {
    const keys = messageIdKeys(carrierId).map((k) => `${carrier}:${k}`);
    // Remembered while the caller was still looking it up in the store.
    if (keys.some((key) => this.recent.has(key))) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        timer.cancel();
        for (const key of keys) {
          const set = this.waiters.get(key);
          set?.delete(wake);
          if (set?.size === 0) this.waiters.delete(key);
        }
        resolve();
      };
      const timer = this.scheduler.after(ms, wake);
      for (const key of keys) {
        let set = this.waiters.get(key);
        if (!set) this.waiters.set(key, (set = new Set()));
        set.add(wake);
      }
    });
  }

  async forget(carrier: string, carrierIds: string[]): Promise<void> {
    for (const id of carrierIds) {
      const key = `${carrier}:${messageIdKeys(id)[0]}`;
      this.recent.delete(key);
      await this.store.remove(KIND, TENANT, key, entry(0));
    }
  }

  /**
   * Removes one batch of ids sent before `now` - CARRIER_ID_RETENTION_MS (their receipt never
   * came; one that still comes is logged as unknown); resolves with how many went.
   */
  async sweep(now: number): Promise<number> {
    const { items } = await this.store.page<StoredRef>(KIND, TENANT, {
      scoreMax: now - CARRIER_ID_RETENTION_MS,
      ascending: true,
      offset: 0,
      limit: SWEEP_BATCH,
    });
    const keyed = items.filter((item) => typeof item.key === 'string');
    for (const item of keyed) {
      this.recent.delete(item.key);
      await this.store.remove(KIND, TENANT, item.key, entry(0));
    }
    return keyed.length;
  }
}
