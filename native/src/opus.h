// Opus (RFC 6716) over libopus: a mono VoIP encoder and a decoder, one of each per call leg.
#pragma once
#include <napi.h>
#include <opus/opus.h>

#include <vector>

namespace voxgate {

class OpusEncoderWrap : public Napi::ObjectWrap<OpusEncoderWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit OpusEncoderWrap(const Napi::CallbackInfo& info);
  ~OpusEncoderWrap() override;

 private:
  Napi::Value Encode(const Napi::CallbackInfo& info);
  Napi::Value SetBitrate(const Napi::CallbackInfo& info);
  Napi::Value SetPacketLoss(const Napi::CallbackInfo& info);
  Napi::Value SetMaxBandwidth(const Napi::CallbackInfo& info);
  Napi::Value SetComplexity(const Napi::CallbackInfo& info);
  Napi::Value Reset(const Napi::CallbackInfo& info);

  OpusEncoder* encoder_ = nullptr;
  std::vector<unsigned char> packet_;
};

class OpusDecoderWrap : public Napi::ObjectWrap<OpusDecoderWrap> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit OpusDecoderWrap(const Napi::CallbackInfo& info);
  ~OpusDecoderWrap() override;

 private:
  Napi::Value Decode(const Napi::CallbackInfo& info);

  OpusDecoder* decoder_ = nullptr;
  std::vector<opus_int16> pcm_;
};

Napi::Value OpusPacketSamples(const Napi::CallbackInfo& info);
Napi::Value OpusErrorText(const Napi::CallbackInfo& info);

}  // namespace voxgate
