import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { Socket, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { voxgateSdkClient } from '../../../src/sdk/plivo-client.js';

/**
 * voxgateSdkClient: the official Node SDK's client with every request kept on voxgate. A
 * loopback HTTP server stands in for the gateway; every socket connect of this process is
 * counted, so a request that would have left is seen even if it failed.
 */
const load = createRequire(import.meta.url);
const sdkRequestModule = join(dirname(load.resolve('plivo')), 'axios.js');
const sdkAxios = createRequire(sdkRequestModule)('axios') as (config: object) => Promise<unknown>;
const plivoModule = load('plivo') as { Client: unknown };
const requestModule = load(sdkRequestModule) as { Axios: unknown };

const AUTH_ID = 'MAVOXGATESDKCLIENT01';
const AUTH_TOKEN = 'sdk-client-test-token';
const authorization = `Basic ${Buffer.from(`${AUTH_ID}:${AUTH_TOKEN}`).toString('base64')}`;

let server: Server;
let origin: string;
const seen: string[] = [];
const connects: string[] = [];
const connect = Socket.prototype.connect;

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response) => {
    seen.push(`${request.method} ${request.url}`);
    request.resume();
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end('{"api_id":"x","meta":{},"objects":[]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  Socket.prototype.connect = function (this: Socket, ...args: unknown[]) {
    // net.connect hands the socket its arguments already normalised, as [[options, cb]].
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    const options = (typeof first === 'object' ? first : { port: first, host: args[1] }) as {
      host?: string;
      port?: number;
    };
    connects.push(`${options.host}:${options.port}`);
    return (connect as (...a: unknown[]) => Socket).apply(this, args);
  } as typeof connect;
});

afterEach(() => {
  seen.length = 0;
  connects.length = 0;
});

afterAll(async () => {
  Socket.prototype.connect = connect;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const client = () =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  voxgateSdkClient({ url: origin, authId: AUTH_ID, authToken: AUTH_TOKEN }) as any;

describe('voxgateSdkClient', () => {
  it('sends voice requests, which the SDK sends to its public host, to the url given', async () => {
    const sdk = client();
    await sdk.applications.list({ limit: 5 });
    await sdk.calls.create('14155550100', '14155550111', 'http://127.0.0.1:9/answer');
    await sdk.messages.list({ limit: 5 });
    expect(seen).toEqual([
      `GET /v1/Account/${AUTH_ID}/Application/?limit=5`,
      `POST /v1/Account/${AUTH_ID}/Call/`,
      `GET /v1/Account/${AUTH_ID}/Message/?limit=5`,
    ]);
    expect(new Set(connects)).toEqual(new Set([`127.0.0.1:${new URL(origin).port}`]));
  });

  it("refuses a request with the client's credentials to any other host, before connecting", async () => {
    client();
    const error = await sdkAxios({
      method: 'GET',
      url: `https://api.plivo.com/v1/Account/${AUTH_ID}/Call/`,
      headers: { Authorization: authorization },
    }).catch((e: Error) => e);
    expect(String(error)).toContain('refused to send a request');
    expect(String(error)).toContain('https://api.plivo.com');
    expect(connects).toEqual([]);
  });

  it('lets requests with other credentials through untouched', async () => {
    client();
    const other = `Basic ${Buffer.from('MAOTHERACCOUNT000001:t').toString('base64')}`;
    await sdkAxios({
      method: 'GET',
      url: `${origin}/elsewhere`,
      headers: { Authorization: other },
    });
    expect(seen).toEqual(['GET /elsewhere']);
  });

  it('refuses what the SDK sends to other hosts of its own (number lookup)', async () => {
    const error = await client()
      .lookup.get('+14155550100')
      .catch((e: Error) => e);
    expect(String(error)).toMatch(/sent by the SDK to another host \(override_url\)/);
    expect(seen).toEqual([]);
    expect(connects).toEqual([]);
  });

  it('refuses to build a client once the SDK no longer builds its requests the way it relies on', () => {
    const Client = plivoModule.Client;
    plivoModule.Client = class {};
    try {
      expect(client).toThrow(/built 0 request functions, not 1/);
    } finally {
      plivoModule.Client = Client;
    }
    const Axios = requestModule.Axios;
    requestModule.Axios = undefined;
    try {
      expect(client).toThrow(/plivo\/dist\/rest\/axios.js has no Axios/);
    } finally {
      requestModule.Axios = Axios;
    }
  });

  it('refuses a url that is not http or https', () => {
    expect(() =>
      voxgateSdkClient({ url: 'ftp://127.0.0.1', authId: AUTH_ID, authToken: AUTH_TOKEN }),
    ).toThrow(/must be http or https/);
  });
});
