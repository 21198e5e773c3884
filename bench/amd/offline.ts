/**
 * Runs the classifier over clips directly, without calls: frame by frame as the media worker
 * would feed it (each 20 ms of mu-law decoded). The benchmark tunes its thresholds this way on
 * the tuning part of the corpus; the calls then measure the report part end to end.
 */
import { muLawDecode } from '../../src/media/codec/g711.js';
import {
  MachineClassifier,
  type MachineDetectionSettings,
  type MachineVerdict,
} from '../../src/media/pipeline/machine-classifier.js';
import type { Clip } from './corpus.js';

/** The classifier's verdict on one clip, as if its audio began `leadMs` after the answer. */
export function classifyClip(
  clip: Clip,
  settings: MachineDetectionSettings,
  leadMs = 0,
): MachineVerdict {
  const classifier = new MachineClassifier(settings, 8000);
  const frames = Math.floor(clip.ulaw.length / 160);
  const lead = Math.round(leadMs / 20);
  for (let i = 0; ; i++) {
    const at = i - lead;
    const frame =
      at >= 0 && at < frames ? muLawDecode(clip.ulaw.subarray(at * 160, at * 160 + 160)) : null;
    const verdict = classifier.tick(frame);
    if (verdict) return verdict;
  }
}
