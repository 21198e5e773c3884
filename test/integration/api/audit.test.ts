import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { PROFILE } from '../../support/profile.js';

const OPERATOR_TOKEN = 'operator-token-for-audit-0123456789';
const ENDPOINT_PASSWORD = 'first-secret-pass';
const NEW_ENDPOINT_PASSWORD = 'second-secret-pass';
const URI_PASSWORD = 'trunk-secret-pass';
const TOLL_FREE = '18445550100';

interface AuditLine {
  audit: true;
  actor: string;
  action: string;
  target: string;
  changed?: string[];
  credential?: true;
  detail?: Record<string, unknown>;
  at: string;
  msg: string;
}

const auditLines = (logs: string[]): AuditLine[] =>
  logs.map((line) => JSON.parse(line)).filter((entry) => entry.audit === true);

describe('the audit log', () => {
  let gw: TestGateway;
  let account: string;
  let started: number;
  beforeEach(async () => {
    gw = await startGateway({ env: { VOXGATE_OPERATOR_TOKEN: OPERATOR_TOKEN } });
    account = `/v1/Account/${gw.main.id}`;
    started = Date.now();
  });
  afterEach(async () => {
    await gw.close();
  });

  /** The one audit line of an action on a target. */
  const lineOf = (action: string, target: string): AuditLine => {
    const found = auditLines(gw.logs).filter((l) => l.action === action && l.target === target);
    expect(found).toHaveLength(1);
    const line = found[0]!;
    expect(line.msg).toBe('audit');
    expect(Date.parse(line.at)).toBeGreaterThanOrEqual(started - 1000);
    expect(Date.parse(line.at)).toBeLessThanOrEqual(Date.now());
    return line;
  };

  it('records subaccount create, update and delete with who did it', async () => {
    const sub = await gw.subaccount('team');
    expect(lineOf('subaccount.create', sub.id)).toMatchObject({
      actor: gw.main.id,
      credential: true,
      detail: { enabled: true },
    });

    const path = `${account}/Subaccount/${sub.id}/`;
    expect((await gw.request('POST', path, { json: { name: 'ops', enabled: false } })).status).toBe(
      200,
    );
    const update = lineOf('subaccount.update', sub.id);
    expect(update).toMatchObject({ actor: gw.main.id, changed: ['name', 'enabled'] });
    expect(update.credential).toBeUndefined();

    expect((await gw.request('DELETE', `${path}?cascade=true`)).status).toBe(204);
    expect(lineOf('subaccount.delete', sub.id)).toMatchObject({
      actor: gw.main.id,
      credential: true,
      detail: { cascade: true },
    });
    expect(gw.logs.join('\n')).not.toContain(sub.token);
  });

  it('records endpoint password changes as credential changes, never the password', async () => {
    const sub = await gw.subaccount();
    const created = await gw.request('POST', `/v1/Account/${sub.id}/Endpoint/`, {
      as: sub,
      json: { username: 'alice', password: ENDPOINT_PASSWORD, alias: 'alice' },
    });
    expect(created.status).toBe(201);
    const id = created.body.endpoint_id as string;
    // The subaccount made it: it is the actor.
    expect(lineOf('endpoint.create', id)).toMatchObject({
      actor: sub.id,
      credential: true,
      detail: { username: created.body.username },
    });

    const path = `/v1/Account/${sub.id}/Endpoint/${id}/`;
    await gw.request('POST', path, { as: sub, json: { password: NEW_ENDPOINT_PASSWORD } });
    const changed = lineOf('endpoint.update', id);
    expect(changed).toMatchObject({ actor: sub.id, changed: ['password'], credential: true });

    await gw.request('POST', path, { as: sub, json: { alias: 'alice-2' } });
    const lines = auditLines(gw.logs).filter((l) => l.action === 'endpoint.update');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ changed: ['alias'] });
    expect(lines[1]!.credential).toBeUndefined();

    expect((await gw.request('DELETE', path, { as: sub })).status).toBe(204);
    expect(lineOf('endpoint.delete', id)).toMatchObject({ actor: sub.id, credential: true });

    const all = gw.logs.join('\n');
    for (const secret of [ENDPOINT_PASSWORD, NEW_ENDPOINT_PASSWORD, sub.token, gw.main.token])
      expect(all).not.toContain(secret);
  });

  it('records origination URI credentials and issued access tokens, never the secrets', async () => {
    const created = await gw.request('POST', `${account}/SipTrunk/URI/`, {
      json: {
        uri: '203.0.113.10',
        authentication_needed: true,
        username: 'pbx',
        password: URI_PASSWORD,
      },
    });
    expect(created.status).toBe(201);
    const uuid = created.body.uri_uuid as string;
    expect(lineOf('origination_uri.create', uuid)).toMatchObject({
      actor: gw.main.id,
      credential: true,
    });
    await gw.request('POST', `${account}/SipTrunk/URI/${uuid}/`, {
      json: { password: `${URI_PASSWORD}-2` },
    });
    expect(lineOf('origination_uri.update', uuid)).toMatchObject({
      changed: ['password'],
      credential: true,
    });

    const token = await gw.request('POST', `${account}/JWT/Token/`, {
      json: { sub: 'alice', per: { voice: { incoming_allow: true } } },
    });
    expect(token.status).toBe(200);
    const issued = lineOf('access_token.create', gw.main.id);
    expect(issued).toMatchObject({ actor: gw.main.id, credential: true });
    expect(issued.detail).toMatchObject({ sub: 'alice', exp: expect.any(Number) });

    const all = gw.logs.join('\n');
    for (const secret of [URI_PASSWORD, token.body.token, gw.main.token])
      expect(all).not.toContain(secret);
  });

  it('records the operator reviewing a toll-free verification', async () => {
    await gw.request('POST', `${account}/Number/`, {
      json: { numbers: TOLL_FREE, carrier: 'c', region: 'r' },
    });
    const profile = (await gw.request('POST', `${account}/Profile/`, { json: PROFILE })).body
      .profile_uuid;
    const submitted = await gw.request('POST', `${account}/TollfreeVerification/`, {
      json: {
        profile_uuid: profile,
        number: TOLL_FREE,
        usecase: 'CUSTOMER_CARE',
        usecase_summary: 'support replies',
        message_sample: 'Acme support: your ticket 42 is solved',
        optin_image_url: 'https://acme.example.com/optin.png',
        optin_type: 'VIA_TEXT',
        volume: '1,000',
      },
    });
    const uuid = submitted.body.uuid as string;
    const reviewed = await gw.request('POST', `/operator/v1/TollfreeVerification/${uuid}/`, {
      as: null,
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      json: { status: 'PROCESSING' },
    });
    expect(reviewed.status).toBe(200);
    expect(lineOf('tollfree_verification.review', uuid)).toMatchObject({
      actor: 'operator',
      detail: { from: 'SUBMITTED', to: 'PROCESSING' },
    });
    // A refused move changes nothing and is not recorded.
    await gw.request('POST', `/operator/v1/TollfreeVerification/${uuid}/`, {
      as: null,
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      json: { status: 'SUBMITTED' },
    });
    expect(
      auditLines(gw.logs).filter((l) => l.action === 'tollfree_verification.review'),
    ).toHaveLength(1);
    expect(gw.logs.join('\n')).not.toContain(OPERATOR_TOKEN);
  });
});

it('records the operator draining a node', async () => {
  let drains = 0;
  const gw = await startGateway({
    env: { VOXGATE_NODE_ID: 'node-audit', VOXGATE_OPERATOR_TOKEN: OPERATOR_TOKEN },
    onDrainRequested: () => drains++,
  });
  try {
    const res = await gw.request('POST', '/operator/v1/Node/Drain/', {
      as: null,
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    expect(res.status).toBe(202);
    expect(drains).toBe(1);
    const node = res.body.node as string;
    expect(auditLines(gw.logs)).toEqual([
      expect.objectContaining({ actor: 'operator', action: 'node.drain', target: node }),
    ]);
    expect(gw.logs.join('\n')).not.toContain(OPERATOR_TOKEN);
  } finally {
    await gw.close();
  }
});
