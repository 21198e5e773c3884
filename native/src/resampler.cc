#include "resampler.h"

#include <algorithm>
#include <string>

namespace voxgate {

Napi::Function Resampler::Define(Napi::Env env) {
  return DefineClass(env, "Resampler",
                     {
                         InstanceMethod<&Resampler::Process>("process"),
                         InstanceMethod<&Resampler::InputLatency>("inputLatency"),
                     });
}

// Arguments: input rate, output rate, speex quality (0-10). Checked by the caller.
Resampler::Resampler(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Resampler>(info) {
  from_rate_ = info[0].As<Napi::Number>().Uint32Value();
  to_rate_ = info[1].As<Napi::Number>().Uint32Value();
  const int quality = info[2].As<Napi::Number>().Int32Value();
  int err = 0;
  state_ = speex_resampler_init(1, static_cast<spx_uint32_t>(from_rate_),
                                static_cast<spx_uint32_t>(to_rate_), quality, &err);
  if (state_ == nullptr || err != RESAMPLER_ERR_SUCCESS) {
    throw Napi::Error::New(info.Env(),
                           std::string("speex_resampler_init: ") + speex_resampler_strerror(err));
  }
}

Resampler::~Resampler() {
  if (state_ != nullptr) speex_resampler_destroy(state_);
}

// Returns exactly floor(total input * to / from) - total output so far: the output length over
// a run never drifts from the rate ratio. Speex may then leave a few input samples unconsumed;
// they are kept and fed first on the next call.
Napi::Value Resampler::Process(const Napi::CallbackInfo& info) {
  auto pcm = info[0].As<Napi::Int16Array>();
  const size_t n = pcm.ElementLength();
  pending_.insert(pending_.end(), pcm.Data(), pcm.Data() + n);
  total_in_ += n;
  const uint64_t target = total_in_ * to_rate_ / from_rate_ - total_out_;

  auto out = Napi::Int16Array::New(info.Env(), target);
  spx_uint32_t in_len = static_cast<spx_uint32_t>(pending_.size());
  spx_uint32_t out_len = static_cast<spx_uint32_t>(target);
  const int err =
      speex_resampler_process_int(state_, 0, pending_.data(), &in_len, out.Data(), &out_len);
  if (err != RESAMPLER_ERR_SUCCESS) {
    throw Napi::Error::New(info.Env(), std::string("speex_resampler_process_int: ") +
                                           speex_resampler_strerror(err));
  }
  // Should speex ever fall short, pad by holding the last sample rather than shift the timing.
  int16_t* dst = out.Data();
  for (size_t i = out_len; i < target; i++) dst[i] = out_len > 0 ? dst[out_len - 1] : 0;
  pending_.erase(pending_.begin(), pending_.begin() + in_len);
  total_out_ += target;
  return out;
}

// Delay in input samples that the filter adds (the output starts with that much history).
Napi::Value Resampler::InputLatency(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), speex_resampler_get_input_latency(state_));
}

}  // namespace voxgate
