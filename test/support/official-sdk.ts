import type { AddressInfo } from 'node:net';
import * as plivo from 'plivo';
import type { Credentials, TestGateway } from './gateway.js';

/**
 * The official Node SDK (npm `plivo`) pointed at a listening test gateway through its `url`
 * option, the account base URL that every request outside voice is made against.
 */
export function officialSdk(gw: TestGateway, as: Credentials = gw.main): plivo.Client {
  const { port } = gw.gateway.app.server.address() as AddressInfo;
  return new plivo.Client(as.id, as.token, {
    url: `http://127.0.0.1:${port}/v1/Account/${as.id}`,
  });
}
