#include "frame.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace voxgate {
namespace {

inline int16_t Saturate(int64_t v) {
  if (v > INT16_MAX) return INT16_MAX;
  if (v < INT16_MIN) return INT16_MIN;
  return static_cast<int16_t>(v);
}

}  // namespace

// RFC 3551 4.5.11: L16 samples are sent most significant byte first. Read byte by byte so the
// result is right whatever the host's order.
Napi::Value L16FromNetwork(const Napi::CallbackInfo& info) {
  auto bytes = info[0].As<Napi::Uint8Array>();
  const size_t n = bytes.ElementLength() / 2;
  auto out = Napi::Int16Array::New(info.Env(), n);
  const uint8_t* in = bytes.Data();
  int16_t* dst = out.Data();
  for (size_t i = 0; i < n; i++) {
    dst[i] = static_cast<int16_t>(static_cast<uint16_t>((in[2 * i] << 8) | in[2 * i + 1]));
  }
  return out;
}

Napi::Value L16ToNetwork(const Napi::CallbackInfo& info) {
  auto pcm = info[0].As<Napi::Int16Array>();
  const size_t n = pcm.ElementLength();
  auto out = Napi::Buffer<uint8_t>::New(info.Env(), n * 2);
  const int16_t* in = pcm.Data();
  uint8_t* dst = out.Data();
  for (size_t i = 0; i < n; i++) {
    const auto v = static_cast<uint16_t>(in[i]);
    dst[2 * i] = static_cast<uint8_t>(v >> 8);
    dst[2 * i + 1] = static_cast<uint8_t>(v & 0xFF);
  }
  return out;
}

// Sums every frame at full precision and saturates once, so the result does not depend on the
// order of the sources. Frames have equal lengths (checked by the caller).
Napi::Value Mix(const Napi::CallbackInfo& info) {
  auto frames = info[0].As<Napi::Array>();
  const uint32_t count = frames.Length();
  const size_t n = count == 0 ? 0 : frames.Get(0u).As<Napi::Int16Array>().ElementLength();
  std::vector<int32_t> sum(n, 0);
  for (uint32_t f = 0; f < count; f++) {
    auto frame = frames.Get(f).As<Napi::Int16Array>();
    const int16_t* in = frame.Data();
    for (size_t i = 0; i < n; i++) sum[i] += in[i];
  }
  auto out = Napi::Int16Array::New(info.Env(), n);
  int16_t* dst = out.Data();
  for (size_t i = 0; i < n; i++) dst[i] = Saturate(sum[i]);
  return out;
}

// Multiplies by a linear factor, rounding to nearest and saturating.
Napi::Value Gain(const Napi::CallbackInfo& info) {
  auto pcm = info[0].As<Napi::Int16Array>();
  const double factor = info[1].As<Napi::Number>().DoubleValue();
  const size_t n = pcm.ElementLength();
  auto out = Napi::Int16Array::New(info.Env(), n);
  const int16_t* in = pcm.Data();
  int16_t* dst = out.Data();
  for (size_t i = 0; i < n; i++) dst[i] = Saturate(std::llround(in[i] * factor));
  return out;
}

// RMS relative to 32768, so a full-scale square wave is 0 dBFS and a full-scale sine -3.01.
Napi::Value EnergyDbfs(const Napi::CallbackInfo& info) {
  auto pcm = info[0].As<Napi::Int16Array>();
  const size_t n = pcm.ElementLength();
  const int16_t* in = pcm.Data();
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += static_cast<double>(in[i]) * in[i];
  if (n == 0 || sum == 0) {
    return Napi::Number::New(info.Env(), -std::numeric_limits<double>::infinity());
  }
  const double mean_square = sum / static_cast<double>(n) / (32768.0 * 32768.0);
  return Napi::Number::New(info.Env(), 10.0 * std::log10(mean_square));
}

}  // namespace voxgate
