import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../support/free-port.js';
import { startRedis, TEST_SECRET_KEY, type RedisServer } from '../../support/redis-server.js';
import { SmscSimulator } from '../../support/smsc-simulator.js';
import { checkTlsFiles } from '../../../src/doctor/tls-checks.js';
import { runDoctor } from './doctor-run.js';
import { makeTestCertificate, type TestCertificate } from '../../support/tls-certificate.js';

/**
 * The doctor's checks of what the gateway talks to: Redis, the SMSC, the TLS files. Each runs
 * the doctor as a process on a configuration with loopback listeners on ports the system picks.
 */
describe('voxgate doctor against its peers', () => {
  let redis: RedisServer;
  let smsc: SmscSimulator;
  const certificates: TestCertificate[] = [];
  const base = {
    VOXGATE_HTTP_HOST: '127.0.0.1',
    VOXGATE_HTTP_PORT: '0',
    VOXGATE_SIP_PORT: '0',
    VOXGATE_SIP_WS_PORT: '0',
    VOXGATE_MEDIA_WORKERS: '1',
    VOXGATE_EXPECTED_CALLS: '10',
    VOXGATE_SECRET_KEY: TEST_SECRET_KEY,
  };

  beforeAll(async () => {
    [redis, smsc] = await Promise.all([
      startRedis(),
      SmscSimulator.start({ systemId: 'voxgate', password: 'pw135791' }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([redis?.stop(), smsc?.stop(), ...certificates.map((c) => c.remove())]);
  });

  const certificate = async (days: number) => {
    const made = await makeTestCertificate({ days });
    certificates.push(made);
    return made;
  };

  it('reaches Redis and warns, with exit status 0, that it keeps nothing on disk', async () => {
    // startRedis runs with `--save ''` and `--appendonly no`.
    const run = await runDoctor({ ...base, VOXGATE_REDIS_URL: redis.url });
    expect(run.status, run.stdout).toBe(0);
    expect(run.line('redis')).toMatch(
      new RegExp(`^ok {4}redis +redis://127\\.0\\.0\\.1:${redis.port} answers PING \\(Redis \\d`),
    );
    expect(run.line('redis-persistence')).toBe(
      'warn  redis-persistence appendonly no and no save: a restarted Redis comes back empty; ' +
        "set appendonly yes with appendfsync always (docs/redis-and-clusters.md, Redis: 'Nothing acknowledged is lost')",
    );
  });

  it('fails Redis without VOXGATE_SECRET_KEY, which the gateway would refuse to start on', async () => {
    const run = await runDoctor({ ...base, VOXGATE_SECRET_KEY: '', VOXGATE_REDIS_URL: redis.url });
    expect(run.status).toBe(1);
    expect(run.line('secret-key')).toBe(
      'FAIL  secret-key        VOXGATE_SECRET_KEY is unset: the gateway does not start on Redis ' +
        'without it; set 32 bytes (hex or base64), the same on every node (docs/operations.md, Secrets at rest)',
    );
    const keyed = await runDoctor({ ...base, VOXGATE_REDIS_URL: redis.url });
    expect(keyed.line('secret-key')).toMatch(/^ok {4}secret-key +VOXGATE_SECRET_KEY is set/);
    expect(keyed.stdout).not.toContain(TEST_SECRET_KEY);
  });

  it('tells snapshots alone and appendfsync everysec apart', async () => {
    const admin = new Redis(redis.url);
    try {
      await admin.config('SET', 'save', '3600 1');
      const snapshots = await runDoctor({ ...base, VOXGATE_REDIS_URL: redis.url });
      expect(snapshots.line('redis-persistence')).toMatch(
        /^warn {2}redis-persistence appendonly no, RDB snapshots only \(save 3600 1\): writes since the last snapshot are lost on a restart/,
      );
      await admin.config('SET', 'appendonly', 'yes');
      await admin.config('SET', 'appendfsync', 'everysec');
      const everysec = await runDoctor({ ...base, VOXGATE_REDIS_URL: redis.url });
      expect(everysec.line('redis-persistence')).toMatch(
        /^warn {2}redis-persistence appendonly yes with appendfsync everysec: a power cut may lose acknowledged writes; set appendfsync always/,
      );
    } finally {
      await admin.config('SET', 'appendonly', 'no');
      await admin.config('SET', 'save', '');
      admin.disconnect();
    }
  });

  it('fails an unreachable Redis without showing its password', async () => {
    const closed = await freePort();
    const run = await runDoctor({
      ...base,
      VOXGATE_REDIS_URL: `redis://:redis-pass-5678@127.0.0.1:${closed}/2`,
    });
    expect(run.status).toBe(1);
    expect(run.line('redis')).toMatch(
      new RegExp(
        `^FAIL  redis +cannot reach redis://127\\.0\\.0\\.1:${closed}/2 within 4 s \\(.*ECONNREFUSED.*\\): start Redis or correct VOXGATE_REDIS_URL$`,
      ),
    );
    expect(run.lines.map((l) => l.split(/\s+/)[1])).not.toContain('redis-persistence');
    expect(run.stdout + run.stderr).not.toContain('redis-pass-5678');
  });

  it('binds to the SMSC with good credentials and unbinds', async () => {
    const before = smsc.binds;
    const run = await runDoctor({ ...base, VOXGATE_SMPP_URL: smsc.url() });
    expect(run.status, run.stdout).toBe(0);
    expect(run.line('smpp:carrier1')).toBe(
      `ok    smpp:carrier1     smpp://127.0.0.1:${smsc.port} took a transceiver bind as ` +
        'system_id voxgate (SMSC simulator), then unbound',
    );
    expect(smsc.binds).toBe(before + 1);
    expect(smsc.sessions.size).toBe(0);
    expect(run.stdout).not.toContain('pw135791');
  });

  it('fails wrong SMPP credentials and a closed SMSC port, each without the password', async () => {
    const closed = await freePort();
    const run = await runDoctor({
      ...base,
      VOXGATE_SMPP_URL: [
        `smpp://voxgate:wrongpw1@127.0.0.1:${smsc.port}?name=wrong`,
        `smpp://voxgate:pw135791@127.0.0.1:${closed}?name=closed`,
      ].join(' '),
    });
    expect(run.status).toBe(1);
    expect(run.line('smpp:wrong')).toBe(
      `FAIL  smpp:wrong        smpp://127.0.0.1:${smsc.port} refused the bind as system_id ` +
        'voxgate: ESME_RINVPASWD (0x0000000e); check the system_id, password and system_type ' +
        'in VOXGATE_SMPP_URL',
    );
    expect(run.line('smpp:closed')).toMatch(
      new RegExp(
        `^FAIL  smpp:closed +cannot connect to smpp://127\\.0\\.0\\.1:${closed} \\(.*ECONNREFUSED.*\\): check the host and port in VOXGATE_SMPP_URL$`,
      ),
    );
    for (const secret of ['wrongpw1', 'pw135791'])
      expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it('fails a password no bind can carry as the gateway does: at the configuration', async () => {
    const run = await runDoctor({
      ...base,
      VOXGATE_SMPP_URL: `smpp://voxgate:far-too-long-password@127.0.0.1:${smsc.port}?name=long`,
    });
    expect(run.status).toBe(1);
    expect(run.lines[0]).toMatch(
      /^FAIL {2}config +.*the password must be at most 8 printable ASCII characters \(SMPP 3\.4\), got 21/,
    );
    expect(run.stdout + run.stderr).not.toContain('far-too-long-password');
  });

  it('fails a certificate that expires within 14 days', async () => {
    const soon = await certificate(5);
    const run = await runDoctor({
      ...base,
      VOXGATE_SIP_TLS_CERT: soon.certPath,
      VOXGATE_SIP_TLS_KEY: soon.keyPath,
      VOXGATE_SIP_TLS_PORT: '0',
    });
    expect(run.status).toBe(1);
    expect(run.line('tls-cert')).toMatch(
      new RegExp(
        `^FAIL  tls-cert +${soon.certPath} \\(CN=localhost\\) expires on \\S+, in [45] days \\(under 14\\): renew it and point VOXGATE_SIP_TLS_CERT and VOXGATE_SIP_TLS_KEY at the new files$`,
      ),
    );
    expect(run.line('tls-key')).toMatch(/^ok {4}tls-key/);
  });

  it('fails a certificate past its end or before its start', async () => {
    const made = await certificate(30);
    const files = { certFile: made.certPath, keyFile: made.keyPath };
    const day = 24 * 60 * 60 * 1000;
    const [late] = await checkTlsFiles(files, new Date(Date.now() + 31 * day));
    expect(late!.status).toBe('FAIL');
    expect(late!.message).toMatch(
      new RegExp(`^${made.certPath} \\(CN=localhost\\) expired on \\S+: renew it`),
    );
    const [early] = await checkTlsFiles(files, new Date(Date.now() - day));
    expect(early!.message).toMatch(/\(CN=localhost\) is not valid before \S+$/);
    const [fine] = await checkTlsFiles(files, new Date(Date.now() + 15 * day));
    expect(fine!.status).toBe('ok');
  });

  it('fails a key that is not the certificate’s, and a file that is not there', async () => {
    const [one, other] = await Promise.all([certificate(365), certificate(365)]);
    const run = await runDoctor({
      ...base,
      VOXGATE_SIP_TLS_CERT: one.certPath,
      VOXGATE_SIP_TLS_KEY: other.keyPath,
      VOXGATE_SIP_TLS_PORT: '0',
    });
    expect(run.status).toBe(1);
    expect(run.line('tls-cert')).toMatch(/^ok {4}tls-cert/);
    expect(run.line('tls-key')).toBe(
      `FAIL  tls-key           VOXGATE_SIP_TLS_KEY ${other.keyPath} is not the key of the ` +
        `certificate in VOXGATE_SIP_TLS_CERT ${one.certPath}: set the two files of one certificate`,
    );
    const missing = await runDoctor({
      ...base,
      VOXGATE_SIP_TLS_CERT: join(dirname(one.certPath), 'missing.pem'),
      VOXGATE_SIP_TLS_KEY: one.keyPath,
      VOXGATE_SIP_TLS_PORT: '0',
    });
    expect(missing.status).toBe(1);
    expect(missing.line('tls-cert')).toMatch(
      /^FAIL  tls-cert +VOXGATE_SIP_TLS_CERT \S+missing\.pem is not a readable PEM certificate \(ENOENT/,
    );
  });

  it('never shows the auth token or the operator token', async () => {
    const token = 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn7M';
    const operator = 'operator-token-that-is-long-enough';
    const run = await runDoctor({
      ...base,
      VOXGATE_AUTH_ID: 'MAABCDEFGHIJKLMNOPQR',
      VOXGATE_AUTH_TOKEN: token,
      VOXGATE_OPERATOR_TOKEN: operator,
      VOXGATE_SMPP_URL: smsc.url(),
    });
    expect(run.status, run.stdout).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(token);
    expect(run.stdout + run.stderr).not.toContain(operator);
  });
});
