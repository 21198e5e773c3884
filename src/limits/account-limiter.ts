import { Counter, type Registry } from 'prom-client';
import { pause, type Scheduler } from '../core/scheduler.js';
import type { AccountLimits } from '../state/records.js';
import type { State } from '../state/state.js';
import type { ConcurrentKind, LimitCounters, RateKind } from './limit-counters.js';

/** Every limit an account can have, as the operator interface names them. */
export const LIMIT_NAMES = ['calls', 'calls_per_second', 'streams', 'messages_per_second'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** No limit of any kind. */
export const NO_LIMITS: AccountLimits = {
  calls: null,
  calls_per_second: null,
  streams: null,
  messages_per_second: null,
};

/** Whose work it is: the main account (the tenant), and the subaccount when it is one's. */
export interface LimitedOwner {
  account: string;
  subaccount: string | null;
}

/** A limit that refused: whose it was and how much it allows. */
export interface LimitHit {
  scope: string;
  name: LimitName;
  limit: number;
}

/** How long an account's limits are used before they are read again from the state. */
const LIMITS_CACHE_MS = 1000;

/**
 * The per-account limits: how many calls and audio streams may run at once, and how many
 * calls may be placed and messages sent per second. The main account's limits cover all its
 * work (its subaccounts' included) and default to the configuration's; a subaccount may also
 * have its own, set by the operator, which apply to its work on top. The counts live in
 * LimitCounters (Redis when nodes share it), so every node enforces the same limits; the
 * settings are read from the account records at most once a second per node. Every refusal
 * counts on /metrics (voxgate_limit_hits_total{account,limit}).
 */
export class AccountLimiter {
  private readonly cache = new Map<string, { limits: AccountLimits; until: number }>();
  /** The scopes each running member was counted in, to release exactly those. */
  private readonly counted = new Map<string, string[]>();
  private readonly hits: Counter<'account' | 'limit'>;

  constructor(
    private readonly options: {
      state: State;
      counters: LimitCounters;
      /** The main account's limits when it has none set (configuration). */
      defaults: AccountLimits;
      scheduler: Scheduler;
      registry: Registry;
    },
  ) {
    this.hits = new Counter({
      name: 'voxgate_limit_hits_total',
      help: 'Work refused or held back by an account limit, by account and limit',
      labelNames: ['account', 'limit'],
      registers: [options.registry],
    });
  }

  /** The limits in force for an account: its settings, else (main account) the defaults. */
  async limitsOf(tenant: string, authId: string): Promise<AccountLimits> {
    const now = this.options.scheduler.now();
    const cached = this.cache.get(authId);
    if (cached && cached.until > now) return cached.limits;
    const record = await this.options.state.accounts.get(tenant, authId);
    const base = authId === tenant ? this.options.defaults : NO_LIMITS;
    const limits = { ...base, ...record?.limits };
    this.cache.set(authId, { limits, until: now + LIMITS_CACHE_MS });
    return limits;
  }

  /** Forgets what this node read of an account's limits (they were just changed). */
  forget(authId: string): void {
    this.cache.delete(authId);
  }

  /**
   * Counts `member` (a call's or a stream's id) as running for its owner; null when every
   * limit in force allows it, else the limit that does not (and nothing stays counted).
   */
  async admit(kind: ConcurrentKind, owner: LimitedOwner, member: string): Promise<LimitHit | null> {
    const taken: string[] = [];
    for (const { scope, limits } of await this.scopes(owner)) {
      const limit = limits[kind];
      if (limit === null) continue;
      if (!(await this.options.counters.acquire(scope, kind, member, limit))) {
        await Promise.all(taken.map((s) => this.options.counters.release(s, kind, member)));
        return this.hit(scope, kind, limit);
      }
      taken.push(scope);
    }
    if (taken.length > 0) this.counted.set(`${kind}:${member}`, taken);
    return null;
  }

  /** `member` stopped running. */
  async release(kind: ConcurrentKind, member: string): Promise<void> {
    const scopes = this.counted.get(`${kind}:${member}`);
    if (!scopes) return;
    this.counted.delete(`${kind}:${member}`);
    await Promise.all(scopes.map((scope) => this.options.counters.release(scope, kind, member)));
  }

  /** Releases what another node counted for `member` (that node died while it ran). */
  async releaseFor(kind: ConcurrentKind, owner: LimitedOwner, member: string): Promise<void> {
    const scopes = [owner.account, ...(owner.subaccount ? [owner.subaccount] : [])];
    await Promise.all(scopes.map((scope) => this.options.counters.release(scope, kind, member)));
  }

  /** Takes one of this second's allowance: 0 when taken, else how many ms to wait first. */
  async delay(kind: RateKind, owner: LimitedOwner): Promise<number> {
    for (const { scope, limits } of await this.scopes(owner)) {
      const limit = limits[kind];
      if (limit === null) continue;
      const wait = await this.options.counters.take(
        scope,
        kind,
        limit,
        this.options.scheduler.now(),
      );
      if (wait > 0) {
        this.hit(scope, kind, limit);
        return wait;
      }
    }
    return 0;
  }

  /** Waits for this second's allowance (or the next ones') and takes it. */
  async wait(kind: RateKind, owner: LimitedOwner): Promise<void> {
    for (let ms = await this.delay(kind, owner); ms > 0; ms = await this.delay(kind, owner)) {
      await pause(this.options.scheduler, ms);
    }
  }

  /** The subaccount's own limits first (when it is one's), then the main account's. */
  private async scopes(owner: LimitedOwner) {
    const main = {
      scope: owner.account,
      limits: await this.limitsOf(owner.account, owner.account),
    };
    if (!owner.subaccount) return [main];
    const own = await this.limitsOf(owner.account, owner.subaccount);
    return [{ scope: owner.subaccount, limits: own }, main];
  }

  private hit(scope: string, name: LimitName, limit: number): LimitHit {
    this.hits.inc({ account: scope, limit: name });
    return { scope, name, limit };
  }
}

/** What a client or a record is told about a limit that refused. */
export function describeHit(hit: LimitHit): string {
  const what: Record<LimitName, string> = {
    calls: 'concurrent calls',
    calls_per_second: 'calls per second',
    streams: 'concurrent audio streams',
    messages_per_second: 'messages per second',
  };
  return `account ${hit.scope} has reached its limit of ${hit.limit} ${what[hit.name]}`;
}
