// Frame helpers on 16-bit linear PCM: L16 byte order, mixing, gain, energy.
#pragma once
#include <napi.h>

namespace voxgate {

Napi::Value L16FromNetwork(const Napi::CallbackInfo& info);
Napi::Value L16ToNetwork(const Napi::CallbackInfo& info);
Napi::Value Mix(const Napi::CallbackInfo& info);
Napi::Value Gain(const Napi::CallbackInfo& info);
Napi::Value EnergyDbfs(const Napi::CallbackInfo& info);

}  // namespace voxgate
