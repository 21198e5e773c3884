#include "noise-suppressor.h"

#include <webrtc/modules/audio_processing/include/audio_processing.h>

#include <cmath>
#include <string>

namespace voxgate {

Napi::Function NoiseSuppressor::Define(Napi::Env env) {
  return DefineClass(env, "NoiseSuppressor",
                     {InstanceMethod<&NoiseSuppressor::Process>("process")});
}

// Arguments: sample rate, level index 0-3 (kLow, kModerate, kHigh, kVeryHigh). The mapping from
// noise_cancellation_level is the caller's. Only noise suppression is enabled: no echo
// cancellation, gain control or high-pass filter.
NoiseSuppressor::NoiseSuppressor(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<NoiseSuppressor>(info) {
  rate_ = info[0].As<Napi::Number>().Int32Value();
  const int level = info[1].As<Napi::Number>().Int32Value();
  apm_ = webrtc::AudioProcessing::Create();
  if (apm_ == nullptr) throw Napi::Error::New(info.Env(), "AudioProcessing::Create failed");
  // The float interface accepts any rate; the library processes at the next of its native
  // rates (8, 16, 32, 48 kHz) and converts back, which is what happens at 24 kHz.
  const webrtc::StreamConfig stream(rate_, 1);
  const webrtc::ProcessingConfig config = {{stream, stream, stream, stream}};
  int err = apm_->Initialize(config);
  if (err == webrtc::AudioProcessing::kNoError) {
    err = apm_->noise_suppression()->set_level(
        static_cast<webrtc::NoiseSuppression::Level>(level));
  }
  if (err == webrtc::AudioProcessing::kNoError) err = apm_->noise_suppression()->Enable(true);
  if (err != webrtc::AudioProcessing::kNoError) {
    delete apm_;
    apm_ = nullptr;
    throw Napi::Error::New(info.Env(),
                           "AudioProcessing setup failed with error " + std::to_string(err));
  }
  buffer_.resize(stream.num_frames());
}

NoiseSuppressor::~NoiseSuppressor() { delete apm_; }

// One 10 ms frame of int16 in, one out (a new array).
Napi::Value NoiseSuppressor::Process(const Napi::CallbackInfo& info) {
  auto pcm = info[0].As<Napi::Int16Array>();
  const size_t n = buffer_.size();
  const int16_t* in = pcm.Data();
  for (size_t i = 0; i < n; i++) buffer_[i] = in[i] / 32768.0f;
  float* channels[1] = {buffer_.data()};
  const webrtc::StreamConfig stream(rate_, 1);
  const int err = apm_->ProcessStream(channels, stream, stream, channels);
  if (err != webrtc::AudioProcessing::kNoError) {
    throw Napi::Error::New(info.Env(), "ProcessStream failed with error " + std::to_string(err));
  }
  auto out = Napi::Int16Array::New(info.Env(), n);
  int16_t* dst = out.Data();
  for (size_t i = 0; i < n; i++) {
    const float v = std::nearbyint(buffer_[i] * 32768.0f);
    dst[i] = static_cast<int16_t>(v > 32767.0f ? 32767.0f : (v < -32768.0f ? -32768.0f : v));
  }
  return out;
}

}  // namespace voxgate
