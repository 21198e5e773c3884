// voxgate's native DSP: G.711, Opus, resampling, noise suppression and frame helpers; the SRTP
// and SRTCP transform and DTLS-SRTP, both on the OpenSSL Node embeds; and what Node lacks for
// sockets and threads: a socket option, a reader of many UDP sockets, a scheduling call.
// Arguments are checked by the TypeScript wrappers (src/media/codec, src/media/net,
// src/media/srtp, src/media/dtls, src/realtime-priority.ts); this side trusts them.
#include <napi.h>

#include "datagram-reader.h"
#include "dtls-certificate.h"
#include "dtls.h"
#include "frame.h"
#include "g711.h"
#include "noise-suppressor.h"
#include "opus.h"
#include "resampler.h"
#include "scheduling.h"
#include "socket-options.h"
#include "srtp-context.h"

namespace voxgate {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  InitG711Tables();
  exports.Set("muLawEncode", Napi::Function::New<MuLawEncode>(env, "muLawEncode"));
  exports.Set("muLawDecode", Napi::Function::New<MuLawDecode>(env, "muLawDecode"));
  exports.Set("aLawEncode", Napi::Function::New<ALawEncode>(env, "aLawEncode"));
  exports.Set("aLawDecode", Napi::Function::New<ALawDecode>(env, "aLawDecode"));
  exports.Set("l16FromNetwork", Napi::Function::New<L16FromNetwork>(env, "l16FromNetwork"));
  exports.Set("l16ToNetwork", Napi::Function::New<L16ToNetwork>(env, "l16ToNetwork"));
  exports.Set("mix", Napi::Function::New<Mix>(env, "mix"));
  exports.Set("gain", Napi::Function::New<Gain>(env, "gain"));
  exports.Set("energyDbfs", Napi::Function::New<EnergyDbfs>(env, "energyDbfs"));
  exports.Set("Resampler", Resampler::Define(env));
  exports.Set("NoiseSuppressor", NoiseSuppressor::Define(env));
  exports.Set("OpusEncoder", OpusEncoderWrap::Define(env));
  exports.Set("OpusDecoder", OpusDecoderWrap::Define(env));
  exports.Set("opusPacketSamples",
              Napi::Function::New<OpusPacketSamples>(env, "opusPacketSamples"));
  exports.Set("opusErrorText", Napi::Function::New<OpusErrorText>(env, "opusErrorText"));
  exports.Set("setSendBuffer", Napi::Function::New<SetSendBuffer>(env, "setSendBuffer"));
  exports.Set("DatagramReader", DatagramReader::Define(env));
  exports.Set("SrtpContext", SrtpContext::Define(env));
  exports.Set("deriveSrtpKey", Napi::Function::New<DeriveSrtpKeyJs>(env, "deriveSrtpKey"));
  exports.Set("setRoundRobin", Napi::Function::New<SetRoundRobin>(env, "setRoundRobin"));
  exports.Set("generateDtlsCertificate",
              Napi::Function::New<GenerateDtlsCertificate>(env, "generateDtlsCertificate"));
  exports.Set("DtlsContext", DtlsContext::Define(env));
  exports.Set("DtlsEndpoint", DtlsEndpoint::Define(env));
  return exports;
}

NODE_API_MODULE(voxgate_native, Init)

}  // namespace voxgate
