import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';

/**
 * The OpenAPI document the gateway generates, every route group in it (the operator interface
 * too): each operation has the one-line summary /docs lists it by.
 */
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

interface Operation {
  summary?: unknown;
}

let gw: TestGateway;
let operations: { name: string; operation: Operation }[];

beforeAll(async () => {
  gw = await startGateway({ env: { VOXGATE_OPERATOR_TOKEN: 'o'.repeat(40) } });
  const docs = await gw.request('GET', '/docs/json', { as: null });
  expect(docs.status).toBe(200);
  const paths = docs.body.paths as Record<string, Record<string, Operation>>;
  operations = Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
  );
});

afterAll(async () => {
  await gw?.close();
});

describe('the OpenAPI document', () => {
  it('covers the account API, the operator interface and the inbound webhooks', () => {
    const names = operations.map((o) => o.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'POST /v1/Account/{auth_id}/Call/',
        'POST /v1/Account/{auth_id}/Application/',
        'GET /v2/Account/{auth_id}/Call/',
        'POST /operator/v1/Node/Drain/',
        'POST /v1/MM7/',
      ]),
    );
  });

  it('gives every operation a summary: one line, under 80 characters, no two alike', () => {
    const missing = operations
      .filter(({ operation }) => typeof operation.summary !== 'string' || operation.summary === '')
      .map((o) => o.name);
    expect(missing).toEqual([]);
    const summaries = operations.map((o) => o.operation.summary as string);
    for (const summary of summaries) {
      expect(summary).toMatch(/^[A-Z][^\n]{0,78}[^.\s]$/);
    }
    const repeated = summaries.filter((s, i) => summaries.indexOf(s) !== i);
    expect(repeated).toEqual([]);
  });

  it('is what /docs answers a client that does not ask for HTML', async () => {
    const json = await gw.request('GET', '/docs/json', { as: null });
    for (const accept of [undefined, '*/*', 'application/json']) {
      const docs = await gw.request('GET', '/docs', {
        as: null,
        ...(accept ? { headers: { accept } } : {}),
      });
      expect(docs.status).toBe(200);
      expect(docs.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(docs.headers.vary).toBe('accept');
      expect(docs.body).toEqual(json.body);
    }
    const page = await gw.request('GET', '/docs', {
      as: null,
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('swagger-ui-bundle.js');
  });
});
