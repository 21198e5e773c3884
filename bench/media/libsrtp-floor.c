/*
 * What Debian's libsrtp2 costs, in C with no JavaScript boundary, to protect then unprotect
 * one RTP packet: the floor bench:srtp sets voxgate's transform against. Prints
 * "<ns per packet>" for the suite and packet size given.
 *
 * usage: libsrtp-floor 80|32 <packet bytes> <packets>
 */
#include <srtp2/srtp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static srtp_t session(int tag, srtp_ssrc_type_t direction, unsigned char *key) {
  srtp_policy_t policy;
  memset(&policy, 0, sizeof policy);
  if (tag == 32) {
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(&policy.rtp);
  } else {
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtp);
  }
  srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtcp);
  policy.ssrc.type = direction;
  policy.key = key;
  policy.window_size = 128;
  srtp_t s;
  if (srtp_create(&s, &policy) != srtp_err_status_ok) exit(1);
  return s;
}

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  const int tag = atoi(argv[1]);
  const int size = atoi(argv[2]);
  const long packets = atol(argv[3]);
  if (size < 12 || size > 1400 || packets < 1) return 2;
  unsigned char key[30];
  for (int i = 0; i < 30; i++) key[i] = (unsigned char)(i * 7 + 1);
  if (srtp_init() != srtp_err_status_ok) return 1;
  srtp_t sender = session(tag, ssrc_any_outbound, key);
  srtp_t receiver = session(tag, ssrc_any_inbound, key);
  unsigned char packet[1500];
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = 0; i < packets; i++) {
    memset(packet, 0x55, (size_t)size);
    packet[0] = 0x80;
    packet[2] = (unsigned char)(i >> 8);
    packet[3] = (unsigned char)i;
    packet[8] = 0x12;
    int length = size;
    if (srtp_protect(sender, packet, &length) != srtp_err_status_ok) return 1;
    if (srtp_unprotect(receiver, packet, &length) != srtp_err_status_ok) return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  const double ns = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
  printf("%.1f\n", ns / (double)packets);
  return 0;
}
