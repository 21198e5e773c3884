import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { readDoctorInput } from '../../../src/doctor/doctor-input.js';
import { secretsOf } from '../../../src/doctor/doctor-report.js';

describe('what the doctor reads', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('is the gateway configuration, with the file under the environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'voxgate-doctor-'));
    dirs.push(dir);
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({ VOXGATE_PUBLIC_HOST: '127.0.0.1', VOXGATE_EXPECTED_CALLS: 40 }),
    );
    const env = { VOXGATE_CONFIG_FILE: file, VOXGATE_SIP_PORT: '5070', PATH: '/bin' };
    const input = readDoctorInput(env);
    expect(input.config).toEqual(loadConfig(env));
    // Given in the file, though equal to the default.
    expect(input.publicHostSet).toBe(true);
    expect(input.expectedCalls).toBe(40);
    expect(input.configFile).toBe(file);
    expect(input.path).toBe('/bin');
    expect(
      readDoctorInput({ VOXGATE_CONFIG_FILE: file, VOXGATE_EXPECTED_CALLS: '7' }),
    ).toMatchObject({ expectedCalls: 7 });
    expect(readDoctorInput({})).toMatchObject({ publicHostSet: false, expectedCalls: 100 });
  });

  it('throws the gateway configuration error', () => {
    expect(() => readDoctorInput({ VOXGATE_SIP_PORT: 'x' })).toThrow(ConfigError);
  });

  it('knows every secret of the configuration', () => {
    const config = loadConfig({
      VOXGATE_AUTH_ID: 'MAABCDEFGHIJKLMNOPQR',
      VOXGATE_AUTH_TOKEN: 'a'.repeat(40),
      VOXGATE_OPERATOR_TOKEN: 'o'.repeat(24),
      VOXGATE_REDIS_URL:
        'redis+sentinel://user:redis%40pw@10.0.0.1:26379/mymaster?sentinel_password=sentinel-pw',
      VOXGATE_SMPP_URL: 'smpp://id:smpp-pw@10.0.0.2:2775',
      VOXGATE_MMS_MM7_URL: 'https://vasp:mm7-pw@mmsc.example.com/mm7',
      VOXGATE_CARRIER_URI: 'sip:trunk:carrier-pw@carrier.example.com',
    });
    expect(secretsOf(config).sort()).toEqual(
      [
        'a'.repeat(40),
        'o'.repeat(24),
        'redis@pw',
        'sentinel-pw',
        'smpp-pw',
        'mm7-pw',
        'carrier-pw',
      ].sort(),
    );
  });
});
