#include "socket-options.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace voxgate {

Napi::Value SetSendBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int fd = info[0].As<Napi::Number>().Int32Value();
  const int bytes = info[1].As<Napi::Number>().Int32Value();
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) != 0) {
    throw Napi::Error::New(env, std::string("setsockopt SO_SNDBUF: ") + std::strerror(errno));
  }
  int taken = 0;
  socklen_t length = sizeof taken;
  if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &taken, &length) != 0) {
    throw Napi::Error::New(env, std::string("getsockopt SO_SNDBUF: ") + std::strerror(errno));
  }
  return Napi::Number::New(env, taken);
}

}  // namespace voxgate
