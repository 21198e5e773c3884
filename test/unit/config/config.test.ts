import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';

const ID = 'MA' + 'A1'.repeat(9);
const TOKEN = 'a'.repeat(40);

describe('loadConfig', () => {
  it('gives the runtime contract defaults with no configuration at all', () => {
    expect(loadConfig({})).toEqual({
      httpHost: '0.0.0.0',
      httpPort: 8080,
      sipPort: 5060,
      sipWsPort: 5066,
      sipHost: '0.0.0.0',
      sipTls: null,
      sipNonceLifetime: 300,
      sipMinExpires: 60,
      sipMaxExpires: 3600,
      sipDigestAlgorithms: ['MD5'],
      sipWsDigestAlgorithms: ['SHA-256', 'MD5'],
      sipMd5OnlyAgents: [],
      sipWsOrigins: null,
      sipTrace: false,
      sipOpus: true,
      opusComplexity: null,
      inboundCarriers: 'enforce',
      rtpPorts: { min: 20000, max: 29999 },
      rtpHost: '0.0.0.0',
      mediaWorkers: Math.max(1, availableParallelism() - 1),
      dtls: { certificateFiles: null, handshakeTimeoutMs: 10_000, consentTimeoutMs: 30_000 },
      realtimePriority: null,
      publicHost: '127.0.0.1',
      publicUrl: '',
      redisUrl: null,
      redisWaitForReplicas: false,
      storeStartWait: 60,
      dataDir: 'data',
      authId: null,
      authToken: null,
      carriers: {
        carriers: [],
        source: null,
        responseTimeoutMs: 4000,
        answerTimeoutMs: 0,
        probeIntervalMs: 0,
      },
      dnsServers: [],
      trunkResponseTimeout: 4,
      trunkAnswerTimeout: 0,
      trunkProbeInterval: 30,
      drainTimeout: 600,
      shutdownGrace: 3,
      limits: { calls: null, calls_per_second: null, streams: null, messages_per_second: null },
      nodeId: expect.stringMatching(/-\d+$/),
      heartbeat: { intervalMs: 1000, nodeTtlMs: 3000 },
      smppCarriers: [],
      messageRateDeck: 'fixtures/message-rate-deck.csv',
      smsSmartEncoding: false,
      smsPartTimeoutMs: 60_000,
      chatAppGraphUrl: 'https://graph.facebook.com/v21.0',
      chatAppTimeoutMs: 10_000,
      chatAppRetryMs: 30_000,
      mm7: null,
      operatorToken: null,
      secretKey: null,
      rateLimit: 100,
      rateDeck: 'fixtures/rate-deck.csv',
      streamRate: '0.00300',
      recordings: { retentionMs: 90 * 24 * 60 * 60 * 1000, ratePerMinute: '0.00000' },
      outboundProfile: 'self-hosted',
      logLevel: 'info',
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      VOXGATE_HTTP_PORT: '9000',
      VOXGATE_SIP_PORT: '5070',
      VOXGATE_SIP_WS_PORT: '5067',
      VOXGATE_RTP_PORTS: '30000-30100',
      VOXGATE_RTP_HOST: '10.0.0.5',
      VOXGATE_SIP_OPUS: 'false',
      VOXGATE_OPUS_COMPLEXITY: '0',
      VOXGATE_MEDIA_WORKERS: '3',
      VOXGATE_REALTIME_PRIORITY: '20',
      VOXGATE_PUBLIC_HOST: 'gw.example.com',
      VOXGATE_PUBLIC_URL: 'https://api.example.com/',
      VOXGATE_REDIS_URL: 'redis://10.0.0.1:6379/2',
      VOXGATE_AUTH_ID: ID,
      VOXGATE_AUTH_TOKEN: TOKEN,
      VOXGATE_CARRIER_URI: 'sip:carrier.example.com:5080',
      VOXGATE_DNS_SERVERS: '10.0.0.53, [2001:db8::53]:5353,127.0.0.1:5300',
      VOXGATE_TRUNK_RESPONSE_TIMEOUT: '2',
      VOXGATE_TRUNK_ANSWER_TIMEOUT: '20',
      VOXGATE_TRUNK_PROBE_INTERVAL: '0',
      VOXGATE_SHUTDOWN_GRACE: '0',
      VOXGATE_NODE_HEARTBEAT_MS: '250',
      VOXGATE_NODE_TTL_MS: '1000',
      VOXGATE_SMPP_URL:
        'smpp://sys:pw@smsc.example.com:2775 ssmpp://a%40b:p%2Fw@10.0.0.9:3550?name=eu&prefixes=44,+33&binds=2&window=50&mps=0&long=sar&enquire_link=5',
      VOXGATE_SMS_SMART_ENCODING: 'true',
      VOXGATE_CHATAPP_GRAPH_URL: 'http://graph.internal:8080/v19.0/',
      VOXGATE_CHATAPP_TIMEOUT: '3',
      VOXGATE_CHATAPP_RETRY: '5',
      VOXGATE_OPERATOR_TOKEN: 'operator-token-0123456789abcdef',
      VOXGATE_SECRET_KEY: 'ab'.repeat(32),
      VOXGATE_MMS_MM7_URL:
        'https://vasp%40x:p%2Fss@mmsc.example.com:8443/mm7/submit?vasp_id=acme&vas_id=alerts',
      VOXGATE_RATE_LIMIT: '0',
      VOXGATE_DATA_DIR: '',
      VOXGATE_RATE_DECK: 'fixtures/rate-deck.csv',
      VOXGATE_STREAM_RATE: '0.0045',
      VOXGATE_OUTBOUND_PROFILE: 'shared',
      VOXGATE_LIMIT_CALLS: '20',
      VOXGATE_LIMIT_CALLS_PER_SECOND: '0',
      VOXGATE_LIMIT_STREAMS: '5',
      VOXGATE_LIMIT_MESSAGES_PER_SECOND: '30',
    });
    expect(config).toMatchObject({
      httpPort: 9000,
      sipPort: 5070,
      sipWsPort: 5067,
      rtpPorts: { min: 30000, max: 30100 },
      rtpHost: '10.0.0.5',
      sipOpus: false,
      opusComplexity: 0,
      mediaWorkers: 3,
      realtimePriority: 20,
      publicHost: 'gw.example.com',
      publicUrl: 'https://api.example.com',
      redisUrl: 'redis://10.0.0.1:6379/2',
      authId: ID,
      authToken: TOKEN,
      carriers: expect.objectContaining({
        source: 'VOXGATE_CARRIER_URI',
        carriers: [
          expect.objectContaining({
            name: 'default',
            gateways: [
              { host: 'carrier.example.com', port: 5080, transport: null, priority: 0, weight: 1 },
            ],
            auth: null,
            prefixes: [''],
          }),
        ],
      }),
      dnsServers: ['10.0.0.53', '[2001:db8::53]:5353', '127.0.0.1:5300'],
      trunkResponseTimeout: 2,
      trunkAnswerTimeout: 20,
      trunkProbeInterval: 0,
      shutdownGrace: 0,
      heartbeat: { intervalMs: 250, nodeTtlMs: 1000 },
      smppCarriers: [
        {
          name: 'carrier1',
          host: 'smsc.example.com',
          port: 2775,
          tls: false,
          tlsInsecure: false,
          systemId: 'sys',
          password: 'pw',
          systemType: '',
          prefixes: [],
          binds: 1,
          window: 10,
          mps: 100,
          responseTimeoutMs: 10_000,
          enquireLinkMs: 30_000,
          longMessages: 'udh',
        },
        {
          name: 'eu',
          host: '10.0.0.9',
          port: 3550,
          tls: true,
          tlsInsecure: false,
          systemId: 'a@b',
          password: 'p/w',
          systemType: '',
          prefixes: ['44', '33'],
          binds: 2,
          window: 50,
          mps: 0,
          responseTimeoutMs: 10_000,
          enquireLinkMs: 5000,
          longMessages: 'sar',
        },
      ],
      smsSmartEncoding: true,
      chatAppGraphUrl: 'http://graph.internal:8080/v19.0',
      chatAppTimeoutMs: 3000,
      chatAppRetryMs: 5000,
      operatorToken: 'operator-token-0123456789abcdef',
      secretKey: 'ab'.repeat(32),
      mm7: {
        url: 'https://mmsc.example.com:8443/mm7/submit',
        username: 'vasp@x',
        password: 'p/ss',
        vaspId: 'acme',
        vasId: 'alerts',
      },
      rateLimit: 0,
      dataDir: null,
      rateDeck: 'fixtures/rate-deck.csv',
      streamRate: '0.0045',
      outboundProfile: 'shared',
      limits: { calls: 20, calls_per_second: null, streams: 5, messages_per_second: 30 },
    });
  });

  const bad: [Record<string, string>, string][] = [
    [
      { VOXGATE_LIMIT_CALLS: '-5' },
      'VOXGATE_LIMIT_CALLS="-5" is invalid: must be a whole number of at least 0',
    ],
    [
      { VOXGATE_OUTBOUND_PROFILE: 'public' },
      'VOXGATE_OUTBOUND_PROFILE="public" is invalid: must be one of self-hosted, shared',
    ],
    [
      { VOXGATE_HTTP_PORT: '80a' },
      'VOXGATE_HTTP_PORT="80a" is invalid: must be a port number from 1 to 65535, or 0 for any',
    ],
    [
      { VOXGATE_SIP_PORT: '70000' },
      'VOXGATE_SIP_PORT="70000" is invalid: must be a port number from 1 to 65535, or 0 for any',
    ],
    [
      { VOXGATE_RTP_PORTS: '3000-2000' },
      'VOXGATE_RTP_PORTS="3000-2000" is invalid: must be two port numbers MIN-MAX with 1024 <= MIN < MAX <= 65535',
    ],
    [
      { VOXGATE_SIP_TLS_CERT: 'cert.pem' },
      'VOXGATE_SIP_TLS_KEY="" is invalid: must be set together with the other of VOXGATE_SIP_TLS_CERT and VOXGATE_SIP_TLS_KEY',
    ],
    [
      { VOXGATE_MEDIA_WORKERS: '0' },
      'VOXGATE_MEDIA_WORKERS="0" is invalid: must be a whole number of at least 1',
    ],
    [
      { VOXGATE_STORE_START_WAIT: '1.5' },
      'VOXGATE_STORE_START_WAIT="1.5" is invalid: must be a whole number of at least 0',
    ],
    [
      { VOXGATE_REALTIME_PRIORITY: '100' },
      'VOXGATE_REALTIME_PRIORITY="100" is invalid: must be a whole number from 0 (off) to 99',
    ],
    [
      { VOXGATE_REALTIME_PRIORITY: 'rr' },
      'VOXGATE_REALTIME_PRIORITY="rr" is invalid: must be a whole number from 0 (off) to 99',
    ],
    [
      { VOXGATE_SIP_MIN_EXPIRES: '0' },
      'VOXGATE_SIP_MIN_EXPIRES="0" is invalid: must be a whole number of at least 1',
    ],
    [
      { VOXGATE_SIP_MIN_EXPIRES: '600', VOXGATE_SIP_MAX_EXPIRES: '300' },
      'VOXGATE_SIP_MAX_EXPIRES="300" is invalid: must not be below VOXGATE_SIP_MIN_EXPIRES (600)',
    ],
    [{ VOXGATE_SIP_TRACE: 'yes' }, 'VOXGATE_SIP_TRACE="yes" is invalid: must be true or false'],
    [{ VOXGATE_SIP_OPUS: 'off' }, 'VOXGATE_SIP_OPUS="off" is invalid: must be true or false'],
    [
      { VOXGATE_OPUS_COMPLEXITY: '11' },
      'VOXGATE_OPUS_COMPLEXITY="11" is invalid: must be a whole number from 0 to 10',
    ],
    [
      { VOXGATE_OPUS_COMPLEXITY: '-1' },
      'VOXGATE_OPUS_COMPLEXITY="-1" is invalid: must be a whole number from 0 to 10',
    ],
    [
      { VOXGATE_OPUS_COMPLEXITY: 'low' },
      'VOXGATE_OPUS_COMPLEXITY="low" is invalid: must be a whole number from 0 to 10',
    ],
    [
      { VOXGATE_INBOUND_CARRIERS: 'strict' },
      'VOXGATE_INBOUND_CARRIERS="strict" is invalid: must be enforce or open',
    ],
    [
      { VOXGATE_SIP_WS_DIGEST_ALGORITHMS: 'SHA-512-256' },
      'VOXGATE_SIP_WS_DIGEST_ALGORITHMS="SHA-512-256" is invalid: must be SHA-256 and/or MD5, comma-separated, most preferred first',
    ],
    [
      { VOXGATE_SIP_WS_ORIGINS: 'https://app.example.com/phone' },
      'VOXGATE_SIP_WS_ORIGINS="https://app.example.com/phone" is invalid: must be comma-separated origins such as https://app.example.com (scheme://host[:port])',
    ],
    [
      { VOXGATE_SIP_WS_ORIGINS: 'app.example.com' },
      'VOXGATE_SIP_WS_ORIGINS="app.example.com" is invalid: must be comma-separated origins',
    ],
    [
      { VOXGATE_SIP_WS_ORIGINS: 'https://a.example,ftp://b.example' },
      'VOXGATE_SIP_WS_ORIGINS="https://a.example,ftp://b.example" is invalid: must be comma-separated origins',
    ],
    [
      { VOXGATE_REDIS_URL: 'http://x' },
      'VOXGATE_REDIS_URL="http://x" is invalid: must be redis://host:port[/db], rediss://...',
    ],
    [
      { VOXGATE_CARRIER_URI: 'carrier' },
      'VOXGATE_CARRIER_URI="carrier" is invalid: must be a SIP URI sip:[user:password@]host[:port] (sips: for TLS)',
    ],
    [
      { VOXGATE_SMPP_URL: 'smpp//x' },
      'VOXGATE_SMPP_URL="smpp//x" is invalid: each carrier must be a URL smpp://system_id:password@host:port',
    ],
    [
      { VOXGATE_SMPP_URL: 'smpp://sys:secret@smsc:2775?window=0' },
      'VOXGATE_SMPP_URL="smpp://sys:***@smsc:2775?window=0" is invalid: window must be a whole number from 1 to 1000',
    ],
    [
      { VOXGATE_SMPP_URL: 'smpp://sys:far-too-long@smsc:2775' },
      'VOXGATE_SMPP_URL="smpp://sys:***@smsc:2775" is invalid: the password must be at most 8 printable ASCII characters (SMPP 3.4), got 12',
    ],
    [
      { VOXGATE_PUBLIC_HOST: 'bad host' },
      'VOXGATE_PUBLIC_HOST="bad host" is invalid: must be a host name or an IP address',
    ],
    [
      { VOXGATE_AUTH_ID: 'MA123', VOXGATE_AUTH_TOKEN: TOKEN },
      'VOXGATE_AUTH_ID="MA123" is invalid: must be MA followed by 18 upper-case letters or digits',
    ],
    [
      { VOXGATE_AUTH_ID: ID },
      'VOXGATE_AUTH_TOKEN="" is invalid: must be set together with the other of VOXGATE_AUTH_ID and VOXGATE_AUTH_TOKEN',
    ],
    [
      { VOXGATE_SECRET_KEY: 'not-a-key-0123456789' },
      'VOXGATE_SECRET_KEY="(hidden)" is invalid: must be 32 bytes as 64 hex digits or as base64 (e.g. the output of `openssl rand -hex 32`)',
    ],
    [
      { VOXGATE_RATE_LIMIT: '-1' },
      'VOXGATE_RATE_LIMIT="-1" is invalid: must be a whole number of requests per second (0 turns it off)',
    ],
    [
      { VOXGATE_DNS_SERVERS: 'dns.example.com' },
      'VOXGATE_DNS_SERVERS="dns.example.com" is invalid: must be IP addresses, each with an optional :port, comma-separated',
    ],
    [
      { VOXGATE_TRUNK_RESPONSE_TIMEOUT: '0' },
      'VOXGATE_TRUNK_RESPONSE_TIMEOUT="0" is invalid: must be a whole number of at least 1',
    ],
    [
      { VOXGATE_NODE_HEARTBEAT_MS: '0' },
      'VOXGATE_NODE_HEARTBEAT_MS="0" is invalid: must be a whole number of milliseconds from 250 to 60000',
    ],
    [
      { VOXGATE_NODE_HEARTBEAT_MS: '249' },
      'VOXGATE_NODE_HEARTBEAT_MS="249" is invalid: must be a whole number of milliseconds from 250 to 60000',
    ],
    [
      { VOXGATE_NODE_HEARTBEAT_MS: '1s' },
      'VOXGATE_NODE_HEARTBEAT_MS="1s" is invalid: must be a whole number of milliseconds from 250 to 60000',
    ],
    [
      { VOXGATE_NODE_HEARTBEAT_MS: '60001', VOXGATE_NODE_TTL_MS: '600000' },
      'VOXGATE_NODE_HEARTBEAT_MS="60001" is invalid: must be a whole number of milliseconds from 250 to 60000',
    ],
    [
      { VOXGATE_NODE_TTL_MS: '999', VOXGATE_NODE_HEARTBEAT_MS: '250' },
      'VOXGATE_NODE_TTL_MS="999" is invalid: must be a whole number of milliseconds from 1000 to 600000',
    ],
    [
      { VOXGATE_NODE_TTL_MS: '3000.5' },
      'VOXGATE_NODE_TTL_MS="3000.5" is invalid: must be a whole number of milliseconds from 1000 to 600000',
    ],
    [
      { VOXGATE_NODE_TTL_MS: '600001' },
      'VOXGATE_NODE_TTL_MS="600001" is invalid: must be a whole number of milliseconds from 1000 to 600000',
    ],
    [
      { VOXGATE_NODE_HEARTBEAT_MS: '1000', VOXGATE_NODE_TTL_MS: '1999' },
      'VOXGATE_NODE_TTL_MS="1999" is invalid: must be at least twice VOXGATE_NODE_HEARTBEAT_MS (1000): one late beat must not make a live node dead',
    ],
    [
      { VOXGATE_NODE_TTL_MS: '1500' },
      'VOXGATE_NODE_TTL_MS="1500" is invalid: must be at least twice VOXGATE_NODE_HEARTBEAT_MS (1000)',
    ],
    [
      { VOXGATE_NODE_HEARTBEAT_MS: '2000' },
      'VOXGATE_NODE_HEARTBEAT_MS="2000" is invalid: must be at most half of VOXGATE_NODE_TTL_MS (3000, its default): set that to twice this or more',
    ],
    [
      { VOXGATE_LOG_LEVEL: 'loud' },
      'VOXGATE_LOG_LEVEL="loud" is invalid: must be one of fatal, error, warn, info, debug, trace, silent',
    ],
  ];
  it.each(bad)('stops on %j naming the variable and the rule', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads the SIP digest lists, the User-Agent override and the WebSocket origins', () => {
    const config = loadConfig({
      VOXGATE_SIP_DIGEST_ALGORITHMS: 'sha-256, md5',
      VOXGATE_SIP_WS_DIGEST_ALGORITHMS: 'SHA-256',
      VOXGATE_SIP_MD5_ONLY_AGENTS: 'OldPhone, Acme-SIP ',
      VOXGATE_SIP_WS_ORIGINS:
        'https://App.Example.com:443, http://localhost:5173,https://app.example.com',
    });
    expect(config).toMatchObject({
      sipDigestAlgorithms: ['SHA-256', 'MD5'],
      sipWsDigestAlgorithms: ['SHA-256'],
      sipMd5OnlyAgents: ['oldphone', 'acme-sip'],
      // As browsers send them: lower case, without the default port, once each.
      sipWsOrigins: ['https://app.example.com', 'http://localhost:5173'],
    });
  });

  it('takes a node time to live of twice the heartbeat interval, with either left to its default', () => {
    const heartbeat = (env: Record<string, string>) => loadConfig(env).heartbeat;
    expect(heartbeat({ VOXGATE_NODE_HEARTBEAT_MS: '500', VOXGATE_NODE_TTL_MS: '1000' })).toEqual({
      intervalMs: 500,
      nodeTtlMs: 1000,
    });
    expect(heartbeat({ VOXGATE_NODE_HEARTBEAT_MS: '1500' })).toEqual({
      intervalMs: 1500,
      nodeTtlMs: 3000,
    });
    expect(heartbeat({ VOXGATE_NODE_TTL_MS: '10000' })).toEqual({
      intervalMs: 1000,
      nodeTtlMs: 10_000,
    });
    // Empty is unset, as for every variable.
    expect(heartbeat({ VOXGATE_NODE_HEARTBEAT_MS: '', VOXGATE_NODE_TTL_MS: '' })).toEqual({
      intervalMs: 1000,
      nodeTtlMs: 3000,
    });
    expect(
      heartbeat({ VOXGATE_NODE_HEARTBEAT_MS: '60000', VOXGATE_NODE_TTL_MS: '600000' }),
    ).toEqual({ intervalMs: 60_000, nodeTtlMs: 600_000 });
    expect(heartbeat({ VOXGATE_NODE_HEARTBEAT_MS: '250', VOXGATE_NODE_TTL_MS: '1000' })).toEqual({
      intervalMs: 250,
      nodeTtlMs: 1000,
    });
  });

  it('takes a real-time priority of 0 (and 00) as off', () => {
    expect(loadConfig({ VOXGATE_REALTIME_PRIORITY: '0' }).realtimePriority).toBeNull();
    expect(loadConfig({ VOXGATE_REALTIME_PRIORITY: '00' }).realtimePriority).toBeNull();
    expect(loadConfig({ VOXGATE_REALTIME_PRIORITY: '1' }).realtimePriority).toBe(1);
  });

  it('refuses a stream rate that is not a decimal number', () => {
    expect(() => loadConfig({ VOXGATE_STREAM_RATE: '3 cents' })).toThrow(/VOXGATE_STREAM_RATE/);
  });

  it('stops on a rate deck that is not a readable file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'voxgate-config-'));
    for (const path of [join(dir, 'missing.csv'), dir]) {
      expect(() => loadConfig({ VOXGATE_RATE_DECK: path })).toThrow(
        `VOXGATE_RATE_DECK=${JSON.stringify(path)} is invalid: must be the path of a readable file`,
      );
    }
  });

  it('never repeats the MM7 password in its message', () => {
    for (const raw of [
      'ftp://u:secret-pw@h/',
      'http://mmsc.example.com/mm7',
      'not a url secret-pw',
    ])
      expect(() => loadConfig({ VOXGATE_MMS_MM7_URL: raw })).toThrow(
        'VOXGATE_MMS_MM7_URL="(hidden)" is invalid: must be http(s)://user:password@host',
      );
    try {
      loadConfig({ VOXGATE_MMS_MM7_URL: 'ftp://u:secret-pw@h/' });
    } catch (error) {
      expect((error as Error).message).not.toContain('secret-pw');
    }
  });

  it('never repeats a bad auth token in its message', () => {
    const secret = 'short-secret-token';
    expect(() => loadConfig({ VOXGATE_AUTH_ID: ID, VOXGATE_AUTH_TOKEN: secret })).toThrow(
      'VOXGATE_AUTH_TOKEN="<redacted>" is invalid: must be 40 letters or digits',
    );
  });

  it('takes defaults from a JSON file, with the environment winning', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'voxgate-config-')), 'voxgate.json');
    writeFileSync(file, JSON.stringify({ VOXGATE_HTTP_PORT: 9100, VOXGATE_SIP_PORT: 5090 }));
    const config = loadConfig({ VOXGATE_CONFIG_FILE: file, VOXGATE_SIP_PORT: '5091' });
    expect(config.httpPort).toBe(9100);
    expect(config.sipPort).toBe(5091);
    writeFileSync(file, JSON.stringify({ HTTP_PORT: 1 }));
    expect(() => loadConfig({ VOXGATE_CONFIG_FILE: file })).toThrow(
      'may only set VOXGATE_* names, found HTTP_PORT',
    );
  });
});
