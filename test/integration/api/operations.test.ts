import { afterEach, beforeEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { describeEachStore } from '../../support/stores.js';

const ID = 'MA' + 'RATE'.repeat(4) + 'LM';
const TOKEN = 'r'.repeat(40);

describeEachStore('health, metrics, docs and rate limits', (target) => {
  const gateways: TestGateway[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const gw = await startGateway({ redisUrl: target.redisUrl(), env });
    gateways.push(gw);
    return gw;
  };
  beforeEach(async () => {
    await target.flush();
  });
  afterEach(async () => {
    for (const gw of gateways.splice(0)) await gw.close();
  });

  it('logs each REST request once it is answered, in one line without its credentials', async () => {
    const gw = await start();
    const before = gw.logs.length;
    const res = await gw.request('GET', `/v1/Account/${gw.main.id}/Endpoint/?limit=2`);
    expect(res.status).toBe(200);
    const lines = gw.logs.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'request completed',
        reqId: res.body.api_id,
        req: expect.objectContaining({
          method: 'GET',
          url: `/v1/Account/${gw.main.id}/Endpoint/?limit=2`,
        }),
        res: { statusCode: 200 },
        responseTime: expect.any(Number),
      }),
    ]);
    expect(gw.logs.slice(before).join('\n')).not.toContain(gw.main.token);

    // Health probes and metrics scrapes are not logged at info.
    const quiet = gw.logs.length;
    expect((await gw.request('GET', '/health', { as: null })).status).toBe(503);
    expect((await gw.request('GET', '/metrics', { as: null })).status).toBe(200);
    expect(gw.logs.slice(quiet)).toEqual([]);
  });

  it('answers /health 503 until listening, /metrics in Prometheus text, /docs as OpenAPI', async () => {
    const gw = await start();
    const health = await gw.request('GET', '/health', { as: null });
    expect(health.status).toBe(503);
    await gw.request('GET', `/v1/Account/${gw.main.id}/`);
    const metrics = await gw.request('GET', '/metrics', { as: null });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(
      /voxgate_http_requests_total\{method="GET",route="\/v1\/Account\/:auth_id\/",status="200"\} 1/,
    );
    const docs = await gw.request('GET', '/docs', { as: null });
    expect(docs.status).toBe(200);
    expect(docs.body.openapi).toMatch(/^3\./);
    const paths = Object.keys(docs.body.paths);
    for (const p of [
      '/v1/Account/{auth_id}/Subaccount/',
      '/v1/Account/{auth_id}/Application/',
      '/v1/Account/{auth_id}/Number/',
      '/v1/Account/{auth_id}/Endpoint/',
    ]) {
      expect(paths).toContain(p);
    }
    const create = docs.body.paths['/v1/Account/{auth_id}/Application/'].post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual([
      'app_name',
      'answer_url',
    ]);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '422']));
  });

  it('limits requests per auth id per endpoint with a 429 in the error envelope', async () => {
    const gw = await start({ VOXGATE_RATE_LIMIT: '3' });
    const sub = await gw.subaccount();
    const path = `/v1/Account/${gw.main.id}/Application/`;
    for (let i = 0; i < 3; i++) expect((await gw.request('GET', path)).status).toBe(200);
    const limited = await gw.request('GET', path);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatch(
      /rate limit exceeded: at most 3 requests per second on this endpoint/,
    );
    expect(limited.body.api_id).toBeTruthy();
    // Another endpoint, and another account on the same endpoint, have their own budgets.
    expect((await gw.request('GET', `/v1/Account/${gw.main.id}/Number/`)).status).toBe(200);
    expect(
      (await gw.request('GET', `/v1/Account/${sub.id}/Application/`, { as: sub })).status,
    ).toBe(200);
  });

  if (target.name === 'redis') {
    it('shares the budget between gateway nodes on one Redis', async () => {
      const env = { VOXGATE_RATE_LIMIT: '4', VOXGATE_AUTH_ID: ID, VOXGATE_AUTH_TOKEN: TOKEN };
      const a = await start(env);
      const b = await start(env);
      const path = `/v1/Account/${ID}/Number/`;
      const statuses = [];
      for (const gw of [a, b, a, b, a]) statuses.push((await gw.request('GET', path)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
    });
  }
});
