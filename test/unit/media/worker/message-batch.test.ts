import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BatchReader, MessageBatch } from '../../../../src/media/worker/message-batch.js';
import { until } from '../../../support/wait.js';

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

describe('BatchReader', () => {
  it('handles a batch in order, each message after the promise reactions of the last', async () => {
    const seen: string[] = [];
    const reader = new BatchReader<string>((message) => {
      seen.push(message);
      // A reaction three promises deep, as an async command's completion is.
      void Promise.resolve()
        .then(() => undefined)
        .then(() => undefined)
        .then(() => seen.push(`${message} done`));
    });
    reader.read(['a', 'b']);
    reader.read(['c']);
    await until(() => seen.length === 6);
    expect(seen).toEqual(['a', 'a done', 'b', 'b done', 'c', 'c done']);
  });
});
