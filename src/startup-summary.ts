import { resolve } from 'node:path';
import type { Gateway } from './app.js';
import type { Config } from './config/config.js';
import { registerUser } from './call/carriers/carrier-registration.js';
import { gatewayUri } from './call/carriers/carrier-routes.js';
import { gatewayListeners, type Listener } from './config/listeners.js';
import { RedisStore } from './state/redis-store.js';
import type { RedisClient } from './state/redis-connection.js';

/** How long the start-up summary waits for Redis to say how it persists. */
const PERSISTENCE_QUERY_MS = 1000;

/**
 * What an operator needs to know a started gateway by, as log lines: one `listening` line per
 * listener (listener, protocol, address, port, setting), so that a search for a port or a
 * listener finds one line that says all of it; then one `started` line with the rest (RTP
 * range and public host, the store, the carriers and upstreams, where the main account's
 * credentials are). No secret is in them: URLs go without their user and password, the
 * credentials by their file's path.
 */
export async function logStartupSummary(
  gateway: Gateway,
  config: Config,
  credentialsFile: string | null,
): Promise<void> {
  const log = gateway.app.log;
  for (const listener of gatewayListeners(config)) {
    const bound = boundAddress(gateway, listener);
    log.info(
      {
        listener: listener.name,
        protocol: listener.protocol,
        address: bound.address,
        port: bound.port,
        setting: listener.portSetting,
      },
      'listening',
    );
  }
  log.info(
    {
      node: gateway.sip.node,
      publicHost: config.publicHost,
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
      rtpPorts: `${config.rtpPorts.min}-${config.rtpPorts.max}`,
      rtpHost: config.rtpHost,
      store: await describeStore(gateway, config),
      carriers: config.carriers.carriers.map((c) => ({
        name: c.name,
        gateways: c.gateways.map((g) => gatewayUri(c, g)),
        prefixes: c.prefixes,
        // The user the carrier knows us by; never the password.
        ...(c.auth && { username: c.auth.username }),
        // The AOR's user and the seconds asked (docs/configuration.md, "Registration").
        ...(c.register && {
          register: { user: registerUser(c), expires: c.register.expires },
        }),
      })),
      smsc: config.smppCarriers.map((c) => ({
        name: c.name,
        url: `${c.tls ? 'ssmpp' : 'smpp'}://${c.host}:${c.port}`,
        prefixes: c.prefixes,
      })),
      mmsc: config.mm7?.url ?? null,
      chatApp: withoutUserInfo(config.chatAppGraphUrl),
      mainAccount: gateway.mainAccount.authId,
      credentials: config.authId ? 'VOXGATE_AUTH_ID, VOXGATE_AUTH_TOKEN' : credentialsFile,
    },
    'started',
  );
}

/** Where a listener is bound (the system's port when its setting asked for any). */
function boundAddress(gateway: Gateway, listener: Listener): { address: string; port: number } {
  if (listener.name === 'http') {
    const bound = gateway.app.server.address();
    return bound !== null && typeof bound === 'object'
      ? { address: bound.address, port: bound.port }
      : { address: listener.host, port: listener.port };
  }
  const { udp, tcp, ws, tls } = gateway.sip.addresses;
  const address =
    listener.name === 'sip-udp'
      ? udp
      : listener.name === 'sip-tcp'
        ? tcp
        : listener.name === 'sip-tls'
          ? tls
          : ws;
  return address ?? { address: listener.host, port: listener.port };
}

type StoreSummary =
  | { kind: 'embedded'; path: string | null; persistent: boolean }
  | { kind: 'redis'; url: string; persistence: string };

async function describeStore(gateway: Gateway, config: Config): Promise<StoreSummary> {
  if (!config.redisUrl)
    return config.dataDir === null
      ? { kind: 'embedded', path: null, persistent: false }
      : { kind: 'embedded', path: resolve(config.dataDir, 'state.log'), persistent: true };
  const store = gateway.state.store;
  return {
    kind: 'redis',
    url: redactedRedisUrl(config.redisUrl),
    persistence: store instanceof RedisStore ? await redisPersistence(store.client) : 'unknown',
  };
}

/**
 * How Redis keeps what it is given: `aof` (appendonly yes, with its appendfsync), `rdb`
 * (snapshots only), `none` (a restart comes back empty), or `unknown` when CONFIG GET is refused
 * (managed Redis often renames it) or does not answer in time.
 */
async function redisPersistence(client: RedisClient): Promise<string> {
  const read = async (name: string) =>
    ((await client.call('CONFIG', 'GET', name)) as string[])[1] ?? '';
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((done) => {
    timer = setTimeout(() => done('unknown'), PERSISTENCE_QUERY_MS);
  });
  const asked = (async () => {
    if ((await read('appendonly')) === 'yes')
      return `aof (appendfsync ${await read('appendfsync')})`;
    return (await read('save')).trim() === '' ? 'none' : 'rdb';
  })().catch(() => 'unknown');
  try {
    return await Promise.race([asked, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A VOXGATE_REDIS_URL with its passwords (the data nodes', the Sentinels') replaced by ***. */
export function redactedRedisUrl(url: string): string {
  return url
    .replace(/^([a-z+]+:\/\/)([^@/]*)@/i, (_, scheme: string, userInfo: string) => {
      // A lone name may be taken as the password (Redis before ACLs): it goes too.
      const user = userInfo.includes(':') ? userInfo.split(':')[0]! : '';
      return `${scheme}${user}:***@`;
    })
    .replace(/([?&]sentinel_password=)[^&]*/i, '$1***');
}

/** A sip:, sips: or http(s) URI without the user and password before its host. */
export function withoutUserInfo(uri: string): string {
  return uri.replace(/^([a-z][a-z0-9+.-]*:(?:\/\/)?)[^@/?#]*@/i, '$1');
}
