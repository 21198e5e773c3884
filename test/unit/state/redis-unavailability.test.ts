import { ReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../../src/core/errors.js';
import { unavailability } from '../../../src/state/store-deadline.js';

/** An error of the class name ioredis gives it (its error classes name themselves so). */
function named(name: string, message: string): Error {
  const error = new Error(message);
  Object.defineProperty(error, 'name', { value: name });
  return error;
}

describe('which Redis errors mean "try again" (503)', () => {
  it.each([
    'CLUSTERDOWN The cluster is down',
    'TRYAGAIN Multiple keys request during rehashing of slot',
    'LOADING Redis is loading the dataset in memory',
    'READONLY You cannot write against a read only replica.',
    'NOREPLICAS Not enough good replicas to write.',
    'MOVED 3044 127.0.0.1:7001',
    'ASK 3044 127.0.0.1:7001',
  ])('the reply %s', (message) => {
    expect(unavailability(new ReplyError(message))).toBeInstanceOf(StoreUnavailable);
  });

  it.each([
    ['Error', 'Connection is closed.'],
    ['Error', 'Command timed out'],
    ['AbortError', 'Command aborted due to connection close'],
    ['MaxRetriesPerRequestError', 'Reached the max retries per request limit'],
    ['ClusterAllFailedError', 'Failed to refresh slots cache.'],
  ])('a connection failure: %s %s', (name, message) => {
    expect(unavailability(named(name, message))).toBeInstanceOf(StoreUnavailable);
  });

  it('leaves other replies and non-errors alone: they are bugs, not outages', () => {
    expect(unavailability(new ReplyError('WRONGTYPE Operation against a key'))).toBeNull();
    expect(unavailability(new ReplyError('ERR unknown command'))).toBeNull();
    expect(unavailability(named('ReplyError', 'MOVEDX not a redirection'))).toBeNull();
    expect(unavailability(new TypeError('x is undefined'))).toBeNull();
    expect(unavailability('a string')).toBeNull();
  });
});
