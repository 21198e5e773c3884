// Thread scheduling the Node API does not expose.
#pragma once

#include <napi.h>

namespace voxgate {

// setRoundRobin(tid, priority): puts one thread of this process under SCHED_RR at that
// priority (1 to 99). Throws with the system's reason (EPERM without CAP_SYS_NICE or an
// RLIMIT_RTPRIO that allows it, ESRCH for a thread that has ended).
Napi::Value SetRoundRobin(const Napi::CallbackInfo& info);

}  // namespace voxgate
