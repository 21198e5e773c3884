import { afterEach, expect, it } from 'vitest';
import { PerlSmsc } from '../../support/perl-smsc.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';

const US = '14155550100';
const UK = '447400123456';
// In CI the peer must be there (scripts/setup --test installs it); elsewhere a missing package
// skips the test with its reason.
const missing = !PerlSmsc.available() && !process.env.CI;

let smsc: PerlSmsc | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  await smsc?.stop();
});

it.skipIf(missing)(
  'binds to Net::SMPP’s example SMSC, sends a message, keeps the link alive and unbinds',
  async () => {
    smsc = await PerlSmsc.start();
    gw = await startGateway({
      env: {
        VOXGATE_SMPP_URL: `smpp://GSMSGW:secret@127.0.0.1:${smsc.port}?enquire_link=1`,
      },
    });
    const base = `/v1/Account/${gw.main.id}`;
    await gw.request('POST', `${base}/Number/`, {
      json: { numbers: US, carrier: 'c', region: 'r' },
    });
    const res = await gw.request('POST', `${base}/Message/`, {
      json: { src: US, dst: UK, text: 'hello from voxgate' },
    });
    expect(res.status).toBe(202);
    const uuid = res.body.message_uuid[0];
    await until(async () => {
      const record = await gw!.gateway.state.messages.get(gw!.main.id, uuid);
      return record?.message_state === 'sent';
    }, 10_000);
    const record = await gw.gateway.state.messages.get(gw.main.id, uuid);
    expect(record!.parts[0]!.carrier_id).toBe('123456789');
    expect(smsc.log).toMatch(/Received #\d+ 9:bind_transceiver/);
    expect(smsc.log).toMatch(/Received #\d+ 4:submit_sm/);
    await until(() => /Received #\d+ 21:enquire_link/.test(smsc!.log), 5000);
    await gw.close();
    gw = undefined;
    await until(() => /Received #\d+ 6:unbind/.test(smsc!.log), 5000);
  },
);
