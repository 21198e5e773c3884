import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawnGateway } from '../../support/gateway-process.js';
import { freePort } from '../../support/free-port.js';
import { startRedis, TEST_SECRET_KEY, type RedisServer } from '../../support/redis-server.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { runDoctor } from './doctor-run.js';
import { makeTestCertificate, type TestCertificate } from '../../support/tls-certificate.js';

const AUTH_ID = 'MA' + 'D0C70RAAAAAAAAAAAA';
const AUTH_TOKEN = 'doctorTokenNeverPrinted0123456789abcdefg'.slice(0, 40);

describe('voxgate doctor, run as its own process', () => {
  let redis: RedisServer;
  let smsc: SmscSimulator;
  let certificate: TestCertificate;
  /** A configuration where every check passes (its ports are set before each test). */
  let good: Record<string, string>;

  beforeAll(async () => {
    [redis, smsc, certificate] = await Promise.all([
      startRedis(),
      SmscSimulator.start({ systemId: 'voxgate', password: 'smpp2468' }),
      makeTestCertificate({ days: 365 }),
    ]);
    // As the Redis document (docs/redis-and-clusters.md) asks: every acknowledged write on disk.
    const admin = new Redis(redis.url);
    await admin.config('SET', 'appendonly', 'yes');
    await admin.config('SET', 'appendfsync', 'always');
    admin.disconnect();
    good = {
      VOXGATE_HTTP_HOST: '127.0.0.1',
      VOXGATE_SIP_TLS_CERT: certificate.certPath,
      VOXGATE_SIP_TLS_KEY: certificate.keyPath,
      VOXGATE_MEDIA_WORKERS: '1',
      VOXGATE_EXPECTED_CALLS: '10',
      VOXGATE_REDIS_URL: redis.url,
      VOXGATE_SECRET_KEY: TEST_SECRET_KEY,
      VOXGATE_SMPP_URL: smsc.url('name=simulator'),
      VOXGATE_AUTH_ID: AUTH_ID,
      VOXGATE_AUTH_TOKEN: AUTH_TOKEN,
    };
  });

  // Ports found free when the file started could be handed to another test's listen(0) by the
  // time a later test runs: each test gets ports found free just before it.
  beforeEach(async () => {
    good = {
      ...good,
      VOXGATE_HTTP_PORT: String(await freePort()),
      VOXGATE_SIP_PORT: String(await freePort()),
      VOXGATE_SIP_WS_PORT: String(await freePort()),
      VOXGATE_SIP_TLS_PORT: String(await freePort()),
    };
  });

  afterAll(async () => {
    await Promise.all([redis?.stop(), smsc?.stop(), certificate?.remove()]);
  });

  it('passes a good configuration with one ok line per check and exit status 0', async () => {
    const run = await runDoctor(good);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const names = run.lines.slice(0, -1).map((l) => l.split(/\s+/)[1]);
    expect(names).toEqual([
      'config',
      'http',
      'sip-udp',
      'sip-tcp',
      'sip-wss',
      'sip-tls',
      'rtp-range',
      'media-workers',
      'public-host',
      'inbound-carriers',
      'tls-cert',
      'tls-key',
      'redis',
      'redis-persistence',
      'secret-key',
      'smpp:simulator',
      'espeak-ng',
      'ffmpeg',
    ]);
    for (const line of run.lines.slice(0, -1)) expect(line).toMatch(/^ok {4}/);
    expect(run.line('http')).toContain(`TCP 127.0.0.1:${good.VOXGATE_HTTP_PORT} is free`);
    expect(run.line('sip-udp')).toContain(`UDP 127.0.0.1:${good.VOXGATE_SIP_PORT} is free`);
    expect(run.line('rtp-range')).toContain(
      'VOXGATE_RTP_PORTS 20000-29999 holds 5000 pairs; 1 media worker keeping 32 bound ahead ' +
        'and 10 expected calls of up to 2 legs need 52',
    );
    expect(run.line('public-host')).toContain(
      'VOXGATE_PUBLIC_HOST is 127.0.0.1 and SIP listens on 127.0.0.1',
    );
    expect(run.line('inbound-carriers')).toContain(
      "calls to numbers are taken from their IncomingCarrier's IP set only",
    );
    expect(run.line('tls-cert')).toMatch(/\(CN=localhost\) is valid until .* \(36[45] days\)/);
    expect(run.line('tls-key')).toContain('is the private key of the certificate');
    expect(run.line('redis')).toMatch(/redis:\/\/127\.0\.0\.1:\d+ answers PING \(Redis \d/);
    expect(run.line('redis-persistence')).toContain('appendonly yes, appendfsync always');
    expect(run.line('smpp:simulator')).toContain(
      `smpp://127.0.0.1:${smsc.port} took a transceiver bind as system_id voxgate ` +
        '(SMSC simulator), then unbound',
    );
    expect(run.line('espeak-ng')).toMatch(/^ok {4}espeak-ng +\/\S*espeak-ng: /);
    expect(run.lines.at(-1)).toBe('voxgate doctor: 18 ok, 0 warn, 0 FAIL');
    // The bind was undone: the simulator holds no session from the doctor.
    expect(smsc.sessions.size).toBe(0);
  });

  it('fails a port held by a foreign listener, naming the setting', async () => {
    const foreign: Server = createServer((socket) => socket.end('HELLO\r\n'));
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    const port = (foreign.address() as { port: number }).port;
    const udp: UdpSocket = createSocket('udp4');
    const udpPort = await freePort();
    await new Promise<void>((resolve) => udp.bind(udpPort, '127.0.0.1', resolve));
    try {
      const run = await runDoctor({
        ...good,
        VOXGATE_HTTP_PORT: String(port),
        VOXGATE_SIP_PORT: String(udpPort),
      });
      expect(run.status).toBe(1);
      expect(run.line('http')).toBe(
        `FAIL  http              TCP 127.0.0.1:${port} is held by another program (GET /health ` +
          'does not answer as voxgate): stop it or change VOXGATE_HTTP_PORT',
      );
      expect(run.line('sip-udp')).toBe(
        `FAIL  sip-udp           UDP 127.0.0.1:${udpPort} is held by another program (it does ` +
          'not answer SIP OPTIONS over UDP): stop it or change VOXGATE_SIP_PORT',
      );
      expect(run.line('sip-tcp')).toMatch(/^ok {4}sip-tcp/);
      expect(run.lines.at(-1), run.stdout).toMatch(/, 2 FAIL$/);
    } finally {
      foreign.close();
      udp.close();
    }
  });

  it('fails two listeners given one port', async () => {
    const run = await runDoctor({ ...good, VOXGATE_SIP_WS_PORT: good.VOXGATE_HTTP_PORT! });
    expect(run.status).toBe(1);
    expect(run.line('sip-wss')).toBe(
      `FAIL  sip-wss           port ${good.VOXGATE_HTTP_PORT} is also VOXGATE_HTTP_PORT's ` +
        '(http): give VOXGATE_SIP_WS_PORT a port of its own',
    );
  });

  it('takes ports answered by a running voxgate for its own', async () => {
    const sipPort = await freePort();
    const wsPort = await freePort();
    const env = {
      VOXGATE_SIP_HOST: '127.0.0.1',
      VOXGATE_SIP_PORT: String(sipPort),
      VOXGATE_SIP_WS_PORT: String(wsPort),
      VOXGATE_DATA_DIR: '',
      VOXGATE_MEDIA_WORKERS: '1',
      VOXGATE_AUTH_ID: AUTH_ID,
      VOXGATE_AUTH_TOKEN: AUTH_TOKEN,
      VOXGATE_LOG_LEVEL: 'warn',
    };
    const gateway = await spawnGateway(env);
    try {
      await gateway.healthy();
      const run = await runDoctor({
        ...env,
        VOXGATE_HTTP_HOST: '127.0.0.1',
        VOXGATE_HTTP_PORT: String(gateway.port),
      });
      expect(run.status, run.stdout).toBe(0);
      expect(run.line('http')).toBe(
        `ok    http              TCP 127.0.0.1:${gateway.port} is answered by a running voxgate ` +
          '(GET /health: ok)',
      );
      for (const [name, transport, port] of [
        ['sip-udp', 'UDP', sipPort],
        ['sip-tcp', 'TCP', sipPort],
        ['sip-ws', 'WS', wsPort],
      ] as const)
        expect(run.line(name)).toBe(
          `ok    ${name.padEnd(17)} ${transport === 'UDP' ? 'UDP' : 'TCP'} 127.0.0.1:${port} is ` +
            `answered by a running voxgate (SIP OPTIONS answered over ${transport}; voxgate on ` +
            `VOXGATE_HTTP_PORT ${gateway.port})`,
        );
    } finally {
      await gateway.stop();
    }
  });

  it('fails an RTP range too small for the media workers and the expected calls', async () => {
    const run = await runDoctor({
      ...good,
      VOXGATE_RTP_PORTS: '20000-20099',
      VOXGATE_MEDIA_WORKERS: '1',
      VOXGATE_EXPECTED_CALLS: '20',
    });
    expect(run.status).toBe(1);
    expect(run.line('rtp-range')).toBe(
      'FAIL  rtp-range         VOXGATE_RTP_PORTS 20000-20099 holds 50 RTP/RTCP port pairs; 1 ' +
        'media worker keeping 32 bound ahead and 20 expected calls of up to 2 legs need 72: ' +
        'widen VOXGATE_RTP_PORTS (or lower VOXGATE_MEDIA_WORKERS or VOXGATE_EXPECTED_CALLS)',
    );
  });

  const publicAddress = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === 'IPv4')?.address;

  it.skipIf(!publicAddress)(
    'fails a loopback VOXGATE_PUBLIC_HOST while SIP listens on a public address',
    async () => {
      const run = await runDoctor({
        ...good,
        VOXGATE_SIP_HOST: publicAddress!,
        VOXGATE_PUBLIC_HOST: '127.0.0.1',
      });
      expect(run.status).toBe(1);
      expect(run.line('public-host')).toBe(
        `FAIL  public-host       VOXGATE_PUBLIC_HOST is 127.0.0.1, a loopback address, while SIP ` +
          `listens on ${publicAddress}: peers elsewhere would send audio and requests to ` +
          'themselves; set VOXGATE_PUBLIC_HOST to the address they reach this machine at',
      );
      // Unset, it is the default and only a warning: exit status 0 on that alone.
      const unset = await runDoctor({ ...good, VOXGATE_SIP_HOST: publicAddress! });
      expect(unset.line('public-host')).toMatch(
        /^warn {2}public-host +VOXGATE_PUBLIC_HOST is unset \(so 127\.0\.0\.1\) while SIP listens/,
      );
      expect(unset.status, unset.stdout).toBe(0);
    },
  );

  it('fails a missing espeak-ng when run with a PATH without it', async () => {
    const bin = await mkdtemp(join(tmpdir(), 'voxgate-doctor-path-'));
    try {
      const ffmpeg = (await runDoctor(good)).line('ffmpeg').split(/\s+/)[2]!.replace(/:$/, '');
      await symlink(ffmpeg, join(bin, 'ffmpeg'));
      const run = await runDoctor({ ...good, PATH: bin });
      expect(run.status).toBe(1);
      expect(run.line('espeak-ng')).toBe(
        'FAIL  espeak-ng         espeak-ng is not on PATH: Speak (answer XML, and POST Speak/ on ' +
          'a live call) cannot be rendered; install it (Debian package espeak-ng, as ' +
          "scripts/setup does) or add its directory to the gateway's PATH",
      );
      expect(run.line('ffmpeg')).toMatch(
        new RegExp(`^ok {4}ffmpeg +${bin}/ffmpeg: ffmpeg version`),
      );
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });

  it('stops at a configuration the gateway would refuse, with its message', async () => {
    const bad = await runDoctor({ ...good, VOXGATE_RTP_PORTS: '20000' });
    expect(bad.status).toBe(1);
    expect(bad.lines).toEqual([
      'FAIL  config            VOXGATE_RTP_PORTS="20000" is invalid: must be two port numbers ' +
        'MIN-MAX with 1024 <= MIN < MAX <= 65535',
    ]);
    const calls = await runDoctor({ ...good, VOXGATE_EXPECTED_CALLS: 'many' });
    expect(calls.status).toBe(1);
    expect(calls.lines).toEqual([
      'FAIL  config            VOXGATE_EXPECTED_CALLS="many" is invalid: must be a whole number ' +
        'of at least 1',
    ]);
  });
});
