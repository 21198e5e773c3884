import { pause, type Scheduler } from '../core/scheduler.js';
import type { PlaySource } from '../media/worker/protocol.js';
import { promptSource } from './app/prompt-player.js';
import type { Call } from './call.js';
import type { PromptInstruction } from './xml/answer-document.js';
import { parseAnswerXml } from './xml/parse-answer-xml.js';

/**
 * Dial's dialMusic and confirmSound: a URL that answers with XML of Play, Speak and Wait only
 * (fetched as the call's other documents are, signed, with its parameters), or else an audio
 * file, played as it is.
 */
export type DialSound =
  { kind: 'prompts'; prompts: readonly PromptInstruction[] } | { kind: 'file'; url: string };

/** Something that plays into a leg: the caller (dialMusic) or the called party (confirmSound). */
interface Player {
  play(source: PlaySource, options: { loop?: boolean }): Promise<boolean>;
}

export async function loadDialSound(call: Call, url: string): Promise<DialSound> {
  const fetched = await call.fetch(url, 'POST', call.requestParams()).catch(() => null);
  if (!fetched?.ok || !/\bxml\b/i.test(fetched.contentType)) return { kind: 'file', url };
  try {
    const { instructions } = parseAnswerXml(fetched.body);
    const prompts = instructions.filter(
      (i): i is PromptInstruction => i.kind === 'Play' || i.kind === 'Speak' || i.kind === 'Wait',
    );
    if (prompts.length === instructions.length) return { kind: 'prompts', prompts };
    call.log('a Dial sound may hold only Play, Speak and Wait; it is not played', { url });
  } catch (error) {
    call.log('a Dial sound is not XML that reads; it is not played', {
      url,
      reason: (error as Error).message,
    });
  }
  return { kind: 'prompts', prompts: [] };
}

/**
 * Plays a dial sound once, or over and over until `stopped()` (dialMusic while the called party
 * rings). Resolves when it is done or stopped.
 */
export async function playDialSound(
  player: Player,
  sound: DialSound,
  scheduler: Scheduler,
  options: { loop: boolean; stopped: () => boolean },
): Promise<void> {
  if (sound.kind === 'file') {
    await player.play({ kind: 'file', url: sound.url }, { loop: options.loop }).catch(() => false);
    return;
  }
  if (sound.prompts.length === 0) return;
  do {
    for (const prompt of sound.prompts) {
      if (options.stopped()) return;
      if (prompt.kind === 'Wait') {
        await pause(scheduler, prompt.length * 1000);
        continue;
      }
      // loop 0 (for ever) plays once per round here: the rounds repeat it.
      for (let i = 0; i < Math.max(1, prompt.loop); i++) {
        const played = await player.play(promptSource(prompt), {}).catch(() => false);
        if (!played || options.stopped()) return;
      }
    }
  } while (options.loop && !options.stopped());
}
