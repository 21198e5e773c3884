// Socket options Node does not expose for stream sockets.
#pragma once

#include <napi.h>

namespace voxgate {

// setSendBuffer(fd, bytes): sets SO_SNDBUF on a socket and returns the size the kernel took.
Napi::Value SetSendBuffer(const Napi::CallbackInfo& info);

}  // namespace voxgate
