import { describe, expect, it } from 'vitest';
import type { AppCall } from '../../../../src/call/app/app-call.js';
import { PromptPlayer } from '../../../../src/call/app/prompt-player.js';
import { parseAnswerXml } from '../../../../src/call/xml/parse-answer-xml.js';
import { ManualScheduler } from '../../../../src/core/scheduler.js';
import type { PlaySource } from '../../../../src/media/worker/protocol.js';

/** What a Speak asks the media plane to say. */
async function spoken(xml: string): Promise<PlaySource> {
  const played: PlaySource[] = [];
  const call = {
    over: false,
    play: async (source: PlaySource) => {
      played.push(source);
      return true;
    },
    log: () => {},
  } as unknown as AppCall;
  const [speak] = parseAnswerXml(`<Response>${xml}</Response>`).instructions;
  if (speak?.kind !== 'Speak') throw new Error('expected a Speak');
  await new PromptPlayer(call, new ManualScheduler()).play(speak);
  return played[0]!;
}

describe('Speak', () => {
  it('hands its SSML to the speech engine when it has markup', async () => {
    expect(await spoken('<Speak>Hello <break time="1s"/> world</Speak>')).toEqual({
      kind: 'speech',
      text: 'Hello world',
      ssml: 'Hello <break time="1s"/> world',
      voice: 'WOMAN',
      language: 'en-US',
    });
  });

  it('hands plain text, or CDATA, as text alone', async () => {
    expect(await spoken('<Speak>Hello world</Speak>')).not.toHaveProperty('ssml');
    expect(await spoken('<Speak><![CDATA[a <b> c]]></Speak>')).not.toHaveProperty('ssml');
  });
});
