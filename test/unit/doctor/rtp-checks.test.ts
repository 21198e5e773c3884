import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import {
  checkMediaWorkers,
  checkRtpRange,
  PAIRS_BOUND_AHEAD,
  rtpPairs,
} from '../../../src/doctor/rtp-checks.js';
import { PAIRS_AHEAD } from '../../../src/media/worker/worker-sessions.js';

const config = (env: Record<string, string>) => loadConfig({ VOXGATE_MEDIA_WORKERS: '2', ...env });

describe('the RTP range check', () => {
  it('counts the pairs of an even RTP port and the odd RTCP port above it', () => {
    expect(rtpPairs({ min: 20000, max: 29999 })).toBe(5000);
    expect(rtpPairs({ min: 20001, max: 20004 })).toBe(1);
    expect(rtpPairs({ min: 20000, max: 20001 })).toBe(1);
    expect(rtpPairs({ min: 20001, max: 20002 })).toBe(0);
  });

  it('counts the pairs the media workers bind ahead as the workers do', () => {
    expect(PAIRS_BOUND_AHEAD).toBe(PAIRS_AHEAD);
  });

  it('needs the pairs bound ahead by every worker and two legs a call', () => {
    // 2 workers * 32 + 18 calls * 2 = 100 pairs: 20000-20199 holds exactly that.
    const fits = checkRtpRange(config({ VOXGATE_RTP_PORTS: '20000-20199' }), 18, null);
    expect(fits).toEqual({
      status: 'ok',
      name: 'rtp-range',
      message:
        'VOXGATE_RTP_PORTS 20000-20199 holds 100 pairs; 2 media workers keeping 64 bound ahead ' +
        'and 18 expected calls of up to 2 legs need 100',
    });
    const short = checkRtpRange(config({ VOXGATE_RTP_PORTS: '20000-20197' }), 18, null);
    expect(short.status).toBe('FAIL');
    expect(short.message).toBe(
      'VOXGATE_RTP_PORTS 20000-20197 holds 99 RTP/RTCP port pairs; 2 media workers keeping 64 ' +
        'bound ahead and 18 expected calls of up to 2 legs need 100: widen VOXGATE_RTP_PORTS ' +
        '(or lower VOXGATE_MEDIA_WORKERS or VOXGATE_EXPECTED_CALLS)',
    );
  });

  it('warns of a range inside the ports the system gives outgoing connections', () => {
    const result = checkRtpRange(config({ VOXGATE_RTP_PORTS: '40000-49999' }), 10, {
      min: 32768,
      max: 60999,
    });
    expect(result).toEqual({
      status: 'warn',
      name: 'rtp-range',
      message:
        "VOXGATE_RTP_PORTS 40000-49999 overlaps the system's ports for outgoing connections " +
        '(ip_local_port_range 32768-60999), which may take RTP ports: move VOXGATE_RTP_PORTS ' +
        'out of it',
    });
  });
});

describe('the media workers check', () => {
  it('warns when the expected calls are more than the workers carry', () => {
    expect(checkMediaWorkers(config({}), 1000, 4)).toEqual({
      status: 'warn',
      name: 'media-workers',
      message:
        '1000 expected calls on 2 media workers is 500 a worker; one carries about 400 ' +
        '(bench/README.md): raise VOXGATE_MEDIA_WORKERS (and the cores under it)',
    });
    expect(checkMediaWorkers(config({}), 800, 4).status).toBe('ok');
  });

  it('warns of more workers than cores', () => {
    expect(checkMediaWorkers(config({ VOXGATE_MEDIA_WORKERS: '8' }), 10, 2)).toEqual({
      status: 'warn',
      name: 'media-workers',
      message:
        'VOXGATE_MEDIA_WORKERS is 8 on 2 cores: workers share cores and their 20 ms ticks run ' +
        'late; lower it to 1',
    });
  });
});
