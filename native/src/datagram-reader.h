// Reads the datagrams of many UDP sockets: one epoll set, recvmmsg per ready socket, and one
// call into JavaScript per wake-up with everything read.
#pragma once

#include <napi.h>
#include <uv.h>

#include <memory>
#include <vector>

namespace voxgate {

class DatagramReader : public Napi::ObjectWrap<DatagramReader> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit DatagramReader(const Napi::CallbackInfo& info);
  ~DatagramReader() override;

 private:
  Napi::Value Add(const Napi::CallbackInfo& info);
  Napi::Value Remove(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  static void OnReadable(uv_poll_t* handle, int status, int events);
  static void OnEnvCleanup(napi_async_cleanup_hook_handle handle, void* data);
  void Drain();
  void ReadSocket(int fd, int32_t id, size_t& used, int& count);
  // Stops reading and closes the poll handle; `done`, when given, is the environment's cleanup
  // hook, told once the handle is closed.
  void Shut(napi_async_cleanup_hook_handle done);

  int epoll_ = -1;
  uv_poll_t* poll_ = nullptr;
  napi_async_cleanup_hook_handle cleanup_ = nullptr;
  // Sockets read: while there are some, they keep the loop alive, as Node's own reading would.
  int sockets_ = 0;
  Napi::FunctionReference on_batch_;
  std::unique_ptr<uint8_t[]> scratch_;
  std::vector<int32_t> meta_;
};

}  // namespace voxgate
