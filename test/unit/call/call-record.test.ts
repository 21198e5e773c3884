import { describe, expect, it } from 'vitest';
import { RateDeck } from '../../../src/call/billing/rate-deck.js';
import { buildCallRecord, countryOf, type FinishedLeg } from '../../../src/call/call-record.js';

const deck = RateDeck.parse(
  [
    'prefix,rate_per_minute,description',
    '1,0.00850,US',
    '44,0.01200,UK',
    '447,0.03500,UK mobile',
    'sip,0.00300,SIP',
  ].join('\n'),
);

const T0 = Date.UTC(2024, 4, 2, 13, 45, 10, 250);

const leg = (over: Partial<FinishedLeg> = {}): FinishedLeg => ({
  callUuid: '6653422-91b6-4716-9fad-9463daaeeec2',
  requestUuid: '9e9d1a88-6f6f-4b6a-9c0c-3ee6a1c4e6b5',
  direction: 'outbound',
  from: '14155550100',
  to: '447400123456',
  initiatedAt: new Date(T0),
  answeredAt: T0 + 7_000,
  endedAt: T0 + 73_900,
  hangupCauseCode: 4000,
  hangupCauseName: 'Normal Hangup',
  hangupSource: 'Callee',
  sourceIp: '203.0.113.7',
  account: 'MAAAAAAAAAAAAAAAAAAA',
  subaccount: null,
  ...over,
});

describe('buildCallRecord', () => {
  it('builds the whole record of an answered outbound call', () => {
    expect(buildCallRecord(leg(), deck)).toEqual({
      account: 'MAAAAAAAAAAAAAAAAAAA',
      subaccount: null,
      created: Date.UTC(2024, 4, 2, 13, 45, 10),
      call_uuid: '6653422-91b6-4716-9fad-9463daaeeec2',
      request_uuid: '9e9d1a88-6f6f-4b6a-9c0c-3ee6a1c4e6b5',
      call_type: 'voice',
      from_number: '14155550100',
      to_number: '447400123456',
      from_iso: 'US',
      to_iso: 'GB',
      call_direction: 'outbound',
      initiation_time: '2024-05-02 13:45:10+00:00',
      answer_time: '2024-05-02 13:45:17+00:00',
      end_time: '2024-05-02 13:46:24+00:00',
      call_duration: 74,
      ring_duration: 7,
      bill_duration: 67,
      billed_duration: 120,
      total_rate: '0.03500',
      total_amount: '0.07000',
      parent_call_uuid: null,
      conference_uuid: null,
      hangup_cause_name: 'Normal Hangup',
      hangup_cause_code: 4000,
      hangup_source: 'Callee',
      stir_verification: 'Not Applicable',
      stir_attestation: '',
      source_ip: '203.0.113.7',
      call_state: 'ANSWER',
    });
  });

  it('bills an inbound call by the called number, not the caller', () => {
    const record = buildCallRecord(
      leg({ direction: 'inbound', from: '447400123456', to: '14155550100', requestUuid: null }),
      deck,
    );
    expect(record).toMatchObject({ total_rate: '0.00850', total_amount: '0.01700' });
    expect(record.request_uuid).toBeNull();
  });

  it('bills nothing for an unanswered call and names its state by the cause', () => {
    const unanswered = (code: number, name: string) =>
      buildCallRecord(
        leg({ answeredAt: null, hangupCauseCode: code, hangupCauseName: name }),
        deck,
      );
    expect(unanswered(3010, 'Busy Line')).toMatchObject({
      answer_time: null,
      call_duration: 74,
      ring_duration: 74,
      bill_duration: 0,
      billed_duration: 0,
      total_rate: '0.03500',
      total_amount: '0.00000',
      call_state: 'BUSY',
    });
    expect(unanswered(3000, 'No Answer').call_state).toBe('NO ANSWER');
    expect(unanswered(6010, 'Ring Timeout Reached').call_state).toBe('NO ANSWER');
    expect(unanswered(3020, 'Rejected').call_state).toBe('NO ANSWER');
    expect(unanswered(1000, 'Canceled').call_state).toBe('NO ANSWER');
    expect(unanswered(2000, 'Invalid Destination Address').call_state).toBe('FAILED');
    expect(unanswered(5000, 'Network Error').call_state).toBe('FAILED');
  });

  it('charges the minimum increment for a call answered and ended within the second', () => {
    const record = buildCallRecord(leg({ answeredAt: T0 + 7_100, endedAt: T0 + 7_600 }), deck);
    expect(record).toMatchObject({
      bill_duration: 0,
      billed_duration: 60,
      total_amount: '0.03500',
    });
  });

  it('leaves the country empty for SIP URIs and rates them by the sip row', () => {
    const record = buildCallRecord(
      leg({
        from: 'sip:alice@example.com',
        to: 'sip:bob@pbx.example.com',
        callType: 'chatapp_voice',
      }),
      deck,
    );
    expect(record).toMatchObject({
      from_iso: '',
      to_iso: '',
      total_rate: '0.00300',
      total_amount: '0.00600',
      call_type: 'chatapp_voice',
    });
  });

  it('charges nothing to a destination the deck has no rate for', () => {
    expect(buildCallRecord(leg({ to: '919876543210' }), deck)).toMatchObject({
      to_iso: 'IN',
      total_rate: '0.00000',
      total_amount: '0.00000',
      billed_duration: 120,
    });
  });

  it('carries parent, conference, STIR and subaccount when given', () => {
    const record = buildCallRecord(
      leg({
        parentCallUuid: 'a-leg',
        conferenceUuid: 'conf-1',
        stirVerification: 'Verified',
        stirAttestation: 'A',
        subaccount: 'SABBBBBBBBBBBBBBBBBB',
      }),
      deck,
    );
    expect(record).toMatchObject({
      parent_call_uuid: 'a-leg',
      conference_uuid: 'conf-1',
      stir_verification: 'Verified',
      stir_attestation: 'A',
      subaccount: 'SABBBBBBBBBBBBBBBBBB',
    });
  });
});

describe('countryOf', () => {
  it('finds the country of E.164 numbers, with or without the plus', () => {
    expect(countryOf('+14155550100')).toBe('US');
    expect(countryOf('16135550100')).toBe('CA');
    expect(countryOf('4930123456')).toBe('DE');
    expect(countryOf('')).toBe('');
    expect(countryOf('anonymous')).toBe('');
  });
});
