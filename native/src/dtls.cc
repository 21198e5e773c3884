#include "dtls.h"

#include <openssl/err.h>
#include <openssl/srtp.h>
#include <openssl/x509.h>

#include <cstring>

namespace voxgate {

namespace {

// RFC 6347 4.2.4.1: "double the value at each retransmission, up to no less than the RFC 6298
// maximum of 60 seconds".
constexpr unsigned int kMaxTimeoutUs = 60000000;

std::string HexWithColons(const unsigned char* bytes, unsigned int length) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned int i = 0; i < length; i++) {
    if (i > 0) out += ':';
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

DtlsEndpoint* EndpointOf(BIO* bio) { return static_cast<DtlsEndpoint*>(BIO_get_data(bio)); }

DtlsEndpoint* EndpointOf(const SSL* ssl) {
  return static_cast<DtlsEndpoint*>(SSL_get_ex_data(ssl, 0));
}

int BioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

int BioWrite(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  DtlsEndpoint* endpoint = EndpointOf(bio);
  if (endpoint == nullptr || size < 0) return -1;
  endpoint->WriteOutput(data, size);
  return size;
}

int BioRead(BIO* bio, char* out, int size) {
  BIO_clear_retry_flags(bio);
  DtlsEndpoint* endpoint = EndpointOf(bio);
  const int n = endpoint == nullptr ? 0 : endpoint->ReadInput(out, size);
  if (n > 0) return n;
  BIO_set_retry_read(bio);
  return -1;
}

// What the DTLS code asks of a datagram BIO. OpenSSL sizes each record to fit what it is told
// is pending under the MTU; records are packed into datagrams up to the MTU.
long BioCtrl(BIO* bio, int cmd, long /*num*/, void* /*ptr*/) {
  DtlsEndpoint* endpoint = EndpointOf(bio);
  if (endpoint == nullptr) return 0;
  switch (cmd) {
    case BIO_CTRL_FLUSH:
      endpoint->MarkFlushed();
      return 1;
    case BIO_CTRL_WPENDING:
      return static_cast<long>(endpoint->OutputPending());
    case BIO_CTRL_PENDING:
      return static_cast<long>(endpoint->InputPending());
    case BIO_CTRL_DGRAM_QUERY_MTU:
    case BIO_CTRL_DGRAM_GET_FALLBACK_MTU:
      return endpoint->mtu();
    default:
      return 0;
  }
}

void InfoTrampoline(const SSL* ssl, int where, int value) {
  if ((where & SSL_CB_ALERT) == 0) return;
  DtlsEndpoint* endpoint = EndpointOf(ssl);
  if (endpoint != nullptr) endpoint->OnAlert(where, value);
}

unsigned int TimerTrampoline(SSL* ssl, unsigned int current_us) {
  const DtlsEndpoint* endpoint = EndpointOf(ssl);
  return endpoint == nullptr ? kMaxTimeoutUs : endpoint->NextTimeoutUs(current_us);
}

}  // namespace

int DtlsEndpoint::VerifyCallback(X509_STORE_CTX* store, void* /*arg*/) {
  const auto* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  DtlsEndpoint* endpoint = ssl == nullptr ? nullptr : EndpointOf(ssl);
  return endpoint == nullptr ? 0 : endpoint->VerifyPeer(store);
}

Napi::Function DtlsEndpoint::Define(Napi::Env env) {
  return DefineClass(
      env, "DtlsEndpoint",
      {InstanceMethod<&DtlsEndpoint::Start>("start"),
       InstanceMethod<&DtlsEndpoint::Feed>("feed"),
       InstanceMethod<&DtlsEndpoint::HandleTimeout>("handleTimeout"),
       InstanceMethod<&DtlsEndpoint::TimeoutMs>("timeoutMs"),
       InstanceMethod<&DtlsEndpoint::Close>("close"),
       InstanceMethod<&DtlsEndpoint::Free>("free"),
       InstanceMethod<&DtlsEndpoint::GetState>("state"),
       InstanceMethod<&DtlsEndpoint::Reason>("reason"),
       InstanceMethod<&DtlsEndpoint::SrtpProfile>("srtpProfile"),
       InstanceMethod<&DtlsEndpoint::ExportKeyingMaterial>("exportKeyingMaterial")});
}

// Arguments: context, server (boolean), MTU, first retransmission timeout (ms), digest name
// (OpenSSL's: SHA256, SHA1, ...), the digests the peer's certificate may have (Uint8Arrays).
DtlsEndpoint::DtlsEndpoint(const Napi::CallbackInfo& info) : Napi::ObjectWrap<DtlsEndpoint>(info) {
  Napi::Env env = info.Env();
  const DtlsContext* context = DtlsContext::Unwrap(info[0].As<Napi::Object>());
  const bool server = info[1].As<Napi::Boolean>().Value();
  mtu_ = info[2].As<Napi::Number>().Int32Value();
  initial_timeout_us_ = info[3].As<Napi::Number>().Uint32Value() * 1000;
  const std::string digest_name = info[4].As<Napi::String>().Utf8Value();
  digest_ = EVP_get_digestbyname(digest_name.c_str());
  if (digest_ == nullptr) throw Napi::Error::New(env, "unknown digest " + digest_name);
  const auto digests = info[5].As<Napi::Array>();
  for (uint32_t i = 0; i < digests.Length(); i++) {
    const auto bytes = digests.Get(i).As<Napi::Uint8Array>();
    expected_digests_.emplace_back(reinterpret_cast<const char*>(bytes.Data()), bytes.ByteLength());
  }
  ERR_clear_error();
  bio_method_ = BIO_meth_new(BIO_TYPE_SOURCE_SINK, "voxgate datagrams");
  ssl_ = SSL_new(context->ctx());
  if (bio_method_ == nullptr || ssl_ == nullptr) {
    Release();
    throw Napi::Error::New(env, OpenSslErrorText("SSL_new failed"));
  }
  BIO_meth_set_create(bio_method_, BioCreate);
  BIO_meth_set_write(bio_method_, BioWrite);
  BIO_meth_set_read(bio_method_, BioRead);
  BIO_meth_set_ctrl(bio_method_, BioCtrl);
  BIO* bio = BIO_new(bio_method_);
  if (bio == nullptr) {
    Release();
    throw Napi::Error::New(env, OpenSslErrorText("BIO_new failed"));
  }
  BIO_set_data(bio, this);
  // One BIO both ways: the SSL object owns it from here.
  SSL_set_bio(ssl_, bio, bio);
  SSL_set_ex_data(ssl_, 0, this);
  SSL_set_mtu(ssl_, mtu_);
  DTLS_set_timer_cb(ssl_, TimerTrampoline);
  SSL_set_info_callback(ssl_, InfoTrampoline);
  if (server) {
    SSL_set_accept_state(ssl_);
  } else {
    SSL_set_connect_state(ssl_);
  }
}

DtlsEndpoint::~DtlsEndpoint() { Release(); }

void DtlsEndpoint::Release() {
  SSL_free(ssl_);
  ssl_ = nullptr;
  BIO_meth_free(bio_method_);
  bio_method_ = nullptr;
}

int DtlsEndpoint::ReadInput(char* out, int size) {
  if (input_ == nullptr || size <= 0) return 0;
  // A datagram is read whole or not at all: what does not fit is dropped, as recv would.
  const size_t n = input_size_ < static_cast<size_t>(size) ? input_size_ : size;
  std::memcpy(out, input_, n);
  input_ = nullptr;
  input_size_ = 0;
  return static_cast<int>(n);
}

void DtlsEndpoint::WriteOutput(const char* data, int size) {
  if (pending_.size() + static_cast<size_t>(size) > static_cast<size_t>(mtu_)) EndDatagram();
  pending_.append(data, static_cast<size_t>(size));
  flushed_ = false;
}

void DtlsEndpoint::EndDatagram() {
  flushed_ = false;
  if (pending_.empty()) return;
  output_.push_back(std::move(pending_));
  pending_.clear();
}

int DtlsEndpoint::VerifyPeer(X509_STORE_CTX* store) {
  X509* cert = X509_STORE_CTX_get0_cert(store);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (cert == nullptr || X509_digest(cert, digest_, digest, &length) != 1) {
    verify_failure_ = "the peer's certificate could not be hashed";
    X509_STORE_CTX_set_error(store, X509_V_ERR_UNSPECIFIED);
    return 0;
  }
  for (const std::string& expected : expected_digests_) {
    if (expected.size() == length && CRYPTO_memcmp(expected.data(), digest, length) == 0) {
      return 1;
    }
  }
  verify_failure_ = std::string("the peer's certificate does not match its SDP fingerprint (its ") +
                    EVP_MD_get0_name(digest_) + " is " + HexWithColons(digest, length) + ")";
  X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
  return 0;
}

void DtlsEndpoint::OnAlert(int where, int value) {
  const std::string text =
      std::string(SSL_alert_type_string_long(value)) + " alert " + SSL_alert_desc_string_long(value);
  if ((where & SSL_CB_READ) != 0) {
    alert_received_ = text;
    fatal_alert_received_ = (value >> 8) == SSL3_AL_FATAL;
  } else {
    alert_sent_ = text;
  }
}

unsigned int DtlsEndpoint::NextTimeoutUs(unsigned int current_us) const {
  if (current_us == 0) return initial_timeout_us_;
  return current_us >= kMaxTimeoutUs / 2 ? kMaxTimeoutUs : current_us * 2;
}

// Runs the handshake, then reads (and discards: DTLS-SRTP carries no application data here)
// until OpenSSL wants another datagram, noting how the association ended if it did.
void DtlsEndpoint::Drive() {
  ERR_clear_error();
  if (state_ == kHandshaking) {
    const int result = SSL_do_handshake(ssl_);
    if (result == 1) {
      state_ = kConnected;
    } else {
      const int error = SSL_get_error(ssl_, result);
      if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) Fail(error);
    }
  }
  if (state_ != kConnected) return;
  char buffer[4096];
  for (;;) {
    const int result = SSL_read(ssl_, buffer, sizeof buffer);
    if (result > 0) continue;
    const int error = SSL_get_error(ssl_, result);
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) Fail(error);
    return;
  }
}

void DtlsEndpoint::Fail(int ssl_error) {
  if (ssl_error == SSL_ERROR_ZERO_RETURN) {
    state_ = kClosedByPeer;
    reason_ = "the peer closed the association (close_notify)";
    // RFC 5246 7.2.1: "The other party MUST respond with a close_notify alert of its own".
    SSL_shutdown(ssl_);
  } else if (fatal_alert_received_) {
    state_ = kFailedByPeerAlert;
    reason_ = "the peer sent a " + alert_received_;
  } else {
    state_ = kFailedLocally;
    reason_ = !verify_failure_.empty() ? verify_failure_ : OpenSslErrorText("the handshake failed");
    if (!alert_sent_.empty()) reason_ += " (sent a " + alert_sent_ + ")";
  }
  ERR_clear_error();
}

Napi::Array DtlsEndpoint::TakeOutput(Napi::Env env) {
  EndDatagram();
  auto out = Napi::Array::New(env, output_.size());
  for (size_t i = 0; i < output_.size(); i++) {
    out.Set(static_cast<uint32_t>(i),
            Napi::Buffer<char>::Copy(env, output_[i].data(), output_[i].size()));
  }
  output_.clear();
  return out;
}

bool DtlsEndpoint::Live() const {
  return ssl_ != nullptr && (state_ == kHandshaking || state_ == kConnected);
}

Napi::Value DtlsEndpoint::Start(const Napi::CallbackInfo& info) {
  if (Live()) Drive();
  return TakeOutput(info.Env());
}

// One datagram in; the datagrams to send out.
Napi::Value DtlsEndpoint::Feed(const Napi::CallbackInfo& info) {
  if (!Live()) return Napi::Array::New(info.Env());
  const auto datagram = info[0].As<Napi::Uint8Array>();
  input_ = reinterpret_cast<const char*>(datagram.Data());
  input_size_ = datagram.ByteLength();
  Drive();
  input_ = nullptr;
  input_size_ = 0;
  return TakeOutput(info.Env());
}

// Call once timeoutMs() has passed: retransmits the last flight if OpenSSL agrees it is due.
Napi::Value DtlsEndpoint::HandleTimeout(const Napi::CallbackInfo& info) {
  if (Live()) {
    ERR_clear_error();
    if (DTLSv1_handle_timeout(ssl_) < 0) Fail(SSL_ERROR_SSL);
  }
  return TakeOutput(info.Env());
}

// Milliseconds until the retransmission timer is due; -1 when it is not running.
Napi::Value DtlsEndpoint::TimeoutMs(const Napi::CallbackInfo& info) {
  struct timeval left = {0, 0};
  if (!Live() || DTLSv1_get_timeout(ssl_, &left) != 1) return Napi::Number::New(info.Env(), -1);
  const double ms = static_cast<double>(left.tv_sec) * 1000.0 + (left.tv_usec + 999) / 1000;
  return Napi::Number::New(info.Env(), ms);
}

// Sends close_notify once connected; either way the endpoint takes nothing more.
Napi::Value DtlsEndpoint::Close(const Napi::CallbackInfo& info) {
  if (Live()) {
    if (state_ == kConnected) {
      ERR_clear_error();
      SSL_shutdown(ssl_);
      ERR_clear_error();
    }
    state_ = kClosedLocally;
    reason_ = "closed locally";
  }
  return TakeOutput(info.Env());
}

// Frees the OpenSSL objects now rather than when the garbage collector finalises this object.
Napi::Value DtlsEndpoint::Free(const Napi::CallbackInfo& info) {
  if (state_ == kHandshaking || state_ == kConnected) {
    state_ = kClosedLocally;
    reason_ = "closed locally";
  }
  Release();
  return info.Env().Undefined();
}

Napi::Value DtlsEndpoint::GetState(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), state_);
}

Napi::Value DtlsEndpoint::Reason(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), reason_);
}

// The profile the handshake selected (use_srtp), or null.
Napi::Value DtlsEndpoint::SrtpProfile(const Napi::CallbackInfo& info) {
  const SRTP_PROTECTION_PROFILE* profile =
      ssl_ == nullptr ? nullptr : SSL_get_selected_srtp_profile(ssl_);
  if (profile == nullptr) return info.Env().Null();
  return Napi::String::New(info.Env(), profile->name);
}

// Arguments: label, length. RFC 5705 exporter output, without a context value.
Napi::Value DtlsEndpoint::ExportKeyingMaterial(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string label = info[0].As<Napi::String>().Utf8Value();
  const size_t length = info[1].As<Napi::Number>().Uint32Value();
  auto out = Napi::Buffer<unsigned char>::New(env, length);
  ERR_clear_error();
  if (state_ != kConnected || ssl_ == nullptr ||
      SSL_export_keying_material(ssl_, out.Data(), length, label.data(), label.size(), nullptr, 0,
                                 0) != 1) {
    throw Napi::Error::New(env, OpenSslErrorText("keying material could not be exported"));
  }
  return out;
}

}  // namespace voxgate
