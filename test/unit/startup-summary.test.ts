import { describe, expect, it } from 'vitest';
import { redactedRedisUrl, withoutUserInfo } from '../../src/startup-summary.js';

describe('the start-up summary hides credentials', () => {
  it('replaces the passwords of a Redis URL, keeping its user', () => {
    expect(redactedRedisUrl('redis://:s3cret@10.0.0.5:6379/2')).toBe(
      'redis://:***@10.0.0.5:6379/2',
    );
    expect(redactedRedisUrl('rediss://app:s3cret@r.example:6380')).toBe(
      'rediss://app:***@r.example:6380',
    );
    // A lone name may be a password (Redis before ACLs).
    expect(redactedRedisUrl('redis://s3cret@10.0.0.5:6379')).toBe('redis://:***@10.0.0.5:6379');
    expect(
      redactedRedisUrl(
        'redis+sentinel://app:s3cret@10.0.0.1:26379,10.0.0.2/mymaster/0?sentinel_password=t0p&x=1',
      ),
    ).toBe('redis+sentinel://app:***@10.0.0.1:26379,10.0.0.2/mymaster/0?sentinel_password=***&x=1');
    expect(redactedRedisUrl('redis://10.0.0.5:6379')).toBe('redis://10.0.0.5:6379');
  });

  it('drops user and password from SIP and HTTP URIs', () => {
    expect(withoutUserInfo('sip:trunk:pw@carrier.example.com:5080;transport=tcp')).toBe(
      'sip:carrier.example.com:5080;transport=tcp',
    );
    expect(withoutUserInfo('sips:carrier.example.com')).toBe('sips:carrier.example.com');
    expect(withoutUserInfo('https://u:p@graph.example/v21.0')).toBe('https://graph.example/v21.0');
  });
});
