// SrtpContext: the JavaScript face of one SrtpTransform (srtp.h). Packets are transformed in
// place in the caller's Uint8Array; each call returns the new length or a negative SrtpError.
// Arguments are checked by src/media/srtp; this side trusts them, except that it never writes
// past the end of the array it is given.
#pragma once

#include <napi.h>

#include <memory>

#include "srtp.h"

namespace voxgate {

class SrtpContext : public Napi::ObjectWrap<SrtpContext> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit SrtpContext(const Napi::CallbackInfo& info);

 private:
  Napi::Value ProtectRtp(const Napi::CallbackInfo& info);
  Napi::Value UnprotectRtp(const Napi::CallbackInfo& info);
  Napi::Value ProtectRtcp(const Napi::CallbackInfo& info);
  Napi::Value UnprotectRtcp(const Napi::CallbackInfo& info);

  std::unique_ptr<SrtpTransform> transform_;
};

// deriveSrtpKey(masterKey, masterSalt, label, length): the RFC 3711 4.3.1 PRF's output, for
// the RFC's own key derivation test vectors (appendix B.3) and keystream (B.2).
Napi::Value DeriveSrtpKeyJs(const Napi::CallbackInfo& info);

}  // namespace voxgate
