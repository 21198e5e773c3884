// DtlsContext: the SSL_CTX every DTLS endpoint of a thread shares (dtls.h).
#include <openssl/err.h>
#include <openssl/pem.h>

#include <memory>

#include "dtls.h"

namespace voxgate {

namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

}  // namespace

std::string OpenSslErrorText(const char* what) {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return what;
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return std::string(what) + ": " + text;
}

Napi::Function DtlsContext::Define(Napi::Env env) { return DefineClass(env, "DtlsContext", {}); }

// Arguments: certificate PEM, private key PEM, OpenSSL cipher list, SRTP profile list
// (colon-separated, most preferred first).
DtlsContext::DtlsContext(const Napi::CallbackInfo& info) : Napi::ObjectWrap<DtlsContext>(info) {
  Napi::Env env = info.Env();
  const std::string cert_pem = info[0].As<Napi::String>().Utf8Value();
  const std::string key_pem = info[1].As<Napi::String>().Utf8Value();
  const std::string ciphers = info[2].As<Napi::String>().Utf8Value();
  const std::string profiles = info[3].As<Napi::String>().Utf8Value();
  ERR_clear_error();
  ctx_ = SSL_CTX_new(DTLS_method());
  if (ctx_ == nullptr) throw Napi::Error::New(env, OpenSslErrorText("SSL_CTX_new failed"));
  std::string failure;
  BioPtr cert_bio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
  X509* cert = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr);
  BioPtr key_bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
  if (cert == nullptr || SSL_CTX_use_certificate(ctx_, cert) != 1) {
    failure = OpenSslErrorText("the certificate could not be used");
  } else if (key == nullptr || SSL_CTX_use_PrivateKey(ctx_, key) != 1) {
    failure = OpenSslErrorText("the private key could not be used");
  } else if (SSL_CTX_check_private_key(ctx_) != 1) {
    failure = OpenSslErrorText("the private key does not match the certificate");
  } else if (SSL_CTX_set_min_proto_version(ctx_, DTLS1_2_VERSION) != 1) {
    failure = OpenSslErrorText("DTLS 1.2 could not be required");
  } else if (SSL_CTX_set_cipher_list(ctx_, ciphers.c_str()) != 1) {
    failure = OpenSslErrorText("the cipher list was refused");
  } else if (SSL_CTX_set_tlsext_use_srtp(ctx_, profiles.c_str()) != 0) {
    // (this one returns 0 on success)
    failure = OpenSslErrorText("the SRTP profile list was refused");
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!failure.empty()) {
    SSL_CTX_free(ctx_);
    ctx_ = nullptr;
    throw Napi::Error::New(env, failure);
  }
  // RFC 5763 5: "The certificate received via the DTLS-SRTP handshake MUST match the fingerprint
  // received in the SDP" and each side MUST present one: the client's is requested and
  // required, and the fingerprint comparison replaces chain verification (self-signed is the
  // norm).
  SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL_CTX_set_cert_verify_callback(ctx_, DtlsEndpoint::VerifyCallback, nullptr);
  SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_options(ctx_, SSL_OP_NO_TICKET | SSL_OP_NO_QUERY_MTU);
  SSL_CTX_set_read_ahead(ctx_, 1);
}

DtlsContext::~DtlsContext() { SSL_CTX_free(ctx_); }

}  // namespace voxgate
