#include "dtls-certificate.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <cstdint>
#include <string>

namespace voxgate {

namespace {

std::string PemOf(BIO* bio) {
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  return length > 0 ? std::string(data, static_cast<size_t>(length)) : std::string();
}

// Fills in and signs the certificate; false on any failure.
bool BuildCertificate(X509* cert, EVP_PKEY* key, const std::string& common_name, long days) {
  uint64_t serial = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof serial) != 1) return false;
  // A positive serial of up to 63 bits (RFC 5280 4.1.2.2: a positive integer).
  serial = (serial >> 1) | 1;
  X509_NAME* name = X509_get_subject_name(cert);
  return X509_set_version(cert, 2) == 1 &&
         ASN1_INTEGER_set_int64(X509_get_serialNumber(cert), static_cast<int64_t>(serial)) == 1 &&
         X509_gmtime_adj(X509_getm_notBefore(cert), -86400L) != nullptr &&
         X509_gmtime_adj(X509_getm_notAfter(cert), days * 86400L) != nullptr &&
         X509_set_pubkey(cert, key) == 1 &&
         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                    reinterpret_cast<const unsigned char*>(common_name.c_str()),
                                    -1, -1, 0) == 1 &&
         X509_set_issuer_name(cert, name) == 1 && X509_sign(cert, key, EVP_sha256()) > 0;
}

}  // namespace

Napi::Value GenerateDtlsCertificate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string common_name = info[0].As<Napi::String>().Utf8Value();
  const long days = info[1].As<Napi::Number>().Int32Value();
  ERR_clear_error();
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  X509* cert = X509_new();
  BIO* cert_out = BIO_new(BIO_s_mem());
  BIO* key_out = BIO_new(BIO_s_mem());
  const bool ok = key != nullptr && cert != nullptr && cert_out != nullptr && key_out != nullptr &&
                  BuildCertificate(cert, key, common_name, days) &&
                  PEM_write_bio_X509(cert_out, cert) == 1 &&
                  PEM_write_bio_PrivateKey(key_out, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  Napi::Object result = Napi::Object::New(env);
  if (ok) {
    result.Set("cert", PemOf(cert_out));
    result.Set("key", PemOf(key_out));
  }
  BIO_free(cert_out);
  BIO_free(key_out);
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!ok) {
    const unsigned long code = ERR_peek_last_error();
    char text[256] = "no OpenSSL error";
    if (code != 0) ERR_error_string_n(code, text, sizeof text);
    ERR_clear_error();
    throw Napi::Error::New(env, std::string("the DTLS certificate could not be made: ") + text);
  }
  return result;
}

}  // namespace voxgate
