import type { GatewayProcess } from './gateway-process.js';

/** A REST resource of the main account the benchmark reads: `/v1/Account/{id}/<name>/`. */
export interface BenchResource {
  name: string;
  /** The POST body that creates the n-th record. */
  createBody(n: number): Record<string, string>;
  /** The field of the 201 answer that holds the new record's id. */
  idField: string;
}

export const ENDPOINT: BenchResource = {
  name: 'Endpoint',
  createBody: (n) => ({ username: `bench${n}`, password: 'secret123', alias: `bench${n}` }),
  idField: 'endpoint_id',
};

/** The URL paths the benchmark requests, and what they answered before the load started. */
export interface SeededPaths {
  /** One detail path per record. */
  detailPaths: string[];
  listPath: string;
  detailBody: string;
  listBody: string;
}

const PARALLEL_CREATES = 10;

/** Creates `count` records through the REST API, as a client would, and checks both reads. */
export async function seedRecords(
  gateway: GatewayProcess,
  resource: BenchResource,
  count: number,
): Promise<SeededPaths> {
  const listPath = `/v1/Account/${gateway.authId}/${resource.name}/`;
  const ids: string[] = [];
  for (let first = 0; first < count; first += PARALLEL_CREATES) {
    const batch = Array.from({ length: Math.min(PARALLEL_CREATES, count - first) }, (_, i) =>
      call(gateway, 'POST', listPath, 201, resource.createBody(first + i)),
    );
    for (const text of await Promise.all(batch)) {
      const id = (JSON.parse(text) as Record<string, unknown>)[resource.idField];
      if (typeof id !== 'string') throw new Error(`no ${resource.idField} in ${text}`);
      ids.push(id);
    }
  }
  const detailPaths = ids.map((id) => `${listPath}${id}/`);
  return {
    detailPaths,
    listPath,
    detailBody: await call(gateway, 'GET', detailPaths[0] ?? listPath, 200),
    listBody: await call(gateway, 'GET', listPath, 200),
  };
}

async function call(
  gateway: GatewayProcess,
  method: 'GET' | 'POST',
  path: string,
  expected: number,
  json?: unknown,
): Promise<string> {
  const res = await fetch(gateway.baseUrl + path, {
    method,
    headers: {
      authorization: gateway.authorization,
      ...(json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  if (res.status !== expected) {
    throw new Error(`${gateway.name}: ${method} ${path} answered ${res.status}: ${text}`);
  }
  return text;
}
