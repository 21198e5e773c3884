import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { checkInboundCarriers } from '../../../src/doctor/inbound-carriers-check.js';

describe('the inbound carriers check', () => {
  it('is ok when calls to numbers are checked against their carriers (the default)', () => {
    expect(checkInboundCarriers(loadConfig({ VOXGATE_SIP_HOST: '0.0.0.0' }))).toMatchObject({
      status: 'ok',
      name: 'inbound-carriers',
    });
  });

  it('warns when the check is off and SIP listens beyond private networks', () => {
    for (const host of ['0.0.0.0', '::', '203.0.113.9']) {
      const config = loadConfig({ VOXGATE_SIP_HOST: host, VOXGATE_INBOUND_CARRIERS: 'open' });
      const result = checkInboundCarriers(config);
      expect(result.status, host).toBe('warn');
      expect(result.message).toContain(
        `VOXGATE_INBOUND_CARRIERS=open while SIP listens on ${host}`,
      );
    }
  });

  it('lets the check be off on loopback and private addresses', () => {
    for (const host of ['127.0.0.1', '10.1.2.3', '192.168.1.20', '172.20.0.5', '::1']) {
      const config = loadConfig({ VOXGATE_SIP_HOST: host, VOXGATE_INBOUND_CARRIERS: 'open' });
      expect(checkInboundCarriers(config).status, host).toBe('ok');
    }
  });
});
