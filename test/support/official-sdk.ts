import type { AddressInfo } from 'node:net';
import type * as plivo from 'plivo';
import { voxgateSdkClient } from '../../src/sdk/plivo-client.js';
import type { Credentials, TestGateway } from './gateway.js';

/**
 * The official Node SDK (npm `plivo`) pointed at a listening test gateway the documented
 * way, through voxgateSdkClient: every request, voice ones included, goes to the gateway.
 */
export function officialSdk(gw: TestGateway, as: Credentials = gw.main): plivo.Client {
  const { port } = gw.gateway.app.server.address() as AddressInfo;
  return voxgateSdkClient({ url: `http://127.0.0.1:${port}`, authId: as.id, authToken: as.token });
}
