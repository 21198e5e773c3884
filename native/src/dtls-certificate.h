// A self-signed certificate for DTLS-SRTP, made at start: peers check it against the SDP
// fingerprint (RFC 5763), never against a chain.
#pragma once
#include <napi.h>

namespace voxgate {

// Arguments: common name, days of validity. Returns { cert, key }, both PEM strings: an ECDSA
// P-256 key and its certificate signed with SHA-256, valid from a day ago.
Napi::Value GenerateDtlsCertificate(const Napi::CallbackInfo& info);

}  // namespace voxgate
