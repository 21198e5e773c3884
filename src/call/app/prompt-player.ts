import { pause, type Scheduler } from '../../core/scheduler.js';
import type { PlaySource } from '../../media/worker/protocol.js';
import type {
  PlayInstruction,
  PromptInstruction,
  SpeakInstruction,
} from '../xml/answer-document.js';
import type { AppCall } from './app-call.js';

/**
 * The answer XML's prompts: Speak, Play and Wait played into the call, and the digits a
 * GetDigits or GetInput collects while they play.
 */
export class PromptPlayer {
  constructor(
    private readonly call: AppCall,
    private readonly scheduler: Scheduler,
  ) {}

  /**
   * Plays a Speak, Play or Wait to its end (or until stopped); a Wait also ends when
   * `interrupted` settles (a key pressed during GetDigits or GetInput).
   */
  async play(instruction: PromptInstruction, interrupted?: Promise<void>): Promise<void> {
    if (instruction.kind === 'Wait') {
      // beep: the wait ends once the far end plays a voicemail beep (or after length).
      // silence: "if no voice or sound is detected for minSilence milliseconds, end the wait".
      const maxMs = instruction.length * 1000;
      const waiting = instruction.beep
        ? this.call.waitForBeep(maxMs).catch(() => false)
        : instruction.silence
          ? this.call.waitForSilence(instruction.minSilence, maxMs).catch(() => false)
          : pause(this.scheduler, maxMs);
      await (interrupted ? Promise.race([waiting, interrupted]) : waiting);
      return;
    }
    const source = promptSource(instruction);
    try {
      if (instruction.loop === 0) {
        await this.call.play(source, { loop: true });
        return;
      }
      for (let i = 0; i < instruction.loop && !this.call.over; i++) {
        if (!(await this.call.play(source, {}))) return; // stopped (a key was pressed)
      }
    } catch (error) {
      // A prompt that cannot be rendered or fetched is skipped, as a missing file would be.
      this.call.log(`${instruction.kind} could not be played`, {
        reason: (error as Error).message,
      });
    }
  }

  /** A 250 ms 1 kHz tone: GetDigits' playBeep once its prompts are over. */
  private async beep(): Promise<void> {
    if (this.call.over) return;
    await this.call.play({ kind: 'tone', frequencies: [1000], durationMs: 250 }, {});
  }

  /**
   * Plays the prompts while listening; the first key stops them. Then beeps when asked, and
   * collects by the rules. Resolves with the digits ('' for none), or null when the call ended.
   */
  async collect(
    prompts: readonly PromptInstruction[],
    rules: Parameters<AppCall['digits']['collect']>[0],
    beep = false,
  ): Promise<string | null> {
    const digits = this.call.digits;
    digits.listen();
    try {
      for (const prompt of prompts) {
        if (this.call.over || digits.pressed > 0) break;
        let keyPressed!: () => void;
        const interrupted = new Promise<void>((resolve) => (keyPressed = resolve));
        const stopOnKey = this.whenKeyPressed(() => {
          keyPressed();
          return this.call.stopPlayback();
        });
        await this.play(prompt, interrupted);
        stopOnKey.cancel();
      }
      if (beep && digits.pressed === 0) await this.beep();
      if (this.call.over) return null;
      const collected = await digits.collect(rules);
      return collected.reason === 'call-ended' ? null : collected.digits;
    } finally {
      digits.stop();
    }
  }

  /** Runs `action` when a key is pressed (checked every 20 ms), until cancelled. */
  private whenKeyPressed(action: () => Promise<void>): { cancel(): void } {
    let timer: { cancel(): void } | null = null;
    let done = false;
    const check = (): void => {
      if (done) return;
      if (this.call.digits.pressed > 0) {
        done = true;
        void action();
        return;
      }
      timer = this.scheduler.after(20, check);
    };
    check();
    return {
      cancel: () => {
        done = true;
        timer?.cancel();
      },
    };
  }
}

/** What a Speak or Play asks the media plane to play. */
export function promptSource(instruction: SpeakInstruction | PlayInstruction): PlaySource {
  if (instruction.kind === 'Play') return { kind: 'file', url: instruction.url };
  return {
    kind: 'speech',
    text: instruction.text,
    voice: instruction.voice,
    language: instruction.language,
    // Markup (a break, prosody...) is spoken as SSML; plain text as text.
    ...(hasMarkup(instruction.ssml) ? { ssml: instruction.ssml } : {}),
  };
}

/** Whether Speak's content holds SSML elements (CDATA is read as plain text). */
const hasMarkup = (ssml: string): boolean => /<[A-Za-z]/.test(ssml) && !ssml.includes('<![CDATA[');
