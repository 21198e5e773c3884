// The SRTP and SRTCP transform (RFC 3711) with AES-CM and HMAC-SHA1, and AES-GCM (RFC 7714),
// on OpenSSL's EVP interface. One SrtpTransform is one direction of one call leg: the master
// key and salt of that direction, the session keys derived from them once, OpenSSL contexts
// keyed once and reused for every packet, and per SSRC the packet index state and replay
// windows. Packets are transformed in place in the caller's buffer. No N-API here: the
// wrapper (srtp-context.cc) turns JavaScript buffers into pointers.
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "srtp-replay.h"

namespace voxgate {

enum class SrtpSuite : int { kAesCm128HmacSha1_80 = 0, kAesCm128HmacSha1_32 = 1, kAeadAes128Gcm = 2 };

// What an operation returns instead of a length when it refuses a packet.
enum SrtpError : int {
  kSrtpAuthFailed = -1,  // the tag did not match: forged, corrupted, or another key
  kSrtpReplayed = -2,    // index seen already, or older than the replay window
  kSrtpMalformed = -3,   // too short, not version 2, or a header longer than the packet
  kSrtpNoRoom = -4,      // protect: the buffer cannot take the tag (and SRTCP index)
};

// The key derivation labels of RFC 3711 4.3.2.
enum SrtpLabel : uint8_t {
  kLabelRtpEncryption = 0,
  kLabelRtpAuth = 1,
  kLabelRtpSalt = 2,
  kLabelRtcpEncryption = 3,
  kLabelRtcpAuth = 4,
  kLabelRtcpSalt = 5,
};

constexpr size_t kSrtpKeyLength = 16;
constexpr size_t kSrtpAuthKeyLength = 20;
constexpr size_t kSrtpCmSaltLength = 14;
constexpr size_t kSrtpGcmSaltLength = 12;
constexpr size_t kSrtpGcmTagLength = 16;
constexpr size_t kSrtcpIndexLength = 4;

// RFC 3711 4.3.1 with a key derivation rate of 0: `length` bytes of the AES-CM PRF keyed with
// the master key, its IV the master salt (zero-padded to 14 bytes, as RFC 7714 11 has it for
// 12-byte salts) with `label` XORed into byte 7. Returns false if OpenSSL fails.
bool DeriveSrtpKey(const uint8_t* master_key, const uint8_t* master_salt, size_t salt_length,
                   uint8_t label, uint8_t* out, size_t length);

class SrtpTransform {
 public:
  // `key` is 16 bytes and `salt` 14 (AES-CM) or 12 (GCM). With `derive` false they are taken
  // as the session key and salt of both RTP and RTCP, as RFC 7714's test vectors give them.
  SrtpTransform(SrtpSuite suite, const uint8_t* key, const uint8_t* salt, bool derive);
  ~SrtpTransform();
  SrtpTransform(const SrtpTransform&) = delete;
  SrtpTransform& operator=(const SrtpTransform&) = delete;

  // False when OpenSSL refused to set up a context; the transform is then unusable.
  bool ok() const { return ok_; }

  // Each returns the packet's new length, or an SrtpError. `capacity` is how many bytes the
  // buffer holds from `packet` on; a protected packet grows by the tag (and for SRTCP the
  // index), an unprotected one shrinks by as much. A packet refused by an unprotect is left as
  // it was.
  int ProtectRtp(uint8_t* packet, size_t length, size_t capacity);
  int UnprotectRtp(uint8_t* packet, size_t length);
  int ProtectRtcp(uint8_t* packet, size_t length, size_t capacity);
  int UnprotectRtcp(uint8_t* packet, size_t length);

 private:
  // Per SSRC: the highest RTP index and replay window (received, or sent, which uses only
  // the index), the SRTCP replay window, and the next SRTCP index to send.
  struct Stream {
    uint32_t ssrc = 0;
    SrtpReplayWindow rtp;
    SrtpReplayWindow rtcp;
    uint32_t next_rtcp_index = 0;
    uint64_t last_used = 0;
  };
  // Keys and OpenSSL contexts of one of RTP and RTCP.
  struct Keys {
    EVP_CIPHER_CTX* cipher = nullptr;
    EVP_MAC_CTX* mac = nullptr;
    uint8_t salt[kSrtpCmSaltLength] = {};
  };

  bool IsGcm() const { return suite_ == SrtpSuite::kAeadAes128Gcm; }
  bool SetUp(Keys& keys, const uint8_t* key, const uint8_t* auth_key, const uint8_t* salt);
  Stream* Find(uint32_t ssrc);
  Stream& FindOrAdd(uint32_t ssrc);

  // AES-CM: the keystream's IV (RFC 3711 4.1.1), applied over `data` in place.
  bool CounterMode(Keys& keys, uint32_t ssrc, uint64_t index, uint8_t* data, size_t length);
  // HMAC-SHA1 of `data` followed by `trailer` (the ROC for SRTP; nothing for SRTCP).
  bool Hmac(Keys& keys, const uint8_t* data, size_t length, const uint8_t* trailer,
            size_t trailer_length, uint8_t* tag);
  // AES-GCM: seals `data` in place and writes the 16-byte tag to `tag`, or opens it (checking
  // `tag`) into scratch_ and copies it back only once the tag matched.
  bool GcmSeal(Keys& keys, const uint8_t* iv, const uint8_t* aad, size_t aad_length,
               const uint8_t* aad2, size_t aad2_length, uint8_t* data, size_t length,
               uint8_t* tag);
  bool GcmOpen(Keys& keys, const uint8_t* iv, const uint8_t* aad, size_t aad_length,
               const uint8_t* aad2, size_t aad2_length, uint8_t* data, size_t length,
               const uint8_t* tag);

  SrtpSuite suite_;
  size_t rtp_tag_length_;
  size_t rtcp_tag_length_;
  bool ok_ = false;
  Keys rtp_;
  Keys rtcp_;
  std::vector<Stream> streams_;
  uint64_t uses_ = 0;
  std::vector<uint8_t> scratch_;
};

}  // namespace voxgate
