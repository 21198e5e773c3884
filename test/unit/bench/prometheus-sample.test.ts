import { describe, expect, it } from 'vitest';
import { readSample } from '../../../bench/api/prometheus-sample.js';

const BODY = [
  '# HELP voxgate_process_cpu_user_seconds_total Total user CPU time spent in seconds.',
  '# TYPE voxgate_process_cpu_user_seconds_total counter',
  'voxgate_process_cpu_user_seconds_total 3.25',
  '# HELP voxgate_process_cpu_seconds_total Total user and system CPU time spent in seconds.',
  '# TYPE voxgate_process_cpu_seconds_total counter',
  'voxgate_process_cpu_seconds_total 4.5',
  'voxgate_process_resident_memory_bytes 104857600',
  'voxgate_http_requests_total{method="GET",route="/health",status="200"} 7',
  'voxgate_http_requests_total{method="POST",route="/v1/Account/:auth_id/Call/",status="201"} 5 1700000000000',
  '',
].join('\n');

describe('readSample', () => {
  it('reads a sample without labels, matching its name whole', () => {
    expect(readSample(BODY, 'voxgate_process_cpu_seconds_total')).toBe(4.5);
    expect(readSample(BODY, 'voxgate_process_cpu_user_seconds_total')).toBe(3.25);
    expect(readSample(BODY, 'voxgate_process_resident_memory_bytes')).toBe(104857600);
  });

  it('adds up the label sets, a timestamp after the value ignored', () => {
    expect(readSample(BODY, 'voxgate_http_requests_total')).toBe(12);
  });

  it('is null when the body has no such sample', () => {
    expect(readSample(BODY, 'voxgate_process_cpu')).toBeNull();
    expect(readSample('', 'voxgate_process_cpu_seconds_total')).toBeNull();
  });
});
