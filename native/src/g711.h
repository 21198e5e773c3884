// G.711 (ITU-T, 11/1988) mu-law and A-law companding through lookup tables built at load.
#pragma once
#include <napi.h>

namespace voxgate {

void InitG711Tables();
Napi::Value MuLawEncode(const Napi::CallbackInfo& info);
Napi::Value MuLawDecode(const Napi::CallbackInfo& info);
Napi::Value ALawEncode(const Napi::CallbackInfo& info);
Napi::Value ALawDecode(const Napi::CallbackInfo& info);

}  // namespace voxgate
