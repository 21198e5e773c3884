import { expect, it } from 'vitest';
import { chatAppSteps } from '../../../../src/messaging/chatapp/chatapp-status.js';

it.each([
  ['queued', 'sent', ['sent']],
  ['sent', 'read', ['delivered', 'read']],
  ['queued', 'delivered', ['sent', 'delivered']],
  ['delivered', 'sent', []],
  ['read', 'delivered', []],
  ['sent', 'failed', ['failed']],
  ['delivered', 'failed', []],
  ['failed', 'read', []],
  ['read', 'read', []],
])('a message %s told %s goes through %j', (current, status, steps) => {
  expect(chatAppSteps(current, status)).toEqual(steps);
});
