#include "srtp-context.h"

namespace voxgate {

Napi::Function SrtpContext::Define(Napi::Env env) {
  return DefineClass(env, "SrtpContext",
                     {
                         InstanceMethod<&SrtpContext::ProtectRtp>("protectRtp"),
                         InstanceMethod<&SrtpContext::UnprotectRtp>("unprotectRtp"),
                         InstanceMethod<&SrtpContext::ProtectRtcp>("protectRtcp"),
                         InstanceMethod<&SrtpContext::UnprotectRtcp>("unprotectRtcp"),
                     });
}

// Arguments: suite (0, 1, 2 as SrtpSuite), master key (16 bytes), master salt (14 bytes, 12
// for GCM), whether to derive session keys (false: the key and salt are the session's).
SrtpContext::SrtpContext(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SrtpContext>(info) {
  const auto suite = static_cast<SrtpSuite>(info[0].As<Napi::Number>().Int32Value());
  auto key = info[1].As<Napi::Uint8Array>();
  auto salt = info[2].As<Napi::Uint8Array>();
  const bool derive = info[3].As<Napi::Boolean>().Value();
  transform_ = std::make_unique<SrtpTransform>(suite, key.Data(), salt.Data(), derive);
  if (!transform_->ok()) {
    throw Napi::Error::New(info.Env(), "OpenSSL could not set up the SRTP ciphers");
  }
}

// protectRtp(buffer, length): the packet is buffer[0, length); the rest of buffer is room for
// the tag.
Napi::Value SrtpContext::ProtectRtp(const Napi::CallbackInfo& info) {
  auto buffer = info[0].As<Napi::Uint8Array>();
  const size_t length = info[1].As<Napi::Number>().Uint32Value();
  if (length > buffer.ByteLength()) return Napi::Number::New(info.Env(), kSrtpMalformed);
  return Napi::Number::New(info.Env(),
                           transform_->ProtectRtp(buffer.Data(), length, buffer.ByteLength()));
}

Napi::Value SrtpContext::UnprotectRtp(const Napi::CallbackInfo& info) {
  auto packet = info[0].As<Napi::Uint8Array>();
  return Napi::Number::New(info.Env(),
                           transform_->UnprotectRtp(packet.Data(), packet.ByteLength()));
}

Napi::Value SrtpContext::ProtectRtcp(const Napi::CallbackInfo& info) {
  auto buffer = info[0].As<Napi::Uint8Array>();
  const size_t length = info[1].As<Napi::Number>().Uint32Value();
  if (length > buffer.ByteLength()) return Napi::Number::New(info.Env(), kSrtpMalformed);
  return Napi::Number::New(info.Env(),
                           transform_->ProtectRtcp(buffer.Data(), length, buffer.ByteLength()));
}

Napi::Value SrtpContext::UnprotectRtcp(const Napi::CallbackInfo& info) {
  auto packet = info[0].As<Napi::Uint8Array>();
  return Napi::Number::New(info.Env(),
                           transform_->UnprotectRtcp(packet.Data(), packet.ByteLength()));
}

Napi::Value DeriveSrtpKeyJs(const Napi::CallbackInfo& info) {
  auto key = info[0].As<Napi::Uint8Array>();
  auto salt = info[1].As<Napi::Uint8Array>();
  const auto label = static_cast<uint8_t>(info[2].As<Napi::Number>().Uint32Value());
  const size_t length = info[3].As<Napi::Number>().Uint32Value();
  auto out = Napi::Buffer<uint8_t>::New(info.Env(), length);
  if (!DeriveSrtpKey(key.Data(), salt.Data(), salt.ByteLength(), label, out.Data(), length)) {
    throw Napi::Error::New(info.Env(), "OpenSSL could not derive the SRTP key");
  }
  return out;
}

}  // namespace voxgate
