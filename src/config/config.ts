import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { InboundCarrierMode } from '../call/incoming-carriers.js';
import type { OutboundProfile } from '../core/address-policy.js';
import type { DtlsSettings } from '../media/dtls/dtls-settings.js';
import type { SmppCarrier } from '../messaging/smpp/carrier-config.js';
import type { CarrierSettings } from '../call/carriers/sip-carrier.js';
import type { HeartbeatSettings } from '../cluster/heartbeat-settings.js';
import type { RecordingSettings } from '../call/recordings/recording-settings.js';
import type { AccountLimits } from '../state/records.js';
import { ConfigError, type Env } from './config-error.js';
import {
  LOG_LEVELS,
  port,
  dnsServers,
  nodeId,
  limit,
  whole,
  wholeInRange,
  realtimePriority,
  outboundProfile,
  decimal,
  digestAlgorithms,
  origins,
  flag,
  portRange,
  url,
  redisUrl,
  redisWait,
  host,
  DEFAULT_RATE_DECK,
  DEFAULT_MESSAGE_RATE_DECK,
  DEFAULT_CHATAPP_GRAPH_URL,
  operatorToken,
  secretKey,
  mm7Settings,
  smppCarriers,
  inboundCarriers,
  dtls,
  carriers,
  recordings,
  heartbeat,
  readableFile,
  type Mm7Settings,
  type PortRange,
} from './env-values.js';

export { ConfigError } from './config-error.js';
export type { Env } from './config-error.js';
export type { Mm7Settings, PortRange } from './env-values.js';
export {
  DEFAULT_CHATAPP_GRAPH_URL,
  DEFAULT_MESSAGE_RATE_DECK,
  DEFAULT_RATE_DECK,
} from './env-values.js';

/**
 * The runtime contract of DESIGN.md: every setting comes from the environment (a JSON file named
 * by VOXGATE_CONFIG_FILE may supply defaults for the same names), is checked here once at start,
 * and a bad value stops the start with a message naming the variable and its rule.
 */
export interface Config {
  httpHost: string;
  httpPort: number;
  sipPort: number;
  sipWsPort: number;
  /** Address the SIP listeners bind (VOXGATE_SIP_HOST, default VOXGATE_HTTP_HOST). */
  sipHost: string;
  /** PEM certificate and key files: TLS on sipTlsPort and WSS instead of WS. */
  sipTls: { certFile: string; keyFile: string; port: number } | null;
  /** Digest nonces older than this many seconds are stale. */
  sipNonceLifetime: number;
  /** Registration intervals: 423 below the minimum, shortened above the maximum (seconds). */
  sipMinExpires: number;
  sipMaxExpires: number;
  /** Digest challenges offered over UDP, TCP and TLS, most preferred first (RFC 8760). */
  sipDigestAlgorithms: ('SHA-256' | 'MD5')[];
  /** Digest challenges offered over WebSocket (WS and WSS), most preferred first. */
  sipWsDigestAlgorithms: ('SHA-256' | 'MD5')[];
  /** User-Agent prefixes (lower case) challenged with MD5 alone, whatever the transport. */
  sipMd5OnlyAgents: string[];
  /**
   * Origins (scheme://host[:port], lower case) whose pages may open SIP WebSocket connections;
   * null allows every origin and clients that send none.
   */
  sipWsOrigins: string[] | null;
  /** Logs every SIP message in and out (SIGUSR2 toggles it while running). */
  sipTrace: boolean;
  rtpPorts: PortRange;
  /** Address the RTP sockets bind (VOXGATE_RTP_HOST, default VOXGATE_SIP_HOST). */
  rtpHost: string;
  /** Media worker threads (VOXGATE_MEDIA_WORKERS, default one less than the cores, at least 1). */
  mediaWorkers: number;
  /**
   * Plain SIP peers (not WebRTC) that offer Opus first get Opus; false keeps them on G.711
   * (VOXGATE_SIP_OPUS, default true). WebRTC legs always prefer Opus.
   */
  sipOpus: boolean;
  /**
   * The complexity of every Opus encoder of the media workers, 0 (cheapest) to 10, whatever the
   * band (VOXGATE_OPUS_COMPLEXITY); null (unset): 0 for narrowband audio coded CELT only (1
   * while SILK makes FEC) and 5 for wider (media/pipeline/opus-codec.ts); bench/README.md has
   * what each costs and sounds like.
   */
  opusComplexity: number | null;
  /** Whether calls to numbers are taken only from their IncomingCarrier's IP set (call/incoming-carriers.ts). */
  inboundCarriers: InboundCarrierMode;
  /** WebRTC's DTLS-SRTP: the certificate files and handshake timeout (media/dtls/dtls-settings.ts). */
  dtls: DtlsSettings;
  /** SCHED_RR priority for every thread of the process (1-99); null leaves scheduling alone. */
  realtimePriority: number | null;
  publicHost: string;
  /** Base put before resource URIs; '' means URIs are paths. */
  publicUrl: string;
  /** One server, `redis+cluster://` or `redis+sentinel://` (state/redis-target.ts). */
  redisUrl: string | null;
  /** Writes are acknowledged once the replicas of their master have them (Redis WAIT). */
  redisWaitForReplicas: boolean;
  /** Seconds a start waits for the store to take writes before it gives up (0: no wait). */
  storeStartWait: number;
  /** Where the embedded store keeps its snapshot; null keeps it in memory only. */
  dataDir: string | null;
  authId: string | null;
  authToken: string | null;
  /**
   * VOXGATE_SECRET_KEY as given (checked: 32 bytes, hex or base64): the key the stored secrets
   * are encrypted with (state/secret-box.ts). null: the embedded store's key file, or refused
   * on Redis.
   */
  secretKey: string | null;
  /**
   * The outbound SIP carriers (VOXGATE_CARRIERS_FILE, or VOXGATE_CARRIER_URI's one) and the
   * timing of calls through them (call/carriers/carrier-settings.ts).
   */
  carriers: CarrierSettings;
  /** DNS servers (host or host:port) for SIP server location; empty: the system's. */
  dnsServers: string[];
  /** Seconds an origination URI has to respond at all to an INVITE before the next is tried. */
  trunkResponseTimeout: number;
  /** Seconds a trunk URI may ring before the next is tried; 0: as long as the caller waits. */
  trunkAnswerTimeout: number;
  /** Seconds between OPTIONS probes of trunk origination URIs; 0: no probing. */
  trunkProbeInterval: number;
  /** Seconds a draining node lets its calls run before it hangs them up and exits. */
  drainTimeout: number;
  /**
   * Seconds shutdown waits, once the records of the calls it hung up are written, for the
   * peers to answer its BYEs (and CANCELs) before it closes SIP anyway.
   */
  shutdownGrace: number;
  /** The main account's limits when the operator set none (VOXGATE_LIMIT_*; 0: none). */
  limits: AccountLimits;
  /** This node's id among the nodes sharing Redis (VOXGATE_NODE_ID). */
  nodeId: string;
  /** How often the nodes beat and when one is dead (cluster/heartbeat-settings.ts). */
  heartbeat: HeartbeatSettings;
  /** The SMPP carriers of VOXGATE_SMPP_URL (empty: no SMS carrier). */
  smppCarriers: SmppCarrier[];
  /** CSV message rate deck (prefix,rate_per_unit,carrier_fee_per_unit,description). */
  messageRateDeck: string;
  /** Replaces look-alike characters with GSM ones before an SMS is encoded and counted. */
  smsSmartEncoding: boolean;
  /** How long the parts of an inbound concatenated SMS are waited for (ms). */
  smsPartTimeoutMs: number;
  /** The chat-app upstream (the Cloud API's Graph base URL with its version), no trailing slash. */
  chatAppGraphUrl: string;
  /** How long a request upstream may take before it answers 502 (ms). */
  chatAppTimeoutMs: number;
  /** How long a chat-app message upstream could not take waits before it is tried again (ms). */
  chatAppRetryMs: number;
  /** Bearer token of the operator interface (/operator/v1/); null turns it off. */
  operatorToken: string | null;
  /** The MMSC that takes MMS over MM7 (VOXGATE_MMS_MM7_URL); null sends no MMS. */
  mm7: Mm7Settings | null;
  /** Requests per second allowed per auth id per API endpoint; 0 turns the limit off. */
  rateLimit: number;
  /** CSV rate deck (prefix,rate_per_minute,description) the call records are billed from. */
  rateDeck: string;
  /** USD per started minute of an audio stream, as a decimal string. */
  streamRate: string;
  /** Call recordings' retention and rate (call/recordings/recording-settings.ts). */
  recordings: RecordingSettings;
  /** Where tenant-supplied URLs may lead (docs/calls-and-media.md, Outbound requests). */
  outboundProfile: OutboundProfile;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export function readFileDefaults(env: Env): Env {
  const file = env.VOXGATE_CONFIG_FILE;
  if (!file) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(
      'VOXGATE_CONFIG_FILE',
      `must name a readable JSON file (${(error as Error).message})`,
      file,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(
      'VOXGATE_CONFIG_FILE',
      'must hold a JSON object of VOXGATE_* names to values',
      file,
    );
  }
  const out: Env = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!key.startsWith('VOXGATE_')) {
      throw new ConfigError(
        'VOXGATE_CONFIG_FILE',
        `may only set VOXGATE_* names, found ${key}`,
        file,
      );
    }
    out[key] = String(value);
  }
  return out;
}

export function loadConfig(processEnv: Env = process.env): Config {
  // The environment wins over the file.
  const env: Env = { ...readFileDefaults(processEnv), ...processEnv };

  const authId = env.VOXGATE_AUTH_ID || null;
  const authToken = env.VOXGATE_AUTH_TOKEN || null;
  if (authId !== null && !/^MA[A-Z0-9]{18}$/.test(authId)) {
    throw new ConfigError(
      'VOXGATE_AUTH_ID',
      'must be MA followed by 18 upper-case letters or digits',
      authId,
    );
  }
  if (authToken !== null && !/^[A-Za-z0-9]{40}$/.test(authToken)) {
    throw new ConfigError('VOXGATE_AUTH_TOKEN', 'must be 40 letters or digits', '<redacted>');
  }
  if ((authId === null) !== (authToken === null)) {
    const missing = authId === null ? 'VOXGATE_AUTH_ID' : 'VOXGATE_AUTH_TOKEN';
    throw new ConfigError(
      missing,
      'must be set together with the other of VOXGATE_AUTH_ID and VOXGATE_AUTH_TOKEN',
      '',
    );
  }

  const publicUrl = url(env, 'VOXGATE_PUBLIC_URL', ['http', 'https']);

  const rawRate = env.VOXGATE_RATE_LIMIT;
  let rateLimit = 100;
  if (rawRate !== undefined && rawRate !== '') {
    if (!/^\d+$/.test(rawRate)) {
      throw new ConfigError(
        'VOXGATE_RATE_LIMIT',
        'must be a whole number of requests per second (0 turns it off)',
        rawRate,
      );
    }
    rateLimit = Number(rawRate);
  }

  const rawLevel = env.VOXGATE_LOG_LEVEL ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(rawLevel)) {
    throw new ConfigError('VOXGATE_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`, rawLevel);
  }

  const dataDirRaw = env.VOXGATE_DATA_DIR;
  const httpHost = host(env, 'VOXGATE_HTTP_HOST', '0.0.0.0');
  const certFile = env.VOXGATE_SIP_TLS_CERT || null;
  const keyFile = env.VOXGATE_SIP_TLS_KEY || null;
  if ((certFile === null) !== (keyFile === null)) {
    const missing = certFile === null ? 'VOXGATE_SIP_TLS_CERT' : 'VOXGATE_SIP_TLS_KEY';
    throw new ConfigError(
      missing,
      'must be set together with the other of VOXGATE_SIP_TLS_CERT and VOXGATE_SIP_TLS_KEY',
      '',
    );
  }
  const sipMinExpires = whole(env, 'VOXGATE_SIP_MIN_EXPIRES', 60, 1);
  const sipMaxExpires = whole(env, 'VOXGATE_SIP_MAX_EXPIRES', 3600, 1);
  if (sipMaxExpires < sipMinExpires) {
    throw new ConfigError(
      'VOXGATE_SIP_MAX_EXPIRES',
      `must not be below VOXGATE_SIP_MIN_EXPIRES (${sipMinExpires})`,
      String(sipMaxExpires),
    );
  }

  return {
    httpHost,
    httpPort: port(env, 'VOXGATE_HTTP_PORT', 8080),
    sipPort: port(env, 'VOXGATE_SIP_PORT', 5060),
    sipWsPort: port(env, 'VOXGATE_SIP_WS_PORT', 5066),
    sipHost: host(env, 'VOXGATE_SIP_HOST', httpHost),
    sipTls:
      certFile && keyFile
        ? { certFile, keyFile, port: port(env, 'VOXGATE_SIP_TLS_PORT', 5061) }
        : null,
    sipNonceLifetime: whole(env, 'VOXGATE_SIP_NONCE_LIFETIME', 300, 1),
    sipMinExpires,
    sipMaxExpires,
    // MD5 alone over UDP, TCP and TLS: SIPp and many desk phones answer the first challenge
    // and know only MD5, and baresip 1.0 gives up on a 401 holding any other algorithm;
    // browser stacks over WebSocket answer the last challenge (docs/calls-and-media.md, SIP).
    sipDigestAlgorithms: digestAlgorithms(env, 'VOXGATE_SIP_DIGEST_ALGORITHMS', ['MD5']),
    sipWsDigestAlgorithms: digestAlgorithms(env, 'VOXGATE_SIP_WS_DIGEST_ALGORITHMS', [
      'SHA-256',
      'MD5',
    ]),
    sipMd5OnlyAgents: (env.VOXGATE_SIP_MD5_ONLY_AGENTS ?? '')
      .split(',')
      .map((a) => a.trim().toLowerCase())
      .filter(Boolean),
    sipWsOrigins: origins(env, 'VOXGATE_SIP_WS_ORIGINS'),
    sipTrace: flag(env, 'VOXGATE_SIP_TRACE'),
    sipOpus: flag(env, 'VOXGATE_SIP_OPUS', true),
    opusComplexity: env.VOXGATE_OPUS_COMPLEXITY
      ? wholeInRange(env, 'VOXGATE_OPUS_COMPLEXITY', 0, { min: 0, max: 10 })
      : null,
    inboundCarriers: inboundCarriers(env),
    rtpPorts: portRange(env, 'VOXGATE_RTP_PORTS', { min: 20000, max: 29999 }),
    rtpHost: host(env, 'VOXGATE_RTP_HOST', host(env, 'VOXGATE_SIP_HOST', httpHost)),
    mediaWorkers: whole(env, 'VOXGATE_MEDIA_WORKERS', Math.max(1, availableParallelism() - 1), 1),
    dtls: dtls(env),
    realtimePriority: realtimePriority(env, 'VOXGATE_REALTIME_PRIORITY'),
    publicHost: host(env, 'VOXGATE_PUBLIC_HOST', '127.0.0.1'),
    publicUrl: publicUrl ? publicUrl.replace(/\/+$/, '') : '',
    redisUrl: redisUrl(env, 'VOXGATE_REDIS_URL'),
    redisWaitForReplicas: redisWait(env, 'VOXGATE_REDIS_WAIT', redisUrl(env, 'VOXGATE_REDIS_URL')),
    storeStartWait: whole(env, 'VOXGATE_STORE_START_WAIT', 60, 0),
    dataDir: dataDirRaw === undefined ? 'data' : dataDirRaw === '' ? null : dataDirRaw,
    authId,
    authToken,
    secretKey: secretKey(env, 'VOXGATE_SECRET_KEY'),
    carriers: carriers(env),
    dnsServers: dnsServers(env, 'VOXGATE_DNS_SERVERS'),
    trunkResponseTimeout: whole(env, 'VOXGATE_TRUNK_RESPONSE_TIMEOUT', 4, 1),
    trunkAnswerTimeout: whole(env, 'VOXGATE_TRUNK_ANSWER_TIMEOUT', 0, 0),
    trunkProbeInterval: whole(env, 'VOXGATE_TRUNK_PROBE_INTERVAL', 30, 0),
    drainTimeout: whole(env, 'VOXGATE_DRAIN_TIMEOUT', 600, 0),
    shutdownGrace: whole(env, 'VOXGATE_SHUTDOWN_GRACE', 3, 0),
    limits: {
      calls: limit(env, 'VOXGATE_LIMIT_CALLS'),
      calls_per_second: limit(env, 'VOXGATE_LIMIT_CALLS_PER_SECOND'),
      streams: limit(env, 'VOXGATE_LIMIT_STREAMS'),
      messages_per_second: limit(env, 'VOXGATE_LIMIT_MESSAGES_PER_SECOND'),
    },
    nodeId: nodeId(env, 'VOXGATE_NODE_ID'),
    heartbeat: heartbeat(env),
    smppCarriers: smppCarriers(env, 'VOXGATE_SMPP_URL'),
    messageRateDeck: readableFile(env, 'VOXGATE_MESSAGE_RATE_DECK', DEFAULT_MESSAGE_RATE_DECK),
    smsSmartEncoding: flag(env, 'VOXGATE_SMS_SMART_ENCODING'),
    smsPartTimeoutMs: whole(env, 'VOXGATE_SMS_PART_TIMEOUT', 60, 1) * 1000,
    chatAppGraphUrl: (
      url(env, 'VOXGATE_CHATAPP_GRAPH_URL', ['http', 'https']) ?? DEFAULT_CHATAPP_GRAPH_URL
    ).replace(/\/+$/, ''),
    chatAppTimeoutMs: whole(env, 'VOXGATE_CHATAPP_TIMEOUT', 10, 1) * 1000,
    chatAppRetryMs: whole(env, 'VOXGATE_CHATAPP_RETRY', 30, 1) * 1000,
    mm7: mm7Settings(env, 'VOXGATE_MMS_MM7_URL'),
    operatorToken: operatorToken(env, 'VOXGATE_OPERATOR_TOKEN'),
    rateLimit,
    rateDeck: readableFile(env, 'VOXGATE_RATE_DECK', DEFAULT_RATE_DECK),
    streamRate: decimal(env, 'VOXGATE_STREAM_RATE', '0.00300'),
    recordings: recordings(env),
    outboundProfile: outboundProfile(env, 'VOXGATE_OUTBOUND_PROFILE'),
    logLevel: rawLevel as Config['logLevel'],
  };
}
