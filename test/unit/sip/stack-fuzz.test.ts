import { describe, expect, it } from 'vitest';
import { StateRegistrarDirectory } from '../../../src/call/registrar-directory.js';
import { DigestAuthenticator } from '../../../src/sip/auth/digest-authenticator.js';
import { SipResponse, parseMessage } from '../../../src/sip/message/index.js';
import { responseTo } from '../../../src/sip/transaction/response-to.js';
import type { ServerTransaction } from '../../../src/sip/transaction/transaction-layer.js';
import { Registrar } from '../../../src/sip/ua/registrar.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import { createState } from '../../../src/state/state.js';
import { loopbackStack } from '../../support/sip-loopback.js';
import { CORPUS, mutate, prng } from './message/mutations.js';
import { TYPICAL } from './message/typical-messages.js';

/**
 * Mutated messages through the whole stack: transport layer, transactions, UA core and
 * registrar on a manual clock. Nothing may escape as an error, every transaction must end
 * when its timers say, and a call in progress must not notice.
 */
const ITERATIONS = 100_000;
const SEED = 0x57ac4475;

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('SIP stack fuzzing', () => {
  it(`survives ${ITERATIONS} mutated messages, ends every transaction, disturbs no other`, async () => {
    const h = loopbackStack();
    let held: ServerTransaction | null = null;
    h.stack.core.handle(
      'INVITE',
      (request, transaction) => {
        // The first INVITE is kept unanswered (a call ringing); the rest are refused.
        if (held === null && request.callId() === 'held-call') held = transaction;
        else transaction.respond(responseTo(request, 486));
      },
      { accepts: ['application/sdp'], forwarded: true },
    );
    new Registrar(h.stack.core, {
      directory: new StateRegistrarDirectory(createState(new EmbeddedStore(null)), () =>
        h.scheduler.now(),
      ),
      authenticator: new DigestAuthenticator({
        realm: 'voxgate',
        secret: Buffer.alloc(32, 3),
        clock: h.scheduler,
      }),
      scheduler: h.scheduler,
      node: 'fuzz',
    });

    // The call that must not be disturbed, and the stack's own answers as more seed material.
    const invite = TYPICAL.INVITE.toString('latin1').replace(
      /^Call-ID: .*$/m,
      'Call-ID: held-call',
    );
    h.inject(Buffer.from(invite, 'latin1'));
    for (const message of Object.values(TYPICAL)) h.inject(message);
    await settle();
    expect(held).not.toBeNull();
    const corpus = [...CORPUS, ...h.sent.map((s) => s.data)];

    const random = prng(SEED);
    for (let i = 0; i < ITERATIONS; i++) {
      h.inject(mutate(random, corpus), { address: '198.51.100.9', port: 5000 + (i % 50) });
      if (i % 1000 === 999) {
        await settle();
        h.scheduler.advance(40_000);
      }
    }
    await settle();
    expect(h.warnings.filter((w) => w.includes('failed'))).toEqual([]);
    // Most mutations still make messages the stack answers (400s, 401s, 200s, 486s...).
    expect(h.sent.length).toBeGreaterThan(ITERATIONS / 4);

    // Every transaction ends on its timers; only the held INVITE (Proceeding, no timer) is left.
    h.scheduler.advance(64 * 500 + 5_000);
    expect(h.stack.transactions.liveServerTransactions).toBe(1);
    expect(h.stack.transactions.liveClientTransactions).toBe(0);

    // The held call is answered as if nothing happened.
    h.sent.length = 0;
    held!.respond(responseTo(held!.request, 200, { body: 'v=0\r\n' }));
    const [answer] = h.sent.map((s) => parseMessage(s.data) as SipResponse);
    expect(answer).toMatchObject({ status: 200 });
    expect(answer!.callId()).toBe('held-call');
  }, 120_000);
});
