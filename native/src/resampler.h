// Streaming mono int16 resampler over libspeexdsp, one object per direction of a call.
#pragma once
#include <napi.h>
#include <speex/speex_resampler.h>

#include <cstdint>
#include <vector>

namespace voxgate {

class Resampler : public Napi::ObjectWrap<Resampler> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit Resampler(const Napi::CallbackInfo& info);
  ~Resampler() override;

 private:
  Napi::Value Process(const Napi::CallbackInfo& info);
  Napi::Value InputLatency(const Napi::CallbackInfo& info);

  SpeexResamplerState* state_ = nullptr;
  uint64_t from_rate_ = 0;
  uint64_t to_rate_ = 0;
  uint64_t total_in_ = 0;
  uint64_t total_out_ = 0;
  std::vector<int16_t> pending_;  // input speex did not consume yet
};

}  // namespace voxgate
