import { describe, expect, it } from 'vitest';
import { RateDeck } from '../../../src/call/billing/rate-deck.js';
import { buildCallRecord } from '../../../src/call/call-record.js';
import { RecordRetention } from '../../../src/call/record-retention.js';
import { DEFAULT_RATE_DECK } from '../../../src/config/config.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { EmbeddedStore } from '../../../src/state/embedded-store.js';
import { createState } from '../../../src/state/state.js';

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.UTC(2026, 10, 20, 12);
const deck = RateDeck.load(DEFAULT_RATE_DECK);

describe('RecordRetention', () => {
  it('sweeps records past 90 days at start and every hour after, and keeps the rest', async () => {
    const state = createState(new EmbeddedStore(null));
    const scheduler = new ManualScheduler(NOW);
    const put = (uuid: string, endedAt: number) =>
      state.calls.create(
        buildCallRecord(
          {
            callUuid: uuid,
            requestUuid: null,
            direction: 'outbound',
            from: '+14155550100',
            to: '+14155550111',
            initiatedAt: endedAt - 60_000,
            answeredAt: endedAt - 30_000,
            endedAt,
            hangupCauseCode: 4000,
            hangupCauseName: 'Normal Hangup',
            hangupSource: 'Callee',
            sourceIp: '127.0.0.1',
            account: 'MA1',
            subaccount: null,
          },
          deck,
        ),
      );
    await put('old', NOW - 91 * DAY);
    await put('recent', NOW - 10 * DAY);
    const errors: Error[] = [];
    const retention = new RecordRetention(state, 'MA1', scheduler, (e) => errors.push(e));
    expect(await retention.sweep()).toBe(1);
    expect(await state.calls.get('MA1', 'old')).toBeNull();
    expect(await state.calls.get('MA1', 'recent')).not.toBeNull();

    // 81 days on, the recent one expires; the hourly sweep takes it.
    const settle = () => new Promise((r) => setTimeout(r, 20));
    scheduler.advance(81 * DAY - 60 * 60 * 1000);
    await settle(); // the sweep that ran on the way schedules the next one
    await put('later', scheduler.now() - 92 * DAY);
    scheduler.advance(60 * 60 * 1000);
    await settle();
    expect(await state.calls.get('MA1', 'recent')).toBeNull();
    expect(await state.calls.get('MA1', 'later')).toBeNull();
    retention.stop();
    expect(errors).toEqual([]);
  });
});
