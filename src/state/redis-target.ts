/**
 * What VOXGATE_REDIS_URL names: one server, a Redis Cluster or a Sentinel-watched master.
 *
 *   redis://[user:password@]host:port[/db]             one server (rediss:// for TLS)
 *   redis+cluster://[user:password@]host:port,host:port a Redis Cluster, by any of its nodes
 *   redis+sentinel://[user:password@]host:port,host:port/master[/db][?sentinel_password=...]
 *                                                       the master a set of Sentinels watches
 *
 * `rediss+cluster://` and `rediss+sentinel://` use TLS to the data nodes (and, for Sentinel, to
 * the Sentinels). Credentials in the URL are those of the data nodes; Sentinels that need a
 * password of their own take it from `sentinel_password`.
 */
export type RedisTarget = RedisServerTarget | RedisClusterTarget | RedisSentinelTarget;

export interface RedisAddress {
  host: string;
  port: number;
}

interface Credentials {
  username?: string;
  password?: string;
  tls: boolean;
}

export interface RedisServerTarget {
  kind: 'server';
  /** The URL as given: ioredis reads it itself. */
  url: string;
}

export interface RedisClusterTarget extends Credentials {
  kind: 'cluster';
  /** Seed nodes: any reachable one tells the client where the others are. */
  nodes: RedisAddress[];
}

export interface RedisSentinelTarget extends Credentials {
  kind: 'sentinel';
  sentinels: RedisAddress[];
  masterName: string;
  db: number;
  sentinelPassword?: string;
}

export const REDIS_URL_RULE =
  'must be redis://host:port[/db], rediss://..., redis+cluster://host:port,host:port or ' +
  'redis+sentinel://host:port,host:port/master_name[/db]';

const DEFAULT_PORT = { server: 6379, sentinel: 26379 };

/** Reads a VOXGATE_REDIS_URL value; throws an Error saying what is wrong with it. */
export function parseRedisTarget(raw: string): RedisTarget {
  const scheme = /^([a-z+]+):\/\//i.exec(raw)?.[1]?.toLowerCase();
  if (scheme === 'redis' || scheme === 'rediss') {
    try {
      new URL(raw);
    } catch {
      throw new Error(REDIS_URL_RULE);
    }
    return { kind: 'server', url: raw };
  }
  const kind = scheme?.replace(/^rediss?\+/, '');
  if (kind !== 'cluster' && kind !== 'sentinel') throw new Error(REDIS_URL_RULE);
  const rest = raw.slice(scheme!.length + 3);
  const [beforeQuery = '', query = ''] = splitOnce(rest, '?');
  const [authority = '', path = ''] = splitOnce(beforeQuery, '/');
  const at = authority.lastIndexOf('@');
  const credentials = at < 0 ? '' : authority.slice(0, at);
  const hosts = at < 0 ? authority : authority.slice(at + 1);
  const [user = '', password = ''] = splitOnce(credentials, ':');
  const common: Credentials = {
    tls: scheme!.startsWith('rediss'),
    ...(user ? { username: decodeURIComponent(user) } : {}),
    ...(password ? { password: decodeURIComponent(password) } : {}),
  };
  const defaultPort = kind === 'cluster' ? DEFAULT_PORT.server : DEFAULT_PORT.sentinel;
  const addresses = hosts.split(',').map((h) => address(h.trim(), defaultPort));
  if (kind === 'cluster') {
    if (path !== '' || query !== '') throw new Error(`${REDIS_URL_RULE} (a cluster has no path)`);
    return { kind, nodes: addresses, ...common };
  }
  const [masterName = '', dbText = ''] = splitOnce(path, '/');
  if (!/^[A-Za-z0-9._-]+$/.test(masterName))
    throw new Error(`${REDIS_URL_RULE} (the master name is missing or invalid)`);
  if (dbText !== '' && !/^\d{1,2}$/.test(dbText))
    throw new Error(`${REDIS_URL_RULE} (the database must be a number)`);
  const params = new URLSearchParams(query);
  const sentinelPassword = params.get('sentinel_password');
  return {
    kind,
    sentinels: addresses,
    masterName,
    db: dbText === '' ? 0 : Number(dbText),
    ...common,
    ...(sentinelPassword ? { sentinelPassword } : {}),
  };
}

function address(text: string, defaultPort: number): RedisAddress {
  // host, host:port, [v6], [v6]:port
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(text);
  const port = match?.[2] === undefined ? defaultPort : Number(match[2]);
  if (!match || port < 1 || port > 65535)
    throw new Error(`${REDIS_URL_RULE} ("${text}" is not host:port)`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)];
}
