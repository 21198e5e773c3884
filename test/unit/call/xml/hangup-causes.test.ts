import { describe, expect, it } from 'vitest';
import {
  HANGUP_CAUSES,
  INVALID_XML_HANGUP_CAUSE,
  UNREACHABLE_XML_URL_HANGUP_CAUSE,
  findHangupCauseByCode,
  findHangupCauseByName,
  hangupCause,
} from '../../../../src/call/hangup-causes.js';

// The hangup cause table sits beside the XML parser's tests because invalid XML is what ends a
// call with 8011, 8012 or 8014.
describe('hangup causes', () => {
  it('lists every cause of the wire notes once, codes ascending', () => {
    expect(HANGUP_CAUSES).toHaveLength(30);
    const codes = HANGUP_CAUSES.map((c) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect([...codes].sort((a, b) => a - b)).toEqual(codes);
    expect(new Set(HANGUP_CAUSES.map((c) => c.name)).size).toBe(codes.length);
  });

  it('looks causes up by exact name and by code', () => {
    expect(hangupCause('End Of XML Instructions')).toEqual({
      code: 4010,
      name: 'End Of XML Instructions',
    });
    expect(findHangupCauseByName('sip_auth_failed')).toEqual({
      code: 4240,
      name: 'sip_auth_failed',
    });
    expect(findHangupCauseByName('Unallocated number')?.code).toBe(3050);
    expect(findHangupCauseByName('unallocated number')).toBeUndefined();
    expect(findHangupCauseByName('toString')).toBeUndefined();
    expect(findHangupCauseByCode(9100)?.name).toBe('Machine Detected');
    expect(findHangupCauseByCode(0)?.name).toBe('Unknown');
    expect(findHangupCauseByCode(1234)).toBeUndefined();
  });

  it('maps where XML came from to its invalid-XML and unreachable-URL causes', () => {
    expect(INVALID_XML_HANGUP_CAUSE.answer).toEqual({ code: 8011, name: 'Invalid Answer XML' });
    expect(INVALID_XML_HANGUP_CAUSE.action).toEqual({ code: 8012, name: 'Invalid Action XML' });
    expect(INVALID_XML_HANGUP_CAUSE.redirect).toEqual({ code: 8014, name: 'Invalid Redirect XML' });
    expect(UNREACHABLE_XML_URL_HANGUP_CAUSE.answer.code).toBe(7011);
    expect(UNREACHABLE_XML_URL_HANGUP_CAUSE.action.code).toBe(7012);
    expect(UNREACHABLE_XML_URL_HANGUP_CAUSE.redirect.code).toBe(7014);
  });
});
