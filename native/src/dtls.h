// DTLS 1.2 over OpenSSL (the copy Node embeds and exports), for DTLS-SRTP (RFC 5763, 5764).
// No sockets: datagrams go in through feed() and come out as arrays of Buffers, one a datagram,
// through a BIO of our own. The retransmission timer is read and fired by the caller. Which
// ciphers, profiles, MTU and fingerprints to use is the TypeScript side's (src/media/dtls).
#pragma once
#include <napi.h>
#include <openssl/ssl.h>

#include <string>
#include <vector>

namespace voxgate {

// `what`, and the reason of OpenSSL's last error if there is one; clears OpenSSL's errors.
std::string OpenSslErrorText(const char* what);

// One per thread: the certificate and key, cipher list and SRTP profiles every endpoint of the
// thread uses.
class DtlsContext : public Napi::ObjectWrap<DtlsContext> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit DtlsContext(const Napi::CallbackInfo& info);
  ~DtlsContext() override;

  SSL_CTX* ctx() const { return ctx_; }

 private:
  SSL_CTX* ctx_ = nullptr;
};

// One DTLS association (one call leg), client or server.
class DtlsEndpoint : public Napi::ObjectWrap<DtlsEndpoint> {
 public:
  // What state() answers; the numbers are part of the TypeScript binding.
  enum State {
    kHandshaking = 0,
    kConnected = 1,
    kFailedByPeerAlert = 2,  // the peer sent a fatal alert
    kFailedLocally = 3,      // we found an error (and told the peer with an alert)
    kClosedByPeer = 4,       // close_notify received
    kClosedLocally = 5,      // close() called
  };

  static Napi::Function Define(Napi::Env env);
  explicit DtlsEndpoint(const Napi::CallbackInfo& info);
  ~DtlsEndpoint() override;

  // The BIO's side: the datagram being fed, and datagrams written.
  int ReadInput(char* out, int size);
  void WriteOutput(const char* data, int size);
  void MarkFlushed() { flushed_ = true; }
  size_t InputPending() const { return input_size_; }
  size_t OutputPending() const { return flushed_ ? 0 : pending_.size(); }
  int mtu() const { return mtu_; }

  // The SSL_CTX's certificate verification: the peer's certificate against the fingerprints
  // of the endpoint whose handshake it is.
  static int VerifyCallback(X509_STORE_CTX* store, void* arg);

  // Callbacks from OpenSSL (static trampolines in dtls.cc).
  int VerifyPeer(X509_STORE_CTX* store);
  void OnAlert(int where, int value);
  unsigned int NextTimeoutUs(unsigned int current_us) const;

 private:
  Napi::Value Start(const Napi::CallbackInfo& info);
  Napi::Value Feed(const Napi::CallbackInfo& info);
  Napi::Value HandleTimeout(const Napi::CallbackInfo& info);
  Napi::Value TimeoutMs(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Free(const Napi::CallbackInfo& info);
  Napi::Value GetState(const Napi::CallbackInfo& info);
  Napi::Value Reason(const Napi::CallbackInfo& info);
  Napi::Value SrtpProfile(const Napi::CallbackInfo& info);
  Napi::Value ExportKeyingMaterial(const Napi::CallbackInfo& info);

  bool Live() const;
  void Drive();
  void Fail(int ssl_error);
  void EndDatagram();
  Napi::Array TakeOutput(Napi::Env env);
  void Release();

  // The BIO's methods are the endpoint's own, so that it never outlives them whatever order
  // objects are finalised in; the SSL_CTX is reference-counted by OpenSSL.
  BIO_METHOD* bio_method_ = nullptr;
  SSL* ssl_ = nullptr;
  State state_ = kHandshaking;
  std::string reason_;
  int mtu_ = 1200;
  unsigned int initial_timeout_us_ = 1000000;
  // The peer's certificate must hash to one of these under digest_.
  const EVP_MD* digest_ = nullptr;
  std::vector<std::string> expected_digests_;
  std::string verify_failure_;
  std::string alert_received_;
  bool fatal_alert_received_ = false;
  std::string alert_sent_;
  // Input: the one datagram being fed. Output: finished datagrams and the one being filled.
  // A flush only tells OpenSSL that the next record starts a datagram: records are packed up
  // to the MTU all the same (OpenSSL flushes after every message it retransmits).
  const char* input_ = nullptr;
  size_t input_size_ = 0;
  std::vector<std::string> output_;
  std::string pending_;
  bool flushed_ = false;
};

}  // namespace voxgate
