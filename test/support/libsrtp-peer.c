/*
 * A libsrtp2 peer for the SRTP tests: protects or unprotects the packets given on stdin, one
 * hexadecimal packet a line, and prints one line per packet: the result in hexadecimal, or
 * "ERR <libsrtp status>". One session, so indexes, rollover counters and replay windows
 * carry from line to line as they would on the wire.
 *
 * usage: libsrtp-peer protect|unprotect rtp|rtcp 80|32 <key||salt in hex>
 */
#include <srtp2/srtp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PACKET = 4096 };

static int unhex(const char *text, unsigned char *out, int max) {
  int n = 0;
  for (; text[0] && text[1] && text[0] != '\n' && n < max; text += 2) {
    unsigned int byte;
    if (sscanf(text, "%2x", &byte) != 1) return -1;
    out[n++] = (unsigned char)byte;
  }
  return n;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: libsrtp-peer protect|unprotect rtp|rtcp 80|32 keyhex\n");
    return 2;
  }
  const int protect = strcmp(argv[1], "protect") == 0;
  const int rtcp = strcmp(argv[2], "rtcp") == 0;
  unsigned char key[64];
  if (unhex(argv[4], key, sizeof key) != 30) {
    fprintf(stderr, "libsrtp-peer: the key must be 30 bytes of key and salt\n");
    return 2;
  }
  if (srtp_init() != srtp_err_status_ok) return 1;
  srtp_policy_t policy;
  memset(&policy, 0, sizeof policy);
  if (strcmp(argv[3], "32") == 0) {
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(&policy.rtp);
  } else {
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtp);
  }
  /* SRTCP keeps its 80-bit tag in both suites (RFC 5764 4.1.2). */
  srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtcp);
  policy.ssrc.type = protect ? ssrc_any_outbound : ssrc_any_inbound;
  policy.key = key;
  policy.window_size = 128;
  srtp_t session;
  if (srtp_create(&session, &policy) != srtp_err_status_ok) return 1;

  static char line[2 * MAX_PACKET + 16];
  static unsigned char packet[MAX_PACKET + SRTP_MAX_TRAILER_LEN];
  while (fgets(line, sizeof line, stdin) != NULL) {
    int length = unhex(line, packet, MAX_PACKET);
    if (length < 0) return 2;
    srtp_err_status_t status;
    if (rtcp) {
      status = protect ? srtp_protect_rtcp(session, packet, &length)
                       : srtp_unprotect_rtcp(session, packet, &length);
    } else {
      status = protect ? srtp_protect(session, packet, &length)
                       : srtp_unprotect(session, packet, &length);
    }
    if (status != srtp_err_status_ok) {
      printf("ERR %d\n", (int)status);
      continue;
    }
    for (int i = 0; i < length; i++) printf("%02x", packet[i]);
    printf("\n");
  }
  srtp_dealloc(session);
  srtp_shutdown();
  return 0;
}
