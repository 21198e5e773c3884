import type { Scheduler } from '../../core/scheduler.js';
import type { PlaySource } from '../../media/worker/protocol.js';
import { loadDialSound, playDialSound } from '../dial-sound.js';
import type { ConferenceSound } from '../xml/conference-instruction.js';
import type { ConferenceMember, ConferenceRoom } from './conference-room.js';

/** Playback tags, so that a member's wait sound or a room sound stops alone. */
export const WAIT_TAG = 'conference-wait';
const SOUND_TAG = 'conference-sound';
/** beep:1 and beep:2: 700 Hz for 300 ms, the second after 200 ms. */
const BEEP = { frequencies: [700], durationMs: 300, gapMs: 200 } as const;

/** waitSound, over and over until the conference starts; silence without one. */
export async function waitSound(member: ConferenceMember, scheduler: Scheduler): Promise<void> {
  const url = member.settings.waitSound;
  if (url === null) return;
  const sound = await loadDialSound(member.call, url);
  const player = {
    play: (source: PlaySource, options: { loop?: boolean }) =>
      member.call.leg.play(source, { ...options, tag: WAIT_TAG }),
  };
  await playDialSound(player, sound, scheduler, {
    loop: true,
    stopped: () => member.mixed || !member.present,
  });
}

/** enterSound or exitSound, to every member in the mix. */
export function roomSound(
  room: ConferenceRoom,
  cause: ConferenceMember,
  sound: ConferenceSound,
  scheduler: Scheduler,
): void {
  if (sound === null) return;
  const hearers = room.present().filter((m) => m.mixed && !m.deaf);
  if (sound.kind === 'beep') {
    const tone = {
      kind: 'tone',
      frequencies: [...BEEP.frequencies],
      durationMs: BEEP.durationMs,
    };
    for (const m of hearers) void beep(m, tone as PlaySource, sound.count, scheduler);
    return;
  }
  void loadDialSound(cause.call, sound.url).then((loaded) => {
    for (const m of hearers) {
      const player = {
        play: (source: PlaySource, options: { loop?: boolean }) =>
          m.call.leg.play(source, { ...options, tag: SOUND_TAG }),
      };
      void playDialSound(player, loaded, scheduler, {
        loop: false,
        stopped: () => !m.present,
      });
    }
  });
}

async function beep(
  member: ConferenceMember,
  tone: PlaySource,
  count: 1 | 2,
  scheduler: Scheduler,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    if (i > 0) await new Promise((r) => scheduler.after(BEEP.gapMs, () => r(null)));
    await member.call.leg.play(tone, { tag: SOUND_TAG }).catch(() => false);
  }
}
