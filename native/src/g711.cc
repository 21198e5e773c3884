#include "g711.h"

#include <cstdint>

namespace voxgate {
namespace {

// One byte per 16-bit linear value (indexed by the sample as uint16) and one 16-bit value per
// code: 64 KiB + 512 B per law, filled once when the addon loads.
uint8_t mu_encode_table[65536];
int16_t mu_decode_table[256];
uint8_t a_encode_table[65536];
int16_t a_decode_table[256];

// G.711 mu-law: 14-bit magnitude, biased by 33 (132 on the 16-bit scale) so that the segment
// end points fall on powers of two; eight segments of sixteen steps; all bits inverted on the
// line.
uint8_t MuLawFromLinear(int32_t sample) {
  constexpr int32_t kBias = 0x84;
  constexpr int32_t kClip = 32635;
  const int32_t sign = sample < 0 ? 0x80 : 0x00;
  int32_t magnitude = sample < 0 ? -sample : sample;
  if (magnitude > kClip) magnitude = kClip;
  magnitude += kBias;
  int32_t segment = 7;
  for (int32_t mask = 0x4000; (magnitude & mask) == 0 && segment > 0; mask >>= 1) segment--;
  const int32_t step = (magnitude >> (segment + 3)) & 0x0F;
  return static_cast<uint8_t>(~(sign | (segment << 4) | step));
}

int16_t LinearFromMuLaw(uint8_t code) {
  const int32_t inverted = ~code & 0xFF;
  const int32_t segment = (inverted >> 4) & 0x07;
  const int32_t step = inverted & 0x0F;
  // Decision value in the middle of the step, then the bias removed.
  const int32_t magnitude = (((step << 3) + 0x84) << segment) - 0x84;
  return static_cast<int16_t>((inverted & 0x80) ? -magnitude : magnitude);
}

// G.711 A-law: 13-bit magnitude (the 16-bit sample shifted right by 3), segment 0 and 1 share
// one step size; even bits inverted on the line (XOR 0x55), sign bit set for positive values.
uint8_t ALawFromLinear(int32_t sample) {
  const int32_t sign = sample >= 0 ? 0x80 : 0x00;
  int32_t magnitude = sample >= 0 ? sample : -sample - 1;
  magnitude >>= 3;  // 13-bit scale
  if (magnitude > 0x0FFF) magnitude = 0x0FFF;
  int32_t segment = 0;
  int32_t step;
  if (magnitude < 32) {
    step = magnitude >> 1;
  } else {
    segment = 1;
    for (int32_t m = magnitude >> 6; m != 0; m >>= 1) segment++;
    step = (magnitude >> segment) & 0x0F;
  }
  return static_cast<uint8_t>((sign | (segment << 4) | step) ^ 0x55);
}

int16_t LinearFromALaw(uint8_t code) {
  const int32_t value = code ^ 0x55;
  const int32_t segment = (value >> 4) & 0x07;
  const int32_t step = value & 0x0F;
  // Middle of the step on the 13-bit scale, then back to 16 bits.
  int32_t magnitude = (step << 1) + 1;
  if (segment > 0) magnitude = (magnitude + 32) << (segment - 1);
  magnitude <<= 3;
  return static_cast<int16_t>((value & 0x80) ? magnitude : -magnitude);
}

template <const uint8_t* Table>
Napi::Value Encode(const Napi::CallbackInfo& info) {
  auto pcm = info[0].As<Napi::Int16Array>();
  const size_t n = pcm.ElementLength();
  auto out = Napi::Buffer<uint8_t>::New(info.Env(), n);
  const int16_t* in = pcm.Data();
  uint8_t* dst = out.Data();
  for (size_t i = 0; i < n; i++) dst[i] = Table[static_cast<uint16_t>(in[i])];
  return out;
}

template <const int16_t* Table>
Napi::Value Decode(const Napi::CallbackInfo& info) {
  auto codes = info[0].As<Napi::Uint8Array>();
  const size_t n = codes.ElementLength();
  auto out = Napi::Int16Array::New(info.Env(), n);
  const uint8_t* in = codes.Data();
  int16_t* dst = out.Data();
  for (size_t i = 0; i < n; i++) dst[i] = Table[in[i]];
  return out;
}

}  // namespace

void InitG711Tables() {
  for (int32_t i = 0; i < 65536; i++) {
    const int32_t sample = static_cast<int16_t>(static_cast<uint16_t>(i));
    mu_encode_table[i] = MuLawFromLinear(sample);
    a_encode_table[i] = ALawFromLinear(sample);
  }
  for (int32_t code = 0; code < 256; code++) {
    mu_decode_table[code] = LinearFromMuLaw(static_cast<uint8_t>(code));
    a_decode_table[code] = LinearFromALaw(static_cast<uint8_t>(code));
  }
}

Napi::Value MuLawEncode(const Napi::CallbackInfo& info) { return Encode<mu_encode_table>(info); }
Napi::Value MuLawDecode(const Napi::CallbackInfo& info) { return Decode<mu_decode_table>(info); }
Napi::Value ALawEncode(const Napi::CallbackInfo& info) { return Encode<a_encode_table>(info); }
Napi::Value ALawDecode(const Napi::CallbackInfo& info) { return Decode<a_decode_table>(info); }

}  // namespace voxgate
