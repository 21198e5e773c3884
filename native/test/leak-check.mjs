// Exercises every entry point of the addon many times, dropping each object, so that valgrind
// (npm run native:leak-check) sees any allocation the addon fails to free. Run plainly, it
// just has to finish.
import { createRequire } from 'node:module';

const addon = createRequire(import.meta.url)('../build/Release/voxgate_native.node');
const ROUNDS = Number(process.env.LEAK_CHECK_ROUNDS ?? 200);

const frame = Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin(i / 3)));
for (let round = 0; round < ROUNDS; round++) {
  addon.muLawDecode(addon.muLawEncode(frame));
  addon.aLawDecode(addon.aLawEncode(frame));
  addon.l16FromNetwork(addon.l16ToNetwork(frame));
  addon.mix([frame, frame, frame]);
  addon.gain(frame, 0.5);
  addon.energyDbfs(frame);
  for (const [from, to] of [
    [8000, 16000],
    [16000, 8000],
    [22050, 24000],
  ]) {
    const resampler = new addon.Resampler(from, to, 3);
    resampler.process(frame);
    resampler.process(frame.subarray(0, 77));
    resampler.inputLatency();
  }
  for (const rate of [8000, 16000, 24000]) {
    const suppressor = new addon.NoiseSuppressor(rate, round % 4);
    const tenMs = new Int16Array(rate / 100).fill(100);
    suppressor.process(tenMs);
    suppressor.process(tenMs);
  }
  // Let the garbage collector finalise the native objects dropped this round.
  if (round % 50 === 49 && globalThis.gc) globalThis.gc();
}
if (globalThis.gc) globalThis.gc();
console.log(`leak-check: ${ROUNDS} rounds done`);
