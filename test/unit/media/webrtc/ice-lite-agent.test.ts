import { describe, expect, it } from 'vitest';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import {
  checkIceCredentials,
  createIceCredentials,
  IceLiteAgent,
  type ConsentLoss,
  type IceRejection,
} from '../../../../src/media/webrtc/ice/index.js';
import {
  attributeValue,
  bindingRequest,
  encodeStunMessage,
  hasValidFingerprint,
  hasValidIntegrity,
  parseStunMessage,
  readErrorCode,
  readUnknownAttributes,
  readXorAddress,
  STUN_ATTRIBUTE,
  uint32Value,
  uint64Value,
  type ReceivedStunMessage,
  type TransportAddress,
} from '../../../../src/media/webrtc/stun/index.js';

const LOCAL = { ufrag: 'Vx3q', pwd: 'voxgate0voxgate1voxgate2' };
const BROWSER = { ufrag: 'br0w', pwd: 'browser0browser1browser2' };
const FROM: TransportAddress = { address: '198.51.100.7', port: 53012 };
const OTHER: TransportAddress = { address: '2001:db8::7', port: 60001 };

function harness(options: { remoteUfrag?: string | null; consentTimeoutMs?: number } = {}) {
  const scheduler = new ManualScheduler(1_000_000);
  const selected: TransportAddress[] = [];
  const losses: ConsentLoss[] = [];
  const rejections: IceRejection[] = [];
  const agent = new IceLiteAgent({
    local: LOCAL,
    remoteUfrag: options.remoteUfrag === undefined ? BROWSER.ufrag : options.remoteUfrag,
    scheduler,
    ...(options.consentTimeoutMs === undefined
      ? {}
      : { consentTimeoutMs: options.consentTimeoutMs }),
    delegate: {
      onSelected: (remote) => selected.push(remote),
      onConsentLost: (loss) => losses.push(loss),
      onRejected: (reason) => rejections.push(reason),
    },
  });
  return { scheduler, agent, selected, losses, rejections };
}

/** A check as a browser sends it to us: our ufrag first, signed with our password. */
function check(overrides: Partial<Parameters<typeof bindingRequest>[0]> = {}): Buffer {
  return bindingRequest({
    username: `${LOCAL.ufrag}:${BROWSER.ufrag}`,
    key: Buffer.from(LOCAL.pwd),
    priority: 2122260223,
    role: 'controlling',
    tieBreaker: 0x1234567890abcdefn,
    ...overrides,
  });
}

function answered(response: Buffer | null): ReceivedStunMessage {
  expect(response).not.toBeNull();
  return parseStunMessage(response!);
}

function errorCode(response: Buffer | null): number | undefined {
  const message = answered(response);
  expect(message.messageClass).toBe('error');
  return readErrorCode(attributeValue(message, STUN_ATTRIBUTE.ERROR_CODE)!)?.code;
}

describe('answering checks', () => {
  it('answers a valid check with its source address, signed with our password', () => {
    const { agent, selected, rejections } = harness();
    const request = check();
    const response = answered(agent.receive(request, FROM));
    expect(response.messageClass).toBe('success');
    expect(response.transactionId).toEqual(parseStunMessage(request).transactionId);
    const mapped = attributeValue(response, STUN_ATTRIBUTE.XOR_MAPPED_ADDRESS)!;
    expect(readXorAddress(mapped, response.transactionId)).toEqual(FROM);
    expect(hasValidIntegrity(response, Buffer.from(LOCAL.pwd))).toBe(true);
    expect(hasValidFingerprint(response)).toBe(true);
    expect(agent.state).toBe('checking');
    expect(selected).toEqual([]);
    expect(rejections).toEqual([]);
  });

  it('selects the nominated pair, once, and follows a later nomination elsewhere', () => {
    const { agent, selected } = harness();
    agent.receive(check(), FROM);
    agent.receive(check({ useCandidate: true }), FROM);
    agent.receive(check({ useCandidate: true }), FROM);
    expect(agent.state).toBe('connected');
    expect(agent.selected).toEqual(FROM);
    expect(selected).toEqual([FROM]);
    answered(agent.receive(check({ useCandidate: true }), OTHER));
    expect(selected).toEqual([FROM, OTHER]);
    expect(agent.selected).toEqual(OTHER);
  });

  it.each<[string, Partial<Parameters<typeof bindingRequest>[0]>, IceRejection]>([
    ['the browser password', { key: Buffer.from(BROWSER.pwd) }, 'bad-integrity'],
    [
      'a username the other way round',
      { username: `${BROWSER.ufrag}:${LOCAL.ufrag}` },
      'unknown-username',
    ],
    ['another session ufrag', { username: `Zz99:${BROWSER.ufrag}` }, 'unknown-username'],
    ['another peer ufrag', { username: `${LOCAL.ufrag}:zzzz` }, 'unknown-username'],
    ['no colon', { username: LOCAL.ufrag }, 'unknown-username'],
  ])('answers 401 without integrity to a check with %s, and counts it', (_name, fields, reason) => {
    const { agent, rejections, selected } = harness();
    const response = agent.receive(check({ ...fields, useCandidate: true }), FROM);
    expect(errorCode(response)).toBe(401);
    expect(answered(response).integrityAt).toBeNull();
    expect(hasValidFingerprint(answered(response))).toBe(true);
    expect(rejections).toEqual([reason]);
    expect(agent.rejected.get(reason)).toBe(1);
    expect(selected).toEqual([]);
    expect(agent.selected).toBeNull();
  });

  it('takes any peer ufrag until the peer SDP is in, then only that one', () => {
    const { agent } = harness({ remoteUfrag: null });
    expect(
      answered(agent.receive(check({ username: `${LOCAL.ufrag}:early` }), FROM)).messageClass,
    ).toBe('success');
    agent.setRemoteUfrag(BROWSER.ufrag);
    expect(errorCode(agent.receive(check({ username: `${LOCAL.ufrag}:early` }), FROM))).toBe(401);
    expect(answered(agent.receive(check(), FROM)).messageClass).toBe('success');
  });

  it('answers 400 to a check without MESSAGE-INTEGRITY or USERNAME', () => {
    const { agent, rejections } = harness();
    const unsigned = encodeStunMessage(
      {
        method: 1,
        messageClass: 'request',
        transactionId: Buffer.alloc(12, 7),
        attributes: [{ type: STUN_ATTRIBUTE.USERNAME, value: Buffer.from(`${LOCAL.ufrag}:x`) }],
      },
      { fingerprint: true },
    );
    expect(errorCode(agent.receive(unsigned, FROM))).toBe(400);
    const anonymous = encodeStunMessage(
      { method: 1, messageClass: 'request', transactionId: Buffer.alloc(12, 8), attributes: [] },
      { integrityKey: Buffer.from(LOCAL.pwd), fingerprint: true },
    );
    expect(errorCode(agent.receive(anonymous, FROM))).toBe(400);
    expect(rejections).toEqual(['missing-credentials', 'missing-credentials']);
  });

  it('answers 420 naming an unknown comprehension-required attribute, and ignores optional ones', () => {
    const { agent, rejections } = harness();
    const withAttribute = (type: number) =>
      encodeStunMessage(
        {
          method: 1,
          messageClass: 'request',
          transactionId: Buffer.alloc(12, type & 0xff),
          attributes: [
            {
              type: STUN_ATTRIBUTE.USERNAME,
              value: Buffer.from(`${LOCAL.ufrag}:${BROWSER.ufrag}`),
            },
            { type: STUN_ATTRIBUTE.PRIORITY, value: uint32Value(1) },
            { type: STUN_ATTRIBUTE.ICE_CONTROLLING, value: uint64Value(1n) },
            { type, value: Buffer.from([0, 1, 0, 0]) },
          ],
        },
        { integrityKey: Buffer.from(LOCAL.pwd), fingerprint: true },
      );
    const response = agent.receive(withAttribute(0x0031), FROM);
    expect(errorCode(response)).toBe(420);
    const unknown = attributeValue(answered(response), STUN_ATTRIBUTE.UNKNOWN_ATTRIBUTES)!;
    expect(readUnknownAttributes(unknown)).toEqual([0x0031]);
    expect(hasValidIntegrity(answered(response), Buffer.from(LOCAL.pwd))).toBe(true);
    // Chrome's GOOG-NETWORK-INFO (0xC057) is comprehension-optional.
    expect(answered(agent.receive(withAttribute(0xc057), FROM)).messageClass).toBe('success');
    expect(rejections).toEqual(['unknown-attribute']);
  });

  it('answers 487 to a peer that also claims the controlled role', () => {
    const { agent, rejections } = harness();
    const response = agent.receive(check({ role: 'controlled', useCandidate: true }), FROM);
    expect(errorCode(response)).toBe(487);
    expect(hasValidIntegrity(answered(response), Buffer.from(LOCAL.pwd))).toBe(true);
    expect(rejections).toEqual(['role-conflict']);
    expect(agent.selected).toBeNull();
  });

  it('drops a broken fingerprint or a malformed datagram, counted, and ignores indications', () => {
    const { agent, rejections } = harness();
    const broken = check();
    broken[broken.length - 1] = broken[broken.length - 1]! ^ 0xff;
    expect(agent.receive(broken, FROM)).toBeNull();
    expect(agent.receive(check().subarray(0, 30), FROM)).toBeNull();
    const keepalive = encodeStunMessage(
      { method: 1, messageClass: 'indication', transactionId: Buffer.alloc(12), attributes: [] },
      { fingerprint: true },
    );
    expect(agent.receive(keepalive, FROM)).toBeNull();
    expect(rejections).toEqual(['bad-fingerprint', 'malformed']);
  });
});

describe('consent freshness (RFC 7675)', () => {
  it('holds while the browser checks every 5 s, and is lost 30 s after the last check', () => {
    const { agent, scheduler, losses } = harness();
    agent.receive(check({ useCandidate: true }), FROM);
    for (let second = 5; second <= 120; second += 5) {
      scheduler.advance(5_000);
      expect(answered(agent.receive(check(), FROM)).messageClass).toBe('success');
    }
    expect(losses).toEqual([]);
    scheduler.advance(29_999);
    expect(losses).toEqual([]);
    scheduler.advance(1);
    expect(losses).toEqual([{ silentMs: 30_000, wasConnected: true }]);
    expect(agent.state).toBe('consent-lost');
    expect(agent.receive(check(), FROM)).toBeNull();
    scheduler.advance(60_000);
    expect(losses).toHaveLength(1);
    expect(scheduler.timersPending).toBe(0);
  });

  it('takes a configured timeout, and reports a peer that never connected once the call is answered', () => {
    const { agent, scheduler, losses } = harness({ consentTimeoutMs: 2_000 });
    agent.expectChecks();
    scheduler.advance(1_999);
    expect(losses).toEqual([]);
    scheduler.advance(1);
    expect(losses).toEqual([{ silentMs: 2_000, wasConnected: false }]);
    expect(agent.state).toBe('consent-lost');
  });

  it('does not count the time before the answer: a browser runs no ICE while it rings', () => {
    const { agent, scheduler, losses } = harness({ consentTimeoutMs: 2_000 });
    scheduler.advance(60_000);
    expect(losses).toEqual([]);
    expect(agent.state).toBe('checking');
    // Answered after a minute of ringing: the browser checks at once and connects.
    agent.expectChecks();
    scheduler.advance(300);
    expect(answered(agent.receive(check({ useCandidate: true }), FROM)).messageClass).toBe(
      'success',
    );
    expect(agent.state).toBe('connected');
    scheduler.advance(1_999);
    expect(losses).toEqual([]);
    scheduler.advance(1);
    expect(losses).toEqual([{ silentMs: 2_000, wasConnected: true }]);
  });

  it('watches from the first valid check when the peer checks before the answer (early media)', () => {
    const { agent, scheduler, losses } = harness({ consentTimeoutMs: 2_000 });
    scheduler.advance(10_000);
    answered(agent.receive(check(), FROM));
    scheduler.advance(1_999);
    expect(losses).toEqual([]);
    // The answer changes nothing once the watch runs: the last check still counts.
    agent.expectChecks();
    scheduler.advance(1);
    expect(losses).toEqual([{ silentMs: 2_000, wasConnected: false }]);
  });

  it('counts only checks on the selected pair once there is one', () => {
    const { agent, scheduler, losses } = harness({ consentTimeoutMs: 10_000 });
    agent.receive(check({ useCandidate: true }), FROM);
    for (let i = 0; i < 3; i++) {
      scheduler.advance(3_000);
      answered(agent.receive(check(), OTHER));
    }
    expect(losses).toEqual([]);
    scheduler.advance(1_000);
    expect(losses).toEqual([{ silentMs: 10_000, wasConnected: true }]);
  });

  it('keeps no timer after close', () => {
    const { agent, scheduler, losses } = harness();
    agent.close();
    scheduler.advance(60_000);
    expect(losses).toEqual([]);
    expect(agent.receive(check(), FROM)).toBeNull();
    expect(scheduler.timersPending).toBe(0);
  });
});

describe('ICE restart (RFC 8445 9)', () => {
  const NEW_LOCAL = { ufrag: 'N3wL', pwd: 'newlocal0newlocal1newlo' };
  const NEW_BROWSER = { ufrag: 'n3wb', pwd: 'newbrowser0newbrowser1' };
  const restarted = (overrides: Partial<Parameters<typeof bindingRequest>[0]> = {}) =>
    check({
      username: `${NEW_LOCAL.ufrag}:${NEW_BROWSER.ufrag}`,
      key: Buffer.from(NEW_LOCAL.pwd),
      ...overrides,
    });

  it('keeps media on the selected pair, answers the old credentials until the first check with the new ones, then only those', () => {
    const { agent, selected, rejections } = harness();
    agent.receive(check({ useCandidate: true }), FROM);
    agent.restart(NEW_LOCAL, NEW_BROWSER.ufrag);
    expect(agent.selected).toEqual(FROM);
    expect(agent.state).toBe('connected');
    // A consent check sent before the browser had our answer.
    const old = answered(agent.receive(check(), FROM));
    expect(old.messageClass).toBe('success');
    expect(hasValidIntegrity(old, Buffer.from(LOCAL.pwd))).toBe(true);
    // The browser's checks after the restart, from a new network: signed with our new password.
    const fresh = answered(agent.receive(restarted({ useCandidate: true }), OTHER));
    expect(fresh.messageClass).toBe('success');
    expect(hasValidIntegrity(fresh, Buffer.from(NEW_LOCAL.pwd))).toBe(true);
    expect(agent.selected).toEqual(OTHER);
    expect(selected).toEqual([FROM, OTHER]);
    // The old credentials are gone now.
    expect(errorCode(agent.receive(check(), OTHER))).toBe(401);
    expect(rejections).toEqual(['unknown-username']);
    // A check signed with the old password under the new username is not taken.
    expect(errorCode(agent.receive(restarted({ key: Buffer.from(LOCAL.pwd) }), OTHER))).toBe(401);
    expect(rejections).toEqual(['unknown-username', 'bad-integrity']);
  });

  it('lets consent run across a restart, so a peer that never checks again is let go', () => {
    const { agent, scheduler, losses } = harness({ consentTimeoutMs: 10_000 });
    agent.receive(check({ useCandidate: true }), FROM);
    scheduler.advance(6_000);
    agent.restart(NEW_LOCAL, NEW_BROWSER.ufrag);
    scheduler.advance(3_999);
    expect(losses).toEqual([]);
    scheduler.advance(1);
    expect(losses).toEqual([{ silentMs: 10_000, wasConnected: true }]);
  });

  it('refreshes consent with checks under the new credentials on the selected pair', () => {
    const { agent, scheduler, losses } = harness({ consentTimeoutMs: 10_000 });
    agent.receive(check({ useCandidate: true }), FROM);
    agent.restart(NEW_LOCAL, NEW_BROWSER.ufrag);
    for (let i = 0; i < 5; i++) {
      scheduler.advance(5_000);
      expect(answered(agent.receive(restarted(), FROM)).messageClass).toBe('success');
    }
    expect(losses).toEqual([]);
    expect(agent.selected).toEqual(FROM);
  });

  it('refuses credentials SDP could not carry, and changes nothing once consent is lost', () => {
    const { agent, scheduler } = harness({ consentTimeoutMs: 1_000 });
    expect(() => agent.restart({ ufrag: 'a b', pwd: NEW_LOCAL.pwd }, 'x')).toThrow(/ufrag/);
    expect(agent.localUfrag).toBe(LOCAL.ufrag);
    agent.expectChecks();
    scheduler.advance(1_000);
    expect(agent.state).toBe('consent-lost');
    agent.restart(NEW_LOCAL, NEW_BROWSER.ufrag);
    expect(agent.localUfrag).toBe(LOCAL.ufrag);
    expect(agent.receive(restarted(), FROM)).toBeNull();
  });
});

describe('ICE credentials', () => {
  it('makes an 8-character ufrag and a 24-character pwd of ice-chars, fresh each time', () => {
    const first = createIceCredentials();
    const second = createIceCredentials();
    expect(first.ufrag).toMatch(/^[A-Za-z0-9+/]{8}$/);
    expect(first.pwd).toMatch(/^[A-Za-z0-9+/]{24}$/);
    expect(second.ufrag).not.toBe(first.ufrag);
    expect(second.pwd).not.toBe(first.pwd);
    expect(() => checkIceCredentials(first, 'local')).not.toThrow();
  });

  it('refuses credentials SDP could not carry', () => {
    expect(() => checkIceCredentials({ ufrag: 'abc', pwd: LOCAL.pwd }, 'local')).toThrow(
      'Expected 4 to 256 ice-chars for the local ufrag but received "abc"',
    );
    expect(() => checkIceCredentials({ ufrag: 'ab:c', pwd: LOCAL.pwd }, 'local')).toThrow('ufrag');
    expect(() => checkIceCredentials({ ufrag: 'abcd', pwd: 'short' }, 'local')).toThrow(
      'Expected 22 to 256 ice-chars for the local pwd but received 5 characters',
    );
    expect(
      () =>
        new IceLiteAgent({
          local: { ufrag: 'abcd', pwd: LOCAL.pwd },
          scheduler: new ManualScheduler(),
          consentTimeoutMs: 0,
        }),
    ).toThrow('consentTimeoutMs');
  });
});
