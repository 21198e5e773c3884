// Packet indexes and replay windows for SRTP (RFC 3711 3.3.1, 3.3.2 and appendix A). Pure
// arithmetic, no crypto: the transform checks a packet against these before authenticating it
// and records it only once it has been authenticated.
#pragma once

#include <cstdint>

namespace voxgate {

// RFC 3711 appendix A: the receiver's guess of a packet's 48-bit index from its 16-bit SEQ and
// the highest index authenticated so far (ROC || s_l). Negative when the guess is ROC - 1 with a
// ROC of 0, an index no sender ever used.
inline int64_t EstimateSrtpIndex(uint64_t highest, uint16_t seq) {
  const int64_t roc = static_cast<int64_t>(highest >> 16);
  const uint32_t s_l = static_cast<uint32_t>(highest & 0xffff);
  int64_t v = roc;
  if (s_l < 32768) {
    if (seq > s_l && seq - s_l > 32768) v = roc - 1;
  } else {
    if (s_l - 32768 > seq) v = roc + 1;
  }
  return v * 65536 + seq;
}

// A sliding window of the last 128 indexes at or below the highest one accepted (RFC 3711
// 3.3.2). Bit i of the bitmap stands for index highest - i.
class SrtpReplayWindow {
 public:
  static constexpr int64_t kSize = 128;

  bool empty() const { return empty_; }
  uint64_t highest() const { return highest_; }

  // Whether `index` may be accepted: newer than the highest, or inside the window and not seen.
  bool Admits(int64_t index) const {
    if (index < 0) return false;
    if (empty_) return true;
    const int64_t delta = index - static_cast<int64_t>(highest_);
    if (delta > 0) return true;
    if (-delta >= kSize) return false;
    return !Has(static_cast<int>(-delta));
  }

  // Records an authenticated index (one that Admits took).
  void Accept(uint64_t index) {
    if (empty_) {
      empty_ = false;
      highest_ = index;
      bits_[0] = 1;
      bits_[1] = 0;
      return;
    }
    const int64_t delta = static_cast<int64_t>(index) - static_cast<int64_t>(highest_);
    if (delta > 0) {
      Shift(delta);
      highest_ = index;
      bits_[0] |= 1;
    } else {
      const int i = static_cast<int>(-delta);
      bits_[i / 64] |= uint64_t{1} << (i % 64);
    }
  }

 private:
  bool Has(int i) const { return (bits_[i / 64] >> (i % 64)) & 1; }

  void Shift(int64_t n) {
    if (n >= kSize) {
      bits_[0] = bits_[1] = 0;
    } else if (n >= 64) {
      bits_[1] = bits_[0] << (n - 64);
      bits_[0] = 0;
    } else {
      bits_[1] = (bits_[1] << n) | (bits_[0] >> (64 - n));
      bits_[0] <<= n;
    }
  }

  bool empty_ = true;
  uint64_t highest_ = 0;
  uint64_t bits_[2] = {0, 0};
};

}  // namespace voxgate
