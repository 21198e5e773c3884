#include "srtp.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include <algorithm>
#include <cstring>

namespace voxgate {

namespace {

// Streams kept per transform: a leg has one or two sources; the cap bounds what a peer holding
// the key can make us keep. The least recently used stream goes first.
constexpr size_t kMaxStreams = 32;
constexpr size_t kSha1Length = 20;
// RFC 3711 9.2: one master key protects at most 2^48 SRTP and 2^31 SRTCP packets; past that
// only a new key may go on.
constexpr int64_t kMaxRtpIndex = (int64_t{1} << 48) - 1;
constexpr uint32_t kMaxRtcpIndex = 0x7fffffff;

uint32_t ReadU32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

void WriteU32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

//  0                   1                   2                   3
//  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
// |                           timestamp                           |
// |           synchronization source (SSRC) identifier            |
// |            contributing source (CSRC) identifiers (CC)        |
// |      defined by profile       |           length              |  (X)
// |                        header extension                       |  (X)
// The header's length, CSRCs and extension included (RFC 3711 3.1: encryption starts after
// it), or 0 when the packet is not RTP version 2 or is shorter than its header says.
size_t RtpHeaderLength(const uint8_t* p, size_t length) {
  if (length < 12 || (p[0] >> 6) != 2) return 0;
  size_t header = 12 + 4 * static_cast<size_t>(p[0] & 0x0f);
  if (p[0] & 0x10) {
    if (length < header + 4) return 0;
    header += 4 + 4 * ((static_cast<size_t>(p[header + 2]) << 8) | p[header + 3]);
  }
  return header <= length ? header : 0;
}

int64_t NextIndex(const SrtpReplayWindow& window, uint16_t seq) {
  return window.empty() ? seq : EstimateSrtpIndex(window.highest(), seq);
}

}  // namespace

bool DeriveSrtpKey(const uint8_t* master_key, const uint8_t* master_salt, size_t salt_length,
                   uint8_t label, uint8_t* out, size_t length) {
  // RFC 3711 4.3.1: key_id = <label> || r (r = 0 with a KDR of 0); x = key_id XOR master_salt;
  // the key is AES-CM with IV x * 2^16 over zeros.
  uint8_t iv[16] = {};
  std::memcpy(iv, master_salt, std::min(salt_length, kSrtpCmSaltLength));
  iv[7] ^= label;
  std::memset(out, 0, length);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int written = 0;
  const bool ok = ctx != nullptr &&
                  EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), nullptr, master_key, iv) == 1 &&
                  EVP_EncryptUpdate(ctx, out, &written, out, static_cast<int>(length)) == 1;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

SrtpTransform::SrtpTransform(SrtpSuite suite, const uint8_t* key, const uint8_t* salt,
                             bool derive)
    : suite_(suite),
      rtp_tag_length_(suite == SrtpSuite::kAesCm128HmacSha1_80   ? 10
                      : suite == SrtpSuite::kAesCm128HmacSha1_32 ? 4
                                                                  : kSrtpGcmTagLength),
      // RFC 4568 6.2.2, RFC 5764 4.1.2: SRTCP keeps the 80-bit tag in the _32 suite.
      rtcp_tag_length_(IsGcm() ? kSrtpGcmTagLength : 10) {
  const size_t salt_length = IsGcm() ? kSrtpGcmSaltLength : kSrtpCmSaltLength;
  uint8_t rtp_key[kSrtpKeyLength], rtcp_key[kSrtpKeyLength];
  uint8_t rtp_auth[kSrtpAuthKeyLength] = {}, rtcp_auth[kSrtpAuthKeyLength] = {};
  uint8_t rtp_salt[kSrtpCmSaltLength] = {}, rtcp_salt[kSrtpCmSaltLength] = {};
  bool derived = true;
  if (derive) {
    derived = DeriveSrtpKey(key, salt, salt_length, kLabelRtpEncryption, rtp_key, 16) &&
              DeriveSrtpKey(key, salt, salt_length, kLabelRtpAuth, rtp_auth, 20) &&
              DeriveSrtpKey(key, salt, salt_length, kLabelRtpSalt, rtp_salt, salt_length) &&
              DeriveSrtpKey(key, salt, salt_length, kLabelRtcpEncryption, rtcp_key, 16) &&
              DeriveSrtpKey(key, salt, salt_length, kLabelRtcpAuth, rtcp_auth, 20) &&
              DeriveSrtpKey(key, salt, salt_length, kLabelRtcpSalt, rtcp_salt, salt_length);
  } else {
    std::memcpy(rtp_key, key, kSrtpKeyLength);
    std::memcpy(rtcp_key, key, kSrtpKeyLength);
    std::memcpy(rtp_salt, salt, salt_length);
    std::memcpy(rtcp_salt, salt, salt_length);
  }
  ok_ = derived && SetUp(rtp_, rtp_key, rtp_auth, rtp_salt) &&
        SetUp(rtcp_, rtcp_key, rtcp_auth, rtcp_salt);
  for (uint8_t* secret : {rtp_key, rtcp_key}) OPENSSL_cleanse(secret, kSrtpKeyLength);
  for (uint8_t* secret : {rtp_auth, rtcp_auth}) OPENSSL_cleanse(secret, kSrtpAuthKeyLength);
  for (uint8_t* secret : {rtp_salt, rtcp_salt}) OPENSSL_cleanse(secret, kSrtpCmSaltLength);
  streams_.reserve(4);
}

SrtpTransform::~SrtpTransform() {
  for (Keys* keys : {&rtp_, &rtcp_}) {
    EVP_CIPHER_CTX_free(keys->cipher);
    EVP_MAC_CTX_free(keys->mac);
    OPENSSL_cleanse(keys->salt, sizeof keys->salt);
  }
}

bool SrtpTransform::SetUp(Keys& keys, const uint8_t* key, const uint8_t* auth_key,
                          const uint8_t* salt) {
  std::memcpy(keys.salt, salt, kSrtpCmSaltLength);
  keys.cipher = EVP_CIPHER_CTX_new();
  if (keys.cipher == nullptr) return false;
  const EVP_CIPHER* cipher = IsGcm() ? EVP_aes_128_gcm() : EVP_aes_128_ctr();
  if (EVP_EncryptInit_ex(keys.cipher, cipher, nullptr, key, nullptr) != 1) return false;
  if (IsGcm()) return true;
  EVP_MAC* hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (hmac == nullptr) return false;
  keys.mac = EVP_MAC_CTX_new(hmac);
  EVP_MAC_free(hmac);  // the context holds its own reference
  char digest[] = "SHA1";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  return keys.mac != nullptr && EVP_MAC_init(keys.mac, auth_key, kSrtpAuthKeyLength, params) == 1;
}

SrtpTransform::Stream* SrtpTransform::Find(uint32_t ssrc) {
  auto found = std::find_if(streams_.begin(), streams_.end(),
                            [ssrc](const Stream& stream) { return stream.ssrc == ssrc; });
  if (found == streams_.end()) return nullptr;
  found->last_used = ++uses_;
  return &*found;
}

SrtpTransform::Stream& SrtpTransform::FindOrAdd(uint32_t ssrc) {
  Stream* found = Find(ssrc);
  if (found != nullptr) return *found;
  if (streams_.size() >= kMaxStreams) {
    auto oldest = std::min_element(
        streams_.begin(), streams_.end(),
        [](const Stream& a, const Stream& b) { return a.last_used < b.last_used; });
    streams_.erase(oldest);
  }
  Stream stream;
  stream.ssrc = ssrc;
  stream.last_used = ++uses_;
  streams_.push_back(stream);
  return streams_.back();
}

bool SrtpTransform::CounterMode(Keys& keys, uint32_t ssrc, uint64_t index, uint8_t* data,
                                size_t length) {
  // RFC 3711 4.1.1: IV = (k_s * 2^16) XOR (SSRC * 2^64) XOR (i * 2^16).
  uint8_t iv[16] = {};
  std::memcpy(iv, keys.salt, kSrtpCmSaltLength);
  for (int b = 0; b < 4; b++) iv[4 + b] ^= static_cast<uint8_t>(ssrc >> (24 - 8 * b));
  for (int b = 0; b < 6; b++) iv[8 + b] ^= static_cast<uint8_t>(index >> (40 - 8 * b));
  int written = 0;
  return EVP_EncryptInit_ex(keys.cipher, nullptr, nullptr, nullptr, iv) == 1 &&
         (length == 0 ||
          EVP_EncryptUpdate(keys.cipher, data, &written, data, static_cast<int>(length)) == 1);
}

bool SrtpTransform::Hmac(Keys& keys, const uint8_t* data, size_t length, const uint8_t* trailer,
                         size_t trailer_length, uint8_t* tag) {
  size_t written = 0;
  return EVP_MAC_init(keys.mac, nullptr, 0, nullptr) == 1 &&
         EVP_MAC_update(keys.mac, data, length) == 1 &&
         (trailer_length == 0 || EVP_MAC_update(keys.mac, trailer, trailer_length) == 1) &&
         EVP_MAC_final(keys.mac, tag, &written, kSha1Length) == 1;
}

bool SrtpTransform::GcmSeal(Keys& keys, const uint8_t* iv, const uint8_t* aad,
                            size_t aad_length, const uint8_t* aad2, size_t aad2_length,
                            uint8_t* data, size_t length, uint8_t* tag) {
  EVP_CIPHER_CTX* ctx = keys.cipher;
  int written = 0;
  uint8_t none[16];
  return EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, iv) == 1 &&
         EVP_EncryptUpdate(ctx, nullptr, &written, aad, static_cast<int>(aad_length)) == 1 &&
         (aad2_length == 0 ||
          EVP_EncryptUpdate(ctx, nullptr, &written, aad2, static_cast<int>(aad2_length)) == 1) &&
         (length == 0 ||
          EVP_EncryptUpdate(ctx, data, &written, data, static_cast<int>(length)) == 1) &&
         EVP_EncryptFinal_ex(ctx, none, &written) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, kSrtpGcmTagLength, tag) == 1;
}

bool SrtpTransform::GcmOpen(Keys& keys, const uint8_t* iv, const uint8_t* aad,
                            size_t aad_length, const uint8_t* aad2, size_t aad2_length,
                            uint8_t* data, size_t length, const uint8_t* tag) {
  EVP_CIPHER_CTX* ctx = keys.cipher;
  if (scratch_.size() < length + 16) scratch_.resize(length + 16);
  uint8_t expected[kSrtpGcmTagLength];
  std::memcpy(expected, tag, kSrtpGcmTagLength);
  int written = 0;
  const bool opened =
      EVP_DecryptInit_ex(ctx, nullptr, nullptr, nullptr, iv) == 1 &&
      EVP_DecryptUpdate(ctx, nullptr, &written, aad, static_cast<int>(aad_length)) == 1 &&
      (aad2_length == 0 ||
       EVP_DecryptUpdate(ctx, nullptr, &written, aad2, static_cast<int>(aad2_length)) == 1) &&
      (length == 0 || EVP_DecryptUpdate(ctx, scratch_.data(), &written, data,
                                        static_cast<int>(length)) == 1) &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, kSrtpGcmTagLength, expected) == 1 &&
      EVP_DecryptFinal_ex(ctx, scratch_.data() + length, &written) == 1;
  // A packet whose tag fails releases nothing: the caller's bytes stay as they came, so it
  // may try them with another context (a rekey) or log them.
  if (opened && length > 0) std::memcpy(data, scratch_.data(), length);
  return opened;
}

// RFC 7714 8.1 (SRTP): IV = (00 00 || SSRC || ROC || SEQ) XOR salt; 9.1 (SRTCP):
// IV = (00 00 || SSRC || 00 00 || 0 || SRTCP index) XOR salt. `low` is ROC || SEQ or the index.
static void GcmIv(const uint8_t* salt, uint32_t ssrc, uint64_t low, uint8_t* iv) {
  std::memcpy(iv, salt, kSrtpGcmSaltLength);
  for (int b = 0; b < 4; b++) iv[2 + b] ^= static_cast<uint8_t>(ssrc >> (24 - 8 * b));
  for (int b = 0; b < 6; b++) iv[6 + b] ^= static_cast<uint8_t>(low >> (40 - 8 * b));
}

int SrtpTransform::ProtectRtp(uint8_t* packet, size_t length, size_t capacity) {
  const size_t header = RtpHeaderLength(packet, length);
  if (header == 0) return kSrtpMalformed;
  if (capacity < length + rtp_tag_length_) return kSrtpNoRoom;
  const uint32_t ssrc = ReadU32(packet + 8);
  const uint16_t seq = static_cast<uint16_t>((packet[2] << 8) | packet[3]);
  Stream& stream = FindOrAdd(ssrc);
  const int64_t index = NextIndex(stream.rtp, seq);
  // RFC 3711 3.3.1: an index is never used twice with one key (the keystream would repeat).
  if (!stream.rtp.Admits(index)) return kSrtpReplayed;
  if (index > kMaxRtpIndex) return kSrtpReplayed;
  uint8_t* tag = packet + length;
  if (IsGcm()) {
    uint8_t iv[kSrtpGcmSaltLength];
    GcmIv(rtp_.salt, ssrc, static_cast<uint64_t>(index), iv);
    if (!GcmSeal(rtp_, iv, packet, header, nullptr, 0, packet + header, length - header, tag))
      return kSrtpAuthFailed;
  } else {
    uint8_t roc[4], full[kSha1Length];
    WriteU32(roc, static_cast<uint32_t>(index >> 16));
    // RFC 3711 4.2: the tag covers the header and encrypted payload, then the ROC.
    if (!CounterMode(rtp_, ssrc, index, packet + header, length - header) ||
        !Hmac(rtp_, packet, length, roc, 4, full))
      return kSrtpAuthFailed;
    std::memcpy(tag, full, rtp_tag_length_);
  }
  stream.rtp.Accept(static_cast<uint64_t>(index));
  return static_cast<int>(length + rtp_tag_length_);
}

int SrtpTransform::UnprotectRtp(uint8_t* packet, size_t length) {
  const size_t header = RtpHeaderLength(packet, length);
  if (header == 0 || length < header + rtp_tag_length_) return kSrtpMalformed;
  const uint32_t ssrc = ReadU32(packet + 8);
  const uint16_t seq = static_cast<uint16_t>((packet[2] << 8) | packet[3]);
  Stream* stream = Find(ssrc);
  // RFC 3711 3.3.1: a stream's first packet has ROC 0 (no ROC is signalled to us).
  const int64_t index = stream != nullptr ? NextIndex(stream->rtp, seq) : seq;
  // RFC 3711 3.3.2: the replay check comes before the authentication.
  if (stream != nullptr && !stream->rtp.Admits(index)) return kSrtpReplayed;
  const size_t body = length - rtp_tag_length_;
  const uint8_t* tag = packet + body;
  if (IsGcm()) {
    uint8_t iv[kSrtpGcmSaltLength];
    GcmIv(rtp_.salt, ssrc, static_cast<uint64_t>(index), iv);
    if (!GcmOpen(rtp_, iv, packet, header, nullptr, 0, packet + header, body - header, tag))
      return kSrtpAuthFailed;
  } else {
    uint8_t roc[4], full[kSha1Length];
    WriteU32(roc, static_cast<uint32_t>(index >> 16));
    // RFC 3711 3.3, steps 5 and 6: the tag is verified before anything is decrypted.
    if (!Hmac(rtp_, packet, body, roc, 4, full) ||
        CRYPTO_memcmp(full, tag, rtp_tag_length_) != 0)
      return kSrtpAuthFailed;
    if (!CounterMode(rtp_, ssrc, index, packet + header, body - header)) return kSrtpAuthFailed;
  }
  // Only an authenticated packet makes or moves a stream's state.
  (stream != nullptr ? *stream : FindOrAdd(ssrc)).rtp.Accept(static_cast<uint64_t>(index));
  return static_cast<int>(body);
}

//  0                   1                   2                   3
// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
// |V=2|P|    RC   |   PT=SR=200   |             length            |
// |                         SSRC of sender                        |
// |                  ... (encrypted from here) ...                |
// |E|                         SRTCP index                         |  (AES-CM: then the tag)
// AEAD (RFC 7714 9): header, ciphertext, the 16-byte tag, then E || SRTCP index.
int SrtpTransform::ProtectRtcp(uint8_t* packet, size_t length, size_t capacity) {
  if (length < 8 || (packet[0] >> 6) != 2) return kSrtpMalformed;
  if (capacity < length + kSrtcpIndexLength + rtcp_tag_length_) return kSrtpNoRoom;
  const uint32_t ssrc = ReadU32(packet + 4);
  Stream& stream = FindOrAdd(ssrc);
  if (stream.next_rtcp_index > kMaxRtcpIndex) return kSrtpReplayed;
  const uint32_t index = stream.next_rtcp_index++;
  uint8_t e_index[4];
  WriteU32(e_index, 0x80000000u | index);  // we always encrypt: E = 1
  if (IsGcm()) {
    uint8_t iv[kSrtpGcmSaltLength];
    GcmIv(rtcp_.salt, ssrc, index, iv);
    // RFC 7714 9.2: the AAD is the first 8 octets and the E || SRTCP index word.
    if (!GcmSeal(rtcp_, iv, packet, 8, e_index, 4, packet + 8, length - 8, packet + length))
      return kSrtpAuthFailed;
    std::memcpy(packet + length + kSrtpGcmTagLength, e_index, 4);
  } else {
    uint8_t full[kSha1Length];
    std::memcpy(packet + length, e_index, 4);
    if (!CounterMode(rtcp_, ssrc, index, packet + 8, length - 8) ||
        !Hmac(rtcp_, packet, length + 4, nullptr, 0, full))
      return kSrtpAuthFailed;
    std::memcpy(packet + length + 4, full, rtcp_tag_length_);
  }
  return static_cast<int>(length + kSrtcpIndexLength + rtcp_tag_length_);
}

int SrtpTransform::UnprotectRtcp(uint8_t* packet, size_t length) {
  const size_t overhead = kSrtcpIndexLength + rtcp_tag_length_;
  if (length < 8 + overhead || (packet[0] >> 6) != 2) return kSrtpMalformed;
  const size_t body = length - overhead;
  const uint8_t* e_index = IsGcm() ? packet + length - 4 : packet + body;
  const uint8_t* tag = IsGcm() ? packet + body : packet + body + 4;
  const bool encrypted = (e_index[0] & 0x80) != 0;
  const uint32_t index = ReadU32(e_index) & kMaxRtcpIndex;
  const uint32_t ssrc = ReadU32(packet + 4);
  Stream* stream = Find(ssrc);
  if (stream != nullptr && !stream->rtcp.Admits(index)) return kSrtpReplayed;
  if (IsGcm()) {
    uint8_t iv[kSrtpGcmSaltLength];
    GcmIv(rtcp_.salt, ssrc, index, iv);
    // RFC 7714 9.3: unencrypted (E = 0), the whole packet is AAD and only the tag is checked.
    const bool opened =
        encrypted ? GcmOpen(rtcp_, iv, packet, 8, e_index, 4, packet + 8, body - 8, tag)
                  : GcmOpen(rtcp_, iv, packet, body, e_index, 4, packet + body, 0, tag);
    if (!opened) return kSrtpAuthFailed;
  } else {
    uint8_t full[kSha1Length];
    if (!Hmac(rtcp_, packet, body + 4, nullptr, 0, full) ||
        CRYPTO_memcmp(full, tag, rtcp_tag_length_) != 0)
      return kSrtpAuthFailed;
    if (encrypted && !CounterMode(rtcp_, ssrc, index, packet + 8, body - 8))
      return kSrtpAuthFailed;
  }
  (stream != nullptr ? *stream : FindOrAdd(ssrc)).rtcp.Accept(index);
  return static_cast<int>(body);
}

}  // namespace voxgate
