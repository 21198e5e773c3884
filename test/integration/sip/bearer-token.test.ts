import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { ManualClock } from '../../../src/core/clock.js';
import { verifyBearer } from '../../../src/sip/auth/bearer.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';

/** Tokens minted by the real JWT/Token/ route, checked the way the SIP WebSocket transport will. */
describe('bearer tokens from JWT/Token/', () => {
  let gw: TestGateway;
  const now = () => Math.floor(Date.now() / 1000);
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw.close();
  });
  const keyFor = async (authId: string) =>
    (await gw.gateway.state.accounts.findByUnique({ space: 'auth_id', value: authId }))
      ?.auth_token ?? null;
  const mint = async (body: Record<string, unknown>, as = gw.main) => {
    const res = await gw.request('POST', `/v1/Account/${as.id}/JWT/Token/`, { json: body, as });
    expect(res.status).toBe(200);
    return res.body.token as string;
  };
  const clock = { now: () => Date.now() };

  it('accepts a token with the grant the request needs', async () => {
    const token = await mint({
      sub: 'alice',
      per: { voice: { incoming_allow: true, outgoing_allow: true } },
    });
    const verdict = await verifyBearer(token, 'register', keyFor, clock);
    expect(verdict).toEqual({
      ok: true,
      claims: {
        iss: gw.main.id,
        sub: 'alice',
        app: null,
        incomingAllow: true,
        outgoingAllow: true,
        // exp, an hour after it became valid by default.
        expiresAt: (decodeJwt(token).exp as number) * 1000,
      },
    });
    expect((await verifyBearer(token, 'call', keyFor, clock)).ok).toBe(true);
  });

  it('answers 403 insufficient_scope when the grant is missing', async () => {
    const token = await mint({
      sub: 'bob',
      per: { voice: { incoming_allow: false, outgoing_allow: true } },
    });
    expect(await verifyBearer(token, 'register', keyFor, clock)).toMatchObject({
      ok: false,
      status: 403,
      error: 'insufficient_scope',
    });
    const noCalls = await mint({
      sub: 'bob',
      per: { voice: { incoming_allow: true, outgoing_allow: false } },
    });
    expect(await verifyBearer(noCalls, 'call', keyFor, clock)).toMatchObject({
      ok: false,
      status: 403,
      reason: 'token does not allow outgoing calls',
    });
  });

  it('answers 401 invalid_token for expiry, not-yet-valid, tampering and garbage', async () => {
    const token = await mint({
      sub: 'c',
      exp: now() + 200,
      per: { voice: { incoming_allow: true, outgoing_allow: true } },
    });
    const later = new ManualClock((now() + 201) * 1000);
    expect(await verifyBearer(token, 'call', keyFor, later)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'token expired',
    });
    const future = await mint({
      sub: 'c',
      nbf: now() + 600,
      exp: now() + 3600,
      per: { voice: { outgoing_allow: true } },
    });
    expect(await verifyBearer(future, 'call', keyFor, clock)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'token not yet valid',
    });
    const [h, p, s] = token.split('.');
    const tampered = `${h}.${p}.${s!.slice(0, -2)}${s!.endsWith('A') ? 'B' : 'A'}A`;
    expect(await verifyBearer(tampered, 'call', keyFor, clock)).toMatchObject({
      ok: false,
      status: 401,
      error: 'invalid_token',
    });
    expect(await verifyBearer('garbage', 'call', keyFor, clock)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'not a JWT',
    });
  });

  it("checks a subaccount's token against the subaccount's own auth token", async () => {
    const sub = await gw.subaccount();
    const token = await mint(
      { sub: 'd', per: { voice: { incoming_allow: true, outgoing_allow: true } } },
      sub,
    );
    expect(await verifyBearer(token, 'register', keyFor, clock)).toMatchObject({
      ok: true,
      claims: { iss: sub.id },
    });
    // Claiming the main account as issuer does not verify with the subaccount's signature.
    const [, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const forged = `${token.split('.')[0]}.${Buffer.from(JSON.stringify({ ...claims, iss: gw.main.id })).toString('base64url')}.${signature}`;
    expect(await verifyBearer(forged, 'register', keyFor, clock)).toMatchObject({
      ok: false,
      status: 401,
    });
  });
});
