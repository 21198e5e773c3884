import { ManualScheduler } from '../../src/core/scheduler.js';
import { SipStack } from '../../src/sip/sip-stack.js';
import type { Address, Flow } from '../../src/sip/transport/flow.js';

/** What the stack sent: the bytes and where to. */
export interface Sent {
  data: Buffer;
  to: Address | { connectionId: string };
}

/**
 * A SipStack on an in-memory UDP transport and a manual clock: messages go in with
 * `inject`, what the stack sends is collected in `sent`, and time moves with `scheduler`.
 */
export function loopbackStack(local: Address = { address: '192.0.2.1', port: 5060 }) {
  const scheduler = new ManualScheduler(Date.UTC(2026, 10, 21));
  const sent: Sent[] = [];
  const warnings: string[] = [];
  const stack = new SipStack({
    scheduler,
    publicHost: local.address,
    onWarning: (message) => warnings.push(message),
  });
  stack.attach('UDP', {
    local,
    send: (data, to) => {
      sent.push({ data, to });
    },
    close: async () => {},
  });
  const listener = stack.listener;
  const inject = (data: Buffer, remote: Address = { address: '198.51.100.7', port: 5062 }) => {
    const flow: Flow = { protocol: 'UDP', local, remote };
    listener.onMessage(data, flow);
  };
  return { stack, scheduler, sent, warnings, inject };
}
