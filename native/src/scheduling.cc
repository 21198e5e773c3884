#include "scheduling.h"

#include <sched.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace voxgate {

Napi::Value SetRoundRobin(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const pid_t tid = static_cast<pid_t>(info[0].As<Napi::Number>().Int32Value());
  sched_param param{};
  param.sched_priority = info[1].As<Napi::Number>().Int32Value();
  // On Linux sched_setscheduler acts on the one thread whose id it is given.
  if (sched_setscheduler(tid, SCHED_RR, &param) != 0) {
    const int code = errno;
    Napi::Error error =
        Napi::Error::New(env, std::string("sched_setscheduler: ") + std::strerror(code));
    error.Set("errno", Napi::Number::New(env, code));
    throw error;
  }
  return env.Undefined();
}

}  // namespace voxgate
