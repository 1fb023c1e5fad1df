#include "kube/tls_credentials.h"

#include <fmt/format.h>
#include <httplib.h>
#include <openssl/err.h>
#include <openssl/pem.h>

namespace tessera::kube {
namespace {

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

BioPtr memory_bio(std::string_view text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), &BIO_free);
}

// Replaces the trust store in OpenSSL's chain verification with the configured CA bundle.
// httplib loads the system's default CA paths into whatever store the client is given (when
// it has no CA file path), so handing it an X509_STORE would trust every public CA as well;
// client-go trusts only the kubeconfig's CA, and so do we.
int verify_against_configured_ca(X509_STORE_CTX* context, void* trusted) {
  X509_STORE_CTX_set0_trusted_stack(context, static_cast<STACK_OF(X509)*>(trusted));
  return X509_verify_cert(context);
}

}  // namespace

void OpenSslFree::operator()(X509* certificate) const { X509_free(certificate); }
void OpenSslFree::operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
void OpenSslFree::operator()(STACK_OF(X509) * stack) const { sk_X509_pop_free(stack, X509_free); }

std::string drain_openssl_errors() {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    if (!text.empty()) text += "; ";
    text += buffer;
  }
  return text.empty() ? "unknown OpenSSL error" : text;
}

Result<std::vector<X509Ptr>> parse_certificates_pem(std::string_view pem) {
  ERR_clear_error();
  BioPtr bio = memory_bio(pem);
  std::vector<X509Ptr> certificates;
  while (X509* certificate = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certificates.emplace_back(certificate);
  }
  // The loop ends with "no start line" at the end of the text; anything else is damage.
  const unsigned long last = ERR_peek_last_error();
  if (ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE) ERR_clear_error();
  if (ERR_peek_error() != 0) return Error{fmt::format("not a valid PEM certificate: {}", drain_openssl_errors())};
  if (certificates.empty()) return Error{"no PEM certificate in it"};
  return certificates;
}

Result<EvpPkeyPtr> parse_private_key_pem(std::string_view pem) {
  ERR_clear_error();
  BioPtr bio = memory_bio(pem);
  EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return Error{fmt::format("not a valid PEM private key: {}", drain_openssl_errors())};
  return key;
}

Result<std::unique_ptr<TlsCredentials>> TlsCredentials::create(const ClientConfig& config) {
  std::unique_ptr<TlsCredentials> credentials(new TlsCredentials());
  credentials->verify_server_ = !config.insecure_skip_tls_verify;
  if (!config.certificate_authority_pem.empty()) {
    auto certificates = parse_certificates_pem(config.certificate_authority_pem);
    if (!certificates) return Error{fmt::format("certificate authority: {}", certificates.error().message)};
    credentials->trusted_.reset(sk_X509_new_null());
    for (X509Ptr& certificate : *certificates) sk_X509_push(credentials->trusted_.get(), certificate.release());
  }
  if (config.client_certificate_pem.empty() != config.client_key_pem.empty()) {
    return Error{"a client certificate needs its key, and a key its certificate"};
  }
  if (!config.client_certificate_pem.empty()) {
    auto certificates = parse_certificates_pem(config.client_certificate_pem);
    if (!certificates) return Error{fmt::format("client certificate: {}", certificates.error().message)};
    auto key = parse_private_key_pem(config.client_key_pem);
    if (!key) return Error{fmt::format("client key: {}", key.error().message)};
    if (X509_check_private_key(certificates->front().get(), key->get()) != 1) {
      ERR_clear_error();
      return Error{"the client key does not belong to the client certificate"};
    }
    credentials->client_certificate_ = std::move(certificates->front());
    credentials->client_key_ = std::move(*key);
  }
  return credentials;
}

Result<std::unique_ptr<httplib::SSLClient>> TlsCredentials::make_client(const std::string& host, int port) const {
  // The SSLClient takes its own references to the certificate and key.
  auto client = client_certificate_
                    ? std::make_unique<httplib::SSLClient>(host, port, client_certificate_.get(), client_key_.get())
                    : std::make_unique<httplib::SSLClient>(host, port);
  if (!client->is_valid()) return Error{fmt::format("cannot set up TLS: {}", drain_openssl_errors())};
  SSL_CTX* context = client->ssl_context();
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  if (!verify_server_) {
    client->enable_server_certificate_verification(false);
  } else if (trusted_) {
    SSL_CTX_set_cert_verify_callback(context, &verify_against_configured_ca, trusted_.get());
  }
  return client;
}

}  // namespace tessera::kube
