import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../support/free-port.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startSippUas, type SippUas } from '../../support/sipp.js';
import { until } from '../../support/wait.js';
import { runDoctor } from './doctor-run.js';

/**
 * `doctor` on carriers with `register`: with the gateway running on the configured HTTP port
 * it reports each registration as the gateway's /metrics has it; without, what will register.
 */
describe('voxgate doctor on carrier registrations', () => {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-doctor-register-'));
  const file = join(dir, 'carriers.json');
  let registrar: SippUas;
  let refusing: SippUas;
  let gw: TestGateway | null = null;
  let env: Record<string, string>;

  beforeAll(async () => {
    [registrar, refusing] = await Promise.all([
      startSippUas({
        scenario: 'carrier-registrar.xml',
        variables: { registered: 'no', grant: '60', rtp_port: '9' },
      }),
      startSippUas({ scenario: 'registrar-refuse.xml' }),
    ]);
    const gateway = (uas: SippUas) => [{ host: '127.0.0.1', port: uas.port, transport: 'udp' }];
    writeFileSync(
      file,
      JSON.stringify({
        carriers: [
          {
            name: 'regco',
            gateways: gateway(registrar),
            auth: { username: 'carrieruser', password: 'Carrier-Pass1' },
            register: { expires: 600 },
          },
          { name: 'refused', gateways: gateway(refusing), register: { user: 'acct9' } },
        ],
      }),
    );
    env = {
      VOXGATE_HTTP_HOST: '127.0.0.1',
      VOXGATE_HTTP_PORT: String(await freePort()),
      VOXGATE_SIP_PORT: '0',
      VOXGATE_SIP_WS_PORT: '0',
      VOXGATE_MEDIA_WORKERS: '1',
      VOXGATE_CARRIERS_FILE: file,
    };
  });

  afterAll(async () => {
    await gw?.close();
    await Promise.all([registrar?.stop(), refusing?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('says what will register while no gateway runs', async () => {
    const run = await runDoctor(env);
    expect(run.line('register:regco')).toBe(
      'ok    register:regco    registers carrieruser with 127.0.0.1:' +
        `${registrar.port};transport=udp; the gateway is not running here: once it is, /metrics ` +
        'shows voxgate_carrier_registered{carrier="regco"}',
    );
    expect(run.line('register:refused')).toMatch(
      /^warn {2}register:refused +registers acct9 with .* \(no auth: a registrar that challenges refuses it\)/,
    );
    expect(run.stdout + run.stderr).not.toContain('Carrier-Pass1');
  }, 30_000);

  it("reports each registration from the running gateway's /metrics", async () => {
    gw = await startGateway({ listen: true, env });
    const registered = async () =>
      (await gw!.request('GET', '/metrics')).text.includes(
        'voxgate_carrier_registered{carrier="regco"} 1',
      );
    await until(registered, 5000);
    const run = await runDoctor(env);
    expect(run.line('register:regco')).toBe(
      `ok    register:regco    registered carrieruser with 127.0.0.1:${registrar.port};` +
        "transport=udp (the running gateway's /metrics)",
    );
    expect(run.line('register:refused')).toMatch(
      /^warn {2}register:refused +not registered acct9 with .*: \d+ failed attempts? so far \(no auth: .*\); the gateway's warn lines "carrier refused registration failed" say why$/,
    );
    expect(run.stdout + run.stderr).not.toContain('Carrier-Pass1');
  }, 30_000);
});
