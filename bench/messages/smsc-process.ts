/**
 * The SMSC of bench:messages, in a process of its own: the test suite's simulator, answering
 * every submit_sm at once and sending a DELIVRD receipt for each part. It prints its port, and
 * on SIGUSR2 writes, per destination, when the submit_sm arrived and when its receipt went out
 * (epoch ms with microseconds, comparable with the runner's clock on the same machine).
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { SmscSimulator } from '../../test/support/smsc-simulator.js';

const out = process.argv[2]!;
const now = () => performance.timeOrigin + performance.now();
const smsc = await SmscSimulator.start({ autoReceipt: 'DELIVRD', receiptStyle: 'both' });
const submitted = new Map<string, number>();
const seen = { count: 0 };
const original = smsc.submits.push.bind(smsc.submits);
smsc.submits.push = (...items) => {
  const at = now();
  for (const item of items) submitted.set(item.destinationAddr, at);
  seen.count += items.length;
  // The receipt goes out right after the answer, in the same turn: its time is this one.
  return original(...items);
};
process.on('SIGUSR2', () => {
  writeFileSync(out, JSON.stringify({ submits: seen.count, submitted: [...submitted] }));
  process.stdout.write('written\n');
});
process.on('SIGTERM', () => void smsc.stop().then(() => process.exit(0)));
process.stdout.write(`port ${smsc.port}\n`);
