import { systemScheduler } from '../../src/core/scheduler.js';
import { DialogLayer } from '../../src/sip/dialog/dialog-layer.js';
import { SipStack } from '../../src/sip/sip-stack.js';
import type { SipMetrics } from '../../src/sip/transaction/sip-metrics.js';
import type { TimerSettings } from '../../src/sip/transaction/timers.js';
import { InviteClient } from '../../src/sip/ua/invite-client.js';
import { InviteServer } from '../../src/sip/ua/invite-server.js';

/** Short timers for tests: 64*T1 is 1.28 s. */
export const TEST_TIMERS: TimerSettings = { t1: 20, t2: 160, t4: 200 };

/** A user agent built on the stack, on 127.0.0.1 (UDP and TCP on one free port). */
export interface SipPeer {
  stack: SipStack;
  dialogs: DialogLayer;
  uac: InviteClient;
  uas: InviteServer;
  port: number;
  tcpPort: number;
}

export async function openSipPeer(
  options: { timers?: TimerSettings; metrics?: SipMetrics } = {},
): Promise<SipPeer> {
  const stack = new SipStack({
    scheduler: systemScheduler,
    publicHost: '127.0.0.1',
    timers: options.timers ?? TEST_TIMERS,
    metrics: options.metrics,
  });
  const { udp, tcp } = await stack.listenUdpTcp('127.0.0.1', 0);
  const dialogs = new DialogLayer(stack);
  return {
    stack,
    dialogs,
    uac: new InviteClient(stack, dialogs),
    uas: new InviteServer(stack, dialogs),
    port: udp.port,
    tcpPort: tcp.port,
  };
}
