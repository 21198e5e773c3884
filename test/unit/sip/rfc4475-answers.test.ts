import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { StateRegistrarDirectory } from '../../../src/call/registrar-directory.js';
import { DigestAuthenticator } from '../../../src/sip/auth/digest-authenticator.js';
import { SipResponse, parseMessage } from '../../../src/sip/message/index.js';
import { responseTo } from '../../../src/sip/transaction/response-to.js';
import { Registrar } from '../../../src/sip/ua/registrar.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import { createState } from '../../../src/state/state.js';
import { loopbackStack } from '../../support/sip-loopback.js';

/**
 * Every RFC 4475 message through the whole stack (transport layer, transactions, UA core,
 * registrar), as a datagram: the answer on the wire is the one its section of the RFC gives.
 * An INVITE that passes every check reaches a handler that answers 486, standing in for the
 * call layer; null means nothing may be sent (responses that are not ours, or unparsable).
 */
const EXPECTED: Record<string, number[] | null> = {
  // 3.1.1: valid messages are processed.
  badbranch: [200],
  esc01: [100, 486],
  esc02: [501], // "RE%47IST%45R" is an unknown method, not REGISTER
  escnull: [401],
  intmeth: [501],
  longreq: [100, 486],
  lwsdisp: [200],
  mpart01: [405], // MESSAGE: recognised, not supported here
  noreason: null, // a valid response, but not to a request of ours (RFC 3261 18.1.2)
  semiuri: [200],
  transports: [200],
  unreason: null,
  wsinv: [100, 481], // a To tag of no dialog we know
  dblreq: [401], // the REGISTER is answered; the INVITE after it in the datagram is not
  // 3.1.2: invalid messages are rejected.
  badaspec: [400],
  baddate: [400],
  baddn: [400],
  badinv01: [400],
  badvers: [505],
  bigcode: null,
  clerr: [400],
  escruri: [400],
  ltgtruri: [400],
  lwsruri: [400],
  lwsstart: [400],
  mismatch01: [400],
  mismatch02: [400],
  ncl: [400],
  quotbal: [400],
  regbadct: [400],
  scalar02: [400],
  scalarlg: null,
  test: null, // no SIP-Version in its Request-Line: not SIP, so not answered (a reflector else)
  trws: [400],
  // 3.3: the application-layer answers.
  insuf: [400],
  unkscm: [416],
  novelsc: [416],
  unksm2: [400], // a registrar refuses a To that is not a SIP AOR
  bext01: [420],
  invut: [100, 415],
  regaut01: [401], // an unknown scheme: challenged
  multi01: [400],
  mcl01: [400],
  bcast: null,
  zeromf: [200], // an endpoint answers an OPTIONS with Max-Forwards 0 (a proxy would 483)
  cparam01: [401],
  cparam02: [401],
  regescrt: [401],
  sdp01: [100, 406],
  // 3.4: an RFC 2543 INVITE is accepted.
  inv2543: [100, 486],
};

const FIXTURES = fileURLToPath(new URL('../../../fixtures/sip/rfc4475/', import.meta.url));

async function answersTo(name: string): Promise<number[]> {
  const h = loopbackStack();
  h.stack.core.handle('INVITE', (r, t) => t.respond(responseTo(r, 486)), {
    accepts: ['application/sdp'],
    forwarded: true,
  });
  const state = createState(new EmbeddedStore(null));
  new Registrar(h.stack.core, {
    directory: new StateRegistrarDirectory(state, () => h.scheduler.now()),
    authenticator: new DigestAuthenticator({
      realm: 'voxgate',
      secret: Buffer.alloc(32, 7),
      clock: h.scheduler,
    }),
    scheduler: h.scheduler,
    node: 'test',
  });
  h.inject(readFileSync(`${FIXTURES}${name}.dat`));
  // The registrar answers asynchronously (it reads the state): let it.
  await new Promise((resolve) => setImmediate(resolve));
  return h.sent.map(({ data }) => (parseMessage(data) as SipResponse).status);
}

describe('RFC 4475 messages on the wire: the answers of the RFC', () => {
  it('covers every fixture', () => {
    const names = readdirSync(FIXTURES)
      .filter((n) => n.endsWith('.dat'))
      .map((n) => n.slice(0, -4));
    expect(Object.keys(EXPECTED).sort()).toEqual(names.sort());
  });

  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`${name}: ${expected === null ? 'nothing is sent' : expected.join(' then ')}`, async () => {
      expect(await answersTo(name)).toEqual(expected ?? []);
    });
  }
});

describe('Max-Forwards', () => {
  it('an INVITE the gateway would pass on with Max-Forwards 0 gets 483 (RFC 3261 16.3)', async () => {
    const h = loopbackStack();
    h.stack.core.handle('INVITE', (r, t) => t.respond(responseTo(r, 486)), {
      accepts: ['application/sdp'],
      forwarded: true,
    });
    const invite = readFileSync(`${FIXTURES}esc01.dat`, 'latin1').replace(
      /Max-Forwards: \d+/,
      'Max-Forwards: 0',
    );
    h.inject(Buffer.from(invite, 'latin1'));
    expect(h.sent.map(({ data }) => (parseMessage(data) as SipResponse).status)).toEqual([
      100, 483,
    ]);
  });
});
