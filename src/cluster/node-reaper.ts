import type { RateDeck } from '../call/billing/rate-deck.js';
import { buildCallRecord, type FinishedLeg } from '../call/call-record.js';
import { findHangupCauseByCode, hangupCause } from '../call/hangup-causes.js';
import { hangupParams } from '../call/hangup-params.js';
import type { OrphanedDialogs } from '../call/orphaned-dialogs.js';
import type { CallbackDelivery } from '../callbacks/index.js';
import { UniqueViolation } from '../core/errors.js';
import type { Scheduler } from '../core/scheduler.js';
import type { AccountLimiter } from '../limits/account-limiter.js';
import type { CallRecord } from '../state/records.js';
import { recordTimeMs, type State } from '../state/state.js';
import { withinStoreDeadline } from '../state/store-deadline.js';
import { closeStreamsOfDeadCall } from './dead-call-streams.js';
import type { FoundCallEntry, LiveCallDirectory, LiveCallEntry } from './live-call-directory.js';
import type { NodeRegistry, RedisClient } from './node-registry.js';

/** How long a node's claim on a dead node's calls holds, should it die while closing them. */
const CLAIM_MS = 60_000;
/** The cause a dead node's calls end with (its hangup source is `Error`). */
const NODE_FAILURE = hangupCause('Network Error');

/**
 * Closes what nodes whose heartbeat stopped leave behind: exactly one surviving node per dead
 * node (a Redis SET NX claim) closes each of its calls, ended at the last moment the call is
 * known to have lived: the dead node's last heartbeat, or the last time the node refreshed the
 * call's entry when that was earlier (a call that ended while Redis was away and whose entry
 * stayed), never the time of the reaping (a BYE to the SIP peer of the call and of each leg it
 * placed, from the dialogs the entry holds, first; then the call's streams, as failed, with their
 * status callbacks; then the records of the legs it placed, Dial's or a trunk's, and the
 * call's own, with 5000 Network Error from source Error, and its hangup callback, which tells
 * the times and durations of that record) and releases it; removes the registrations only its
 * connections reached; then forgets the node. Every node sweeps at each heartbeat, so a dead
 * node's calls are closed within the node time to live plus one heartbeat of its last beat
 * (heartbeat-settings.ts). (Its queued messages and callback retries are BullMQ jobs: any
 * node's worker takes them, see BullMqRetryQueue.)
 */
export interface NodeReaperOptions {
  redis: RedisClient;
  node: string;
  registry: NodeRegistry;
  directory: LiveCallDirectory;
  state: State;
  deck: RateDeck;
  callbacks: CallbackDelivery;
  /** USD per started minute of an audio stream. */
  streamRate: string;
  /** The registrations of the tenant (the main account), to unbind a dead node's. */
  registrations: { unbindNode(tenant: string, node: string): Promise<number> };
  tenant: string;
  scheduler: Scheduler;
  /** The account limits the dead node's calls and streams counted in. */
  limits?: AccountLimiter;
  /** Sends the BYEs of the dead node's answered legs from this node (none: no BYE). */
  orphanedDialogs?: OrphanedDialogs;
  log: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
}

export class NodeReaper {
  constructor(private readonly options: NodeReaperOptions) {}

  async sweep(): Promise<void> {
    for (const dead of await this.options.registry.dead()) {
      if (dead !== this.options.node) await this.reap(dead);
    }
  }

  /** Closes a dead node's calls, unless another node has claimed them. */
  async reap(dead: string): Promise<void> {
    const { redis, node, registry, directory, log, scheduler } = this.options;
    const claimed = await withinStoreDeadline(
      () => redis.set(`voxgate:{cluster}:reaping:${dead}`, node, 'PX', CLAIM_MS, 'NX'),
      undefined,
      redis,
    );
    if (claimed === null) return;
    const diedAt = await registry.lastBeat(dead);
    const calls = await directory.callsOf(dead, scheduler.now());
    log.warn(
      { cluster: true, deadNode: dead, calls: calls.length },
      'node failure: closing its calls',
    );
    for (const entry of calls) {
      const endedAt = lastKnownAlive(entry, diedAt);
      await this.close(entry, endedAt).catch((error: Error) =>
        log.warn({ err: error, callUuid: entry.uuid }, 'a dead node call could not be closed'),
      );
    }
    const unbound = await this.options.registrations
      .unbindNode(this.options.tenant, dead)
      .catch((error: Error) => {
        log.warn(
          { err: error, deadNode: dead },
          'the bindings of a dead node could not be removed',
        );
        return 0;
      });
    if (unbound > 0)
      log.warn(
        { cluster: true, deadNode: dead, bindings: unbound },
        'node failure: its bindings removed',
      );
    await directory.releaseNode(dead);
    await registry.forget(dead);
  }

  private async close(entry: LiveCallEntry, endedAt: number): Promise<void> {
    const { callbacks, directory } = this.options;
    this.byePeers(entry);
    await closeStreamsOfDeadCall(entry, endedAt, this.options);
    // The legs it placed first (Dial's B leg, a trunk's attempt): children of its record.
    for (const child of entry.childLegs ?? []) {
      await this.writeRecord(entry, endedAt, {
        callUuid: child.uuid,
        requestUuid: null,
        direction: 'outbound',
        callType: 'voice',
        from: child.from,
        to: child.to,
        initiatedAt: child.initiated,
        answeredAt: child.answered,
        parentCallUuid: entry.uuid,
      });
    }
    const record = await this.writeRecord(entry, endedAt, {
      callUuid: entry.uuid,
      requestUuid: entry.requestUuid,
      direction: entry.direction,
      callType: entry.callType,
      from: entry.from,
      to: entry.to,
      initiatedAt: entry.initiated,
      answeredAt: entry.answered,
      parentCallUuid: entry.parentCallUuid,
    });
    if (entry.hangup) {
      // The record's times and cause, so the callback and the record tell the same call.
      const answer = record.answer_time === null ? null : recordTimeMs(record.answer_time);
      await callbacks.send({
        url: entry.hangup.url,
        method: entry.hangup.method,
        accountId: entry.authId,
        params: {
          ...entry.params,
          ...hangupParams(
            {
              cause: findHangupCauseByCode(record.hangup_cause_code) ?? NODE_FAILURE,
              source: record.hangup_source,
              status: answer === null ? 'failed' : 'completed',
            },
            {
              initiation: recordTimeMs(record.initiation_time),
              answer,
              end: recordTimeMs(record.end_time),
            },
          ),
        },
      });
    }
    const { limits } = this.options;
    if (limits) {
      await limits.releaseFor('calls', entry, entry.uuid);
      for (const stream of entry.streams ?? [])
        await limits.releaseFor('streams', entry, stream.streamId);
    }
    await directory.release(entry);
  }

  /**
   * Ends the dead node's call towards its SIP peers: a BYE for its own leg and for each leg it
   * placed that was answered, sent now. Their answers are logged, never waited for: a peer that
   * does not answer holds a BYE 64*T1 (32 s), and the records and callbacks must not wait.
   */
  private byePeers(entry: LiveCallEntry): void {
    const { orphanedDialogs, log } = this.options;
    if (!orphanedDialogs) return;
    const legs = [entry, ...(entry.childLegs ?? [])].filter((leg) => leg.dialog);
    for (const { uuid, dialog } of legs) {
      const fields = { cluster: true, deadNode: entry.node, callUuid: entry.uuid, legUuid: uuid };
      orphanedDialogs.bye(dialog).then(
        (outcome) => {
          if (outcome.answered) log.info({ ...fields, ...outcome }, 'node failure: BYE answered');
          else log.warn({ ...fields, reason: outcome.reason }, 'node failure: BYE unanswered');
        },
        (error: Error) =>
          log.warn({ ...fields, reason: error.message }, 'node failure: BYE not sent'),
      );
    }
  }

  /**
   * The record of a leg of a dead node's call, ended by the node's failure; the one stored
   * already when the node wrote it before it died.
   */
  private async writeRecord(
    entry: LiveCallEntry,
    endedAt: number,
    leg: Pick<
      FinishedLeg,
      'callUuid' | 'requestUuid' | 'direction' | 'callType' | 'from' | 'to' | 'parentCallUuid'
    > & { initiatedAt: number; answeredAt: number | null },
  ): Promise<CallRecord> {
    const record = buildCallRecord(
      {
        ...leg,
        // A leg answered after the call's end as the reaper sees it ended no sooner.
        endedAt: Math.max(endedAt, leg.initiatedAt, leg.answeredAt ?? 0),
        hangupCauseCode: NODE_FAILURE.code,
        hangupCauseName: NODE_FAILURE.name,
        hangupSource: 'Error',
        sourceIp: entry.sourceIp,
        account: entry.account,
        subaccount: entry.subaccount,
      },
      this.options.deck,
    );
    const { calls } = this.options.state;
    try {
      const stored = { ...record, conversion: null };
      await calls.create(stored);
      return stored;
    } catch (error) {
      // Written already: the node wrote it just before it died.
      if (!(error instanceof UniqueViolation)) throw error;
      return (await calls.get(entry.account, leg.callUuid)) ?? record;
    }
  }
}

/**
 * The last moment a dead node's call is known to have lived: the node's last heartbeat, or the
 * last time the node wrote or refreshed the call's entry when that was earlier (its end went
 * unrecorded: Redis was away), and no sooner than the call's own answer. When neither is
 * known (the node was forgotten, the entry predates times to live), its answer or its start.
 */
export function lastKnownAlive(entry: FoundCallEntry, lastBeat: number | null): number {
  const known = [lastBeat, entry.seenAt].filter((t): t is number => t !== null);
  const alive = known.length > 0 ? Math.min(...known) : 0;
  return Math.max(alive, entry.initiated, entry.answered ?? 0);
}
