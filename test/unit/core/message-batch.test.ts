import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MessageBatch } from '../../../src/core/message-batch.js';

describe('MessageBatch', () => {
  it('sends what one turn pushed as one batch, in order, before the next turn', async () => {
    const sent: number[][] = [];
    const batch = new MessageBatch<number>((messages) => sent.push(messages));
    batch.push(1);
    batch.push(2);
    await Promise.resolve();
    batch.push(3);
    expect(sent).toEqual([]);
    await nextTurn();
    expect(sent).toEqual([[1, 2, 3]]);
  });

  it('starts a new batch for what is pushed after a send, even from inside it', async () => {
    const sent: string[][] = [];
    const batch = new MessageBatch<string>((messages) => {
      sent.push(messages);
      if (messages.includes('a')) batch.push('from the send');
    });
    batch.push('a');
    await nextTurn();
    batch.push('b');
    await nextTurn();
    await nextTurn();
    expect(sent).toEqual([['a'], ['from the send', 'b']]);
  });

  it('sends nothing when nothing was pushed', async () => {
    const sent: unknown[][] = [];
    new MessageBatch<unknown>((messages) => sent.push(messages));
    await nextTurn();
    expect(sent).toEqual([]);
  });
});
