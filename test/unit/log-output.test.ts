import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config.js';
import { logDestination, logFormat } from '../../src/log-output.js';

describe('VOXGATE_LOG_FORMAT', () => {
  it('is json by default, pretty on a terminal, and either when set', () => {
    expect(logFormat({}, false)).toBe('json');
    expect(logFormat({}, true)).toBe('pretty');
    expect(logFormat({ VOXGATE_LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormat({ VOXGATE_LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
  });

  it('refuses anything else, naming the variable and the values', () => {
    expect(() => logFormat({ VOXGATE_LOG_FORMAT: 'text' }, false)).toThrow(ConfigError);
    expect(() => logFormat({ VOXGATE_LOG_FORMAT: 'text' }, false)).toThrow(
      'VOXGATE_LOG_FORMAT="text" is invalid: must be one of json, pretty',
    );
  });

  it('keeps pino JSON as it is, and formats on a stream of its own when pretty', () => {
    // The pretty form itself is asserted from a gateway process (gateway-start.test.ts).
    expect(logDestination('json', false)).toBeUndefined();
    expect(typeof logDestination('pretty', false)?.write).toBe('function');
  });
});
