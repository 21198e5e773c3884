#include "opus.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

namespace voxgate {
namespace {

// RFC 6716 3.2.1: a frame carries at most 1275 bytes; one packet of one frame is what the
// encoder makes here.
constexpr int kMaxPacketBytes = 1500;

Napi::Error OpusFailure(Napi::Env env, const char* call, int err) {
  return Napi::Error::New(env, std::string(call) + ": " + opus_strerror(err));
}

}  // namespace

Napi::Function OpusEncoderWrap::Define(Napi::Env env) {
  return DefineClass(env, "OpusEncoder",
                     {
                         InstanceMethod<&OpusEncoderWrap::Encode>("encode"),
                         InstanceMethod<&OpusEncoderWrap::SetBitrate>("setBitrate"),
                         InstanceMethod<&OpusEncoderWrap::SetPacketLoss>("setPacketLoss"),
                         InstanceMethod<&OpusEncoderWrap::SetMaxBandwidth>("setMaxBandwidth"),
                         InstanceMethod<&OpusEncoderWrap::SetComplexity>("setComplexity"),
                         InstanceMethod<&OpusEncoderWrap::Reset>("reset"),
                     });
}

// Arguments: sample rate (8, 12, 16, 24 or 48 kHz), bitrate in bit/s, in-band FEC (bool),
// expected packet loss in percent, DTX (bool), complexity (0-10), and whether to code CELT
// only (libopus's restricted low-delay application: no SILK, so no in-band FEC, and 2.5 ms of
// look-ahead instead of 6.5) rather than as VoIP. Mono.
OpusEncoderWrap::OpusEncoderWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<OpusEncoderWrap>(info), packet_(kMaxPacketBytes) {
  const opus_int32 rate = info[0].As<Napi::Number>().Int32Value();
  const opus_int32 bitrate = info[1].As<Napi::Number>().Int32Value();
  const bool fec = info[2].As<Napi::Boolean>().Value();
  const opus_int32 loss = info[3].As<Napi::Number>().Int32Value();
  const bool dtx = info[4].As<Napi::Boolean>().Value();
  const opus_int32 complexity = info[5].As<Napi::Number>().Int32Value();
  const bool celt_only = info[6].As<Napi::Boolean>().Value();
  int err = OPUS_OK;
  encoder_ = opus_encoder_create(
      rate, 1, celt_only ? OPUS_APPLICATION_RESTRICTED_LOWDELAY : OPUS_APPLICATION_VOIP, &err);
  if (err != OPUS_OK) throw OpusFailure(info.Env(), "opus_encoder_create", err);
  const int settings[] = {
      opus_encoder_ctl(encoder_, OPUS_SET_BITRATE(bitrate)),
      opus_encoder_ctl(encoder_, OPUS_SET_INBAND_FEC(fec ? 1 : 0)),
      opus_encoder_ctl(encoder_, OPUS_SET_PACKET_LOSS_PERC(loss)),
      opus_encoder_ctl(encoder_, OPUS_SET_DTX(dtx ? 1 : 0)),
      opus_encoder_ctl(encoder_, OPUS_SET_COMPLEXITY(complexity)),
      opus_encoder_ctl(encoder_, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE)),
  };
  const int* failed = std::find_if(std::begin(settings), std::end(settings),
                                   [](int setting) { return setting != OPUS_OK; });
  if (failed != std::end(settings)) {
    opus_encoder_destroy(encoder_);
    encoder_ = nullptr;
    throw OpusFailure(info.Env(), "opus_encoder_ctl", *failed);
  }
}

OpusEncoderWrap::~OpusEncoderWrap() {
  if (encoder_ != nullptr) opus_encoder_destroy(encoder_);
}

// One frame (2.5 to 60 ms at the encoder's rate) in, one packet out. With DTX on, a frame of
// silence may come out as a packet of 1 or 2 bytes, which the caller need not send.
Napi::Value OpusEncoderWrap::Encode(const Napi::CallbackInfo& info) {
  auto pcm = info[0].As<Napi::Int16Array>();
  const opus_int32 n = opus_encode(encoder_, pcm.Data(), static_cast<int>(pcm.ElementLength()),
                                   packet_.data(), kMaxPacketBytes);
  if (n < 0) throw OpusFailure(info.Env(), "opus_encode", n);
  return Napi::Buffer<unsigned char>::Copy(info.Env(), packet_.data(), static_cast<size_t>(n));
}

Napi::Value OpusEncoderWrap::SetBitrate(const Napi::CallbackInfo& info) {
  const int err =
      opus_encoder_ctl(encoder_, OPUS_SET_BITRATE(info[0].As<Napi::Number>().Int32Value()));
  if (err != OPUS_OK) throw OpusFailure(info.Env(), "opus_encoder_ctl", err);
  return info.Env().Undefined();
}

Napi::Value OpusEncoderWrap::SetPacketLoss(const Napi::CallbackInfo& info) {
  const int err = opus_encoder_ctl(
      encoder_, OPUS_SET_PACKET_LOSS_PERC(info[0].As<Napi::Number>().Int32Value()));
  if (err != OPUS_OK) throw OpusFailure(info.Env(), "opus_encoder_ctl", err);
  return info.Env().Undefined();
}

// Argument: the highest audio frequency worth coding, in Hz; the encoder codes at most the
// Opus bandwidth (RFC 6716 2) that holds it: 4 kHz narrowband up to 20 kHz fullband.
Napi::Value OpusEncoderWrap::SetMaxBandwidth(const Napi::CallbackInfo& info) {
  const int hz = info[0].As<Napi::Number>().Int32Value();
  int bandwidth = OPUS_BANDWIDTH_FULLBAND;
  if (hz <= 4000) {
    bandwidth = OPUS_BANDWIDTH_NARROWBAND;
  } else if (hz <= 6000) {
    bandwidth = OPUS_BANDWIDTH_MEDIUMBAND;
  } else if (hz <= 8000) {
    bandwidth = OPUS_BANDWIDTH_WIDEBAND;
  } else if (hz <= 12000) {
    bandwidth = OPUS_BANDWIDTH_SUPERWIDEBAND;
  }
  const int err = opus_encoder_ctl(encoder_, OPUS_SET_MAX_BANDWIDTH(bandwidth));
  if (err != OPUS_OK) throw OpusFailure(info.Env(), "opus_encoder_ctl", err);
  return info.Env().Undefined();
}

// Argument: the complexity (0-10) from the next frame on.
Napi::Value OpusEncoderWrap::SetComplexity(const Napi::CallbackInfo& info) {
  const int err = opus_encoder_ctl(
      encoder_, OPUS_SET_COMPLEXITY(info[0].As<Napi::Number>().Int32Value()));
  if (err != OPUS_OK) throw OpusFailure(info.Env(), "opus_encoder_ctl", err);
  return info.Env().Undefined();
}

// Forgets every frame coded so far, keeping the settings: the next frame is coded as a first
// one, at the bandwidth the settings now allow.
Napi::Value OpusEncoderWrap::Reset(const Napi::CallbackInfo& info) {
  const int err = opus_encoder_ctl(encoder_, OPUS_RESET_STATE);
  if (err != OPUS_OK) throw OpusFailure(info.Env(), "opus_encoder_ctl", err);
  return info.Env().Undefined();
}

Napi::Function OpusDecoderWrap::Define(Napi::Env env) {
  return DefineClass(env, "OpusDecoder", {InstanceMethod<&OpusDecoderWrap::Decode>("decode")});
}

// Argument: sample rate (8, 12, 16, 24 or 48 kHz). Mono.
OpusDecoderWrap::OpusDecoderWrap(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<OpusDecoderWrap>(info) {
  const opus_int32 rate = info[0].As<Napi::Number>().Int32Value();
  int err = OPUS_OK;
  decoder_ = opus_decoder_create(rate, 1, &err);
  if (err != OPUS_OK) throw OpusFailure(info.Env(), "opus_decoder_create", err);
  // RFC 6716 3.2.5: a packet holds at most 120 ms of audio.
  pcm_.resize(static_cast<size_t>(rate) * 120 / 1000);
}

OpusDecoderWrap::~OpusDecoderWrap() {
  if (decoder_ != nullptr) opus_decoder_destroy(decoder_);
}

// Arguments: a packet (Uint8Array) or null for a lost one, the samples to make up for a lost
// packet (a multiple of 2.5 ms), and whether to decode the packet's FEC data (the previous,
// lost packet's audio) instead of its own. Returns the audio, or libopus's (negative) error
// code for a packet it cannot decode: garbage on the wire is the caller's to count, not an
// exception.
Napi::Value OpusDecoderWrap::Decode(const Napi::CallbackInfo& info) {
  const unsigned char* data = nullptr;
  opus_int32 length = 0;
  if (info[0].IsTypedArray()) {
    auto packet = info[0].As<Napi::Uint8Array>();
    data = packet.Data();
    length = static_cast<opus_int32>(packet.ElementLength());
  }
  int frame = info[1].As<Napi::Number>().Int32Value();
  const int fec = info[2].As<Napi::Boolean>().Value() ? 1 : 0;
  // Nothing to decode a packet's own audio from; a 0-byte packet (DTX) is a lost one.
  if (length == 0) data = nullptr;
  // For a lost packet or FEC the frame size says how much audio to make; otherwise room.
  if (data != nullptr && fec == 0) frame = static_cast<int>(pcm_.size());
  if (frame > static_cast<int>(pcm_.size())) frame = static_cast<int>(pcm_.size());
  const int n = opus_decode(decoder_, data, length, pcm_.data(), frame, fec);
  if (n < 0) return Napi::Number::New(info.Env(), n);
  auto out = Napi::Int16Array::New(info.Env(), static_cast<size_t>(n));
  std::memcpy(out.Data(), pcm_.data(), static_cast<size_t>(n) * sizeof(opus_int16));
  return out;
}

// Arguments: a packet, a sample rate. The audio the packet holds in samples at that rate, or
// libopus's (negative) error code for a malformed packet.
Napi::Value OpusPacketSamples(const Napi::CallbackInfo& info) {
  auto packet = info[0].As<Napi::Uint8Array>();
  const opus_int32 rate = info[1].As<Napi::Number>().Int32Value();
  const int n = opus_packet_get_nb_samples(packet.Data(),
                                           static_cast<opus_int32>(packet.ElementLength()), rate);
  return Napi::Number::New(info.Env(), n);
}

Napi::Value OpusErrorText(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), opus_strerror(info[0].As<Napi::Number>().Int32Value()));
}

}  // namespace voxgate
