import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { CallbackDelivery } from './callbacks/index.js';
import { RateDeck } from './call/billing/rate-deck.js';
import { OutboundCarriers } from './call/carriers/outbound-carriers.js';
import { CallEngine } from './call/call-engine.js';
import { LiveConferences } from './call/conferences/live-conferences.js';
import { LiveControl } from './call/live-control.js';
import { MachineDetectionMetrics } from './call/machine-detection.js';
import { MediaService } from './call/media-service.js';
import { orphanedDialogsOf } from './call/orphaned-dialogs.js';
import { OwedRecords } from './call/owed-records.js';
import { StateRegistrarDirectory } from './call/registrar-directory.js';
import type { SipService } from './call/sip-service.js';
import { OriginationProbes } from './call/trunks/origination-probes.js';
import { loadWebrtcSupport } from './call/webrtc-support.js';
import { clusterMetrics } from './cluster/cluster-metrics.js';
import { GatewayCluster, type GatewayClusterOptions } from './cluster/gateway-cluster.js';
import { LiveCallDirectory } from './cluster/live-call-directory.js';
import type { Config } from './config/config.js';
import type { OutboundGuardSettings } from './core/outbound-guard.js';
import type { Scheduler } from './core/scheduler.js';
import type { AccountLimiter } from './limits/account-limiter.js';
import { composeRecordings, type RecordingsComposition } from './recording-composition.js';
import { systemSipDns } from './sip/dialog/server-locator.js';
import type { RedisStore } from './state/redis-store.js';
import type { State } from './state/state.js';

/** What calls take from the rest of the gateway. */
export interface VoiceDependencies {
  state: State;
  /** Set when the state is on Redis: the calls' owners are kept there for the other nodes. */
  redisStore: RedisStore | null;
  sip: SipService;
  callbacks: CallbackDelivery;
  limits: AccountLimiter;
  registry: Registry;
  scheduler: Scheduler;
  log: CallEngine['options']['services']['log'] & MediaService['options']['log'];
  /** The main account: the owner of the trunks the origination probes watch. */
  tenant: string;
  /** The outbound guard's settings, as the media workers get them when each one starts. */
  outbound: () => OutboundGuardSettings;
}

/** The voice side of the gateway: calls, their media, recordings, carriers and trunks. */
export interface Voice {
  media: MediaService;
  calls: CallEngine;
  /** The live call control of this node's own calls. */
  local: LiveControl;
  /** The Conference API over this node's own rooms. */
  localConferences: LiveConferences;
  recordings: RecordingsComposition;
  /** The call records a call's end owes, kept on this node while the store is away. */
  callRecords: OwedRecords;
  probes: OriginationProbes;
  carriers: OutboundCarriers;
  /** Each call's owner on Redis, for the other nodes; none on the embedded store. */
  directory: LiveCallDirectory | null;
  deck: RateDeck;
}

/**
 * Part of the composition root (app.ts): the call engine with its media workers, the carriers
 * it dials through (registered, probed), the trunks' origination probes, billing, owed call
 * records and recordings, as the configuration picks them.
 */
export function composeVoice(config: Config, deps: VoiceDependencies): Voice {
  const { state, sip, callbacks, limits, registry, scheduler, log } = deps;
  const webrtc = loadWebrtcSupport(config);
  const media = new MediaService({
    config,
    webrtc,
    log,
    registry,
    outbound: () => {
      const settings = deps.outbound();
      // A plain copy for the worker: the ports as they are when it starts.
      return { ...settings, policy: { ...settings.policy } };
    },
  });
  const dns = systemSipDns(config.dnsServers);
  const probes = new OriginationProbes({
    state,
    tenant: deps.tenant,
    transactions: sip.stack.transactions,
    dns,
    scheduler,
    publicHost: config.publicHost,
    intervalMs: config.trunkProbeInterval * 1000,
    log,
  });
  const carriers = new OutboundCarriers(config.carriers, {
    transactions: sip.stack.transactions,
    transport: sip.stack.transport,
    registry,
    dns,
    scheduler,
    publicHost: config.publicHost,
    log,
  });
  // On Redis, several nodes may share the state: each call's owner is kept there (src/cluster).
  const directory = deps.redisStore
    ? new LiveCallDirectory({
        redis: deps.redisStore.client,
        node: sip.node,
        heartbeat: config.heartbeat,
        onError: (error, uuid) =>
          log.warn({ err: error, callUuid: uuid }, 'the live call directory was not updated'),
      })
    : null;
  const deck = RateDeck.load(config.rateDeck);
  const callRecords = new OwedRecords({
    state,
    callbacks,
    journalPath: config.dataDir ? join(config.dataDir, 'journal', 'call-records.jsonl') : null,
    scheduler,
    log,
  });
  callRecords.start();
  const recordings = composeRecordings(config, { state, media, callbacks, log, node: sip.node });
  const calls = new CallEngine({
    services: {
      recordings: recordings.service,
      state,
      callbacks,
      records: callRecords,
      deck,
      streamRate: config.streamRate,
      limits,
      scheduler,
      machineDetection: new MachineDetectionMetrics(registry),
      ...(directory ? { watcher: directory } : {}),
      log,
    },
    legs: {
      sip,
      media,
      publicHost: config.publicHost,
      scheduler,
      log,
      webrtc,
      sipOpus: config.sipOpus,
    },
    carriers: carriers.dialling,
    inboundCarriers: config.inboundCarriers,
    registeredContact: (user) => carriers.registrations.carrierOfContactUser(user),
    trunks: {
      dns,
      probes,
      responseTimeoutMs: config.trunkResponseTimeout * 1000,
      answerTimeoutMs: config.trunkAnswerTimeout * 1000,
    },
  });
  return {
    media,
    calls,
    local: new LiveControl(calls),
    localConferences: new LiveConferences(calls.conferences),
    recordings,
    callRecords,
    probes,
    carriers,
    directory,
    deck,
  };
}

/**
 * This node's part in a cluster, when the state is on Redis (null otherwise): calls, rooms and
 * control across the nodes, its metrics on /metrics, and conference rooms claimed in Redis so
 * a room lives on one node.
 */
export function composeCluster(
  config: Config,
  voice: Voice,
  deps: VoiceDependencies &
    Pick<GatewayClusterOptions, 'mainToken' | 'binds' | 'addresses' | 'restore'>,
): GatewayCluster | null {
  if (!deps.redisStore || !voice.directory) return null;
  const { state, scheduler } = deps;
  const cluster = new GatewayCluster({
    redis: deps.redisStore.client,
    node: deps.sip.node,
    mainToken: deps.mainToken,
    heartbeat: config.heartbeat,
    scheduler,
    engine: voice.calls,
    local: voice.local,
    localConferences: voice.localConferences,
    directory: voice.directory,
    state,
    deck: voice.deck,
    callbacks: deps.callbacks,
    streamRate: config.streamRate,
    limits: deps.limits,
    orphanedDialogs: orphanedDialogsOf(deps.sip.dialogs),
    registrations: new StateRegistrarDirectory(state, () => scheduler.now()),
    tenant: deps.tenant,
    ...(deps.binds ? { binds: deps.binds } : {}),
    addresses: deps.addresses,
    ...(deps.restore ? { restore: deps.restore } : {}),
    log: deps.log,
  });
  clusterMetrics(deps.registry, cluster);
  // A conference lives on one node: a member reaching another is refused, not split off.
  voice.calls.conferences.useClaims(cluster.roomClaims);
  return cluster;
}
