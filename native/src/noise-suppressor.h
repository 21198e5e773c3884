// Noise suppression over libwebrtc-audio-processing (0.3), one object per call leg.
#pragma once
#include <napi.h>

#include <memory>
#include <vector>

namespace webrtc {
class AudioProcessing;
}

namespace voxgate {

class NoiseSuppressor : public Napi::ObjectWrap<NoiseSuppressor> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit NoiseSuppressor(const Napi::CallbackInfo& info);
  ~NoiseSuppressor() override;

 private:
  Napi::Value Process(const Napi::CallbackInfo& info);

  webrtc::AudioProcessing* apm_ = nullptr;
  int rate_ = 0;
  std::vector<float> buffer_;
};

}  // namespace voxgate
