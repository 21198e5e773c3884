#include "datagram-reader.h"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace voxgate {

namespace {
constexpr int kEvents = 64;
constexpr int kBurst = 16;
constexpr size_t kMaxDatagram = 2048;
// Datagrams one wake-up reads at most (the rest wait for the next): enough for every socket of
// a loaded worker, with a few queued each.
constexpr int kMaxBatch = 4096;
constexpr size_t kScratchBytes = kMaxBatch * kMaxDatagram;
// Per datagram in meta: socket id, offset, length, source port, IPv4 source (host order).
constexpr int kMetaFields = 5;
}  // namespace

Napi::Function DatagramReader::Define(Napi::Env env) {
  return DefineClass(env, "DatagramReader",
                     {InstanceMethod<&DatagramReader::Add>("add"),
                      InstanceMethod<&DatagramReader::Remove>("remove"),
                      InstanceMethod<&DatagramReader::Close>("close")});
}

// new DatagramReader(onBatch): onBatch(bytes: Buffer, meta: Int32Array, count) is called once
// per wake-up with every datagram read.
DatagramReader::DatagramReader(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<DatagramReader>(info) {
  Napi::Env env = info.Env();
  on_batch_ = Napi::Persistent(info[0].As<Napi::Function>());
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) throw Napi::Error::New(env, std::string("epoll_create1: ") + std::strerror(errno));
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env, &loop);
  poll_ = new uv_poll_t;
  poll_->data = this;
  uv_poll_init(loop, poll_, epoll_);
  uv_poll_start(poll_, UV_READABLE, OnReadable);
  uv_unref(reinterpret_cast<uv_handle_t*>(poll_));
  // A worker thread's loop must have no open handle left when it ends: the handle is closed
  // when the thread's environment goes, before its loop does.
  napi_add_async_cleanup_hook(env, OnEnvCleanup, this, &cleanup_);
  // Left uninitialised: the kernel writes what is read, and pages never used stay unmapped.
  scratch_.reset(new uint8_t[kScratchBytes]);
  meta_.resize(kMaxBatch * kMetaFields);
}

DatagramReader::~DatagramReader() { Shut(nullptr); }

void DatagramReader::OnEnvCleanup(napi_async_cleanup_hook_handle handle, void* data) {
  static_cast<DatagramReader*>(data)->Shut(handle);
}

void DatagramReader::Shut(napi_async_cleanup_hook_handle done) {
  if (poll_ == nullptr) return;
  if (done == nullptr && cleanup_ != nullptr) napi_remove_async_cleanup_hook(cleanup_);
  cleanup_ = nullptr;
  uv_poll_stop(poll_);
  poll_->data = done;
  uv_close(reinterpret_cast<uv_handle_t*>(poll_), [](uv_handle_t* handle) {
    auto done = static_cast<napi_async_cleanup_hook_handle>(handle->data);
    delete reinterpret_cast<uv_poll_t*>(handle);
    if (done != nullptr) napi_remove_async_cleanup_hook(done);
  });
  poll_ = nullptr;
  close(epoll_);
  epoll_ = -1;
}

// add(fd, id)
Napi::Value DatagramReader::Add(const Napi::CallbackInfo& info) {
  const int fd = info[0].As<Napi::Number>().Int32Value();
  const uint32_t id = info[1].As<Napi::Number>().Uint32Value();
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = (static_cast<uint64_t>(id) << 32) | static_cast<uint32_t>(fd);
  if (epoll_ < 0) throw Napi::Error::New(info.Env(), "the reader is closed");
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event) != 0) {
    throw Napi::Error::New(info.Env(), std::string("epoll_ctl: ") + std::strerror(errno));
  }
  if (sockets_++ == 0) uv_ref(reinterpret_cast<uv_handle_t*>(poll_));
  return info.Env().Undefined();
}

// remove(fd)
Napi::Value DatagramReader::Remove(const Napi::CallbackInfo& info) {
  const int fd = info[0].As<Napi::Number>().Int32Value();
  if (epoll_ < 0 || epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr) != 0) {
    return info.Env().Undefined();
  }
  if (--sockets_ == 0) uv_unref(reinterpret_cast<uv_handle_t*>(poll_));
  return info.Env().Undefined();
}

Napi::Value DatagramReader::Close(const Napi::CallbackInfo& info) {
  Shut(nullptr);
  return info.Env().Undefined();
}

void DatagramReader::OnReadable(uv_poll_t* handle, int status, int) {
  if (status < 0) return;
  static_cast<DatagramReader*>(handle->data)->Drain();
}

// Reads one ready socket into the scratch buffer from `used` on, until it has nothing left or
// the buffer is full, recording each datagram in meta from `count` on.
void DatagramReader::ReadSocket(int fd, int32_t id, size_t& used, int& count) {
  mmsghdr msgs[kBurst];
  iovec iovs[kBurst];
  sockaddr_storage from[kBurst];
  while (used + kBurst * kMaxDatagram <= kScratchBytes) {
    for (int i = 0; i < kBurst; i++) {
      iovs[i].iov_base = scratch_.get() + used + i * kMaxDatagram;
      iovs[i].iov_len = kMaxDatagram;
      std::memset(&msgs[i], 0, sizeof msgs[i]);
      msgs[i].msg_hdr.msg_iov = &iovs[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof from[i];
    }
    const int got = recvmmsg(fd, msgs, kBurst, MSG_DONTWAIT, nullptr);
    if (got <= 0) return;
    for (int i = 0; i < got; i++) {
      // Longer than the slot: cut off, so not handed on (RTP over Ethernet never is).
      if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) continue;
      int32_t* m = meta_.data() + count * kMetaFields;
      m[0] = id;
      m[1] = static_cast<int32_t>(used + i * kMaxDatagram);
      m[2] = static_cast<int32_t>(msgs[i].msg_len);
      if (from[i].ss_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(&from[i]);
        m[3] = ntohs(v4->sin_port);
        m[4] = static_cast<int32_t>(ntohl(v4->sin_addr.s_addr));
      } else {
        m[3] = -1;
        m[4] = 0;
      }
      count++;
    }
    used += got * kMaxDatagram;
    if (got < kBurst) return;
  }
}

void DatagramReader::Drain() {
  size_t used = 0;
  int count = 0;
  // Every ready socket, not only one epoll_wait's worth: a busy loop calls this once per turn,
  // and a socket left for a later turn has its datagrams read too late to be played.
  epoll_event events[kEvents];
  int ready = kEvents;
  while (ready == kEvents && used + kBurst * kMaxDatagram <= kScratchBytes) {
    ready = epoll_wait(epoll_, events, kEvents, 0);
    for (int e = 0; e < ready; e++) {
      const int fd = static_cast<int>(events[e].data.u64 & 0xffffffffu);
      const int32_t id = static_cast<int32_t>(events[e].data.u64 >> 32);
      ReadSocket(fd, id, used, count);
    }
  }
  if (count == 0) return;
  // Plain N-API from here: this runs from the event loop, where a C++ exception has nowhere to
  // go, and JavaScript may not run at all while the thread is ending.
  napi_env env = on_batch_.Env();
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  // Pack the datagrams into one buffer of their own bytes.
  size_t total = 0;
  for (int i = 0; i < count; i++) total += meta_[i * kMetaFields + 2];
  void* data = nullptr;
  napi_value bytes, meta_buffer, meta, length, global, callback, ignored;
  if (napi_get_reference_value(env, on_batch_, &callback) == napi_ok &&
      napi_create_buffer(env, total == 0 ? 1 : total, &data, &bytes) == napi_ok &&
      napi_create_arraybuffer(env, count * kMetaFields * sizeof(int32_t), nullptr, &meta_buffer) ==
          napi_ok &&
      napi_create_typedarray(env, napi_int32_array, count * kMetaFields, meta_buffer, 0, &meta) ==
          napi_ok &&
      napi_create_int32(env, count, &length) == napi_ok && napi_get_global(env, &global) == napi_ok) {
    size_t at = 0;
    for (int i = 0; i < count; i++) {
      int32_t* m = meta_.data() + i * kMetaFields;
      std::memcpy(static_cast<uint8_t*>(data) + at, scratch_.get() + m[1], m[2]);
      m[1] = static_cast<int32_t>(at);
      at += m[2];
    }
    void* meta_data = nullptr;
    napi_get_arraybuffer_info(env, meta_buffer, &meta_data, nullptr);
    std::memcpy(meta_data, meta_.data(), count * kMetaFields * sizeof(int32_t));
    napi_value args[3] = {bytes, meta, length};
    if (napi_make_callback(env, nullptr, global, callback, 3, args, &ignored) ==
        napi_pending_exception) {
      // Thrown by a handler: an uncaught exception of the thread, as a throwing listener of a
      // Node socket would be.
      napi_value error;
      if (napi_get_and_clear_last_exception(env, &error) == napi_ok) {
        napi_fatal_exception(env, error);
      }
    }
  }
  napi_close_handle_scope(env, scope);
}

}  // namespace voxgate
