#include "apiserver/tls_certificates.h"

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <functional>
#include <memory>

namespace tessera::apiserver {

namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* pointer) const {
    Free(pointer);
  }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free>>;

Error openssl_error(const char* what) {
  const unsigned long code = ERR_get_error();
  char text[256] = {0};
  ERR_error_string_n(code, text, sizeof(text));
  return Error{fmt::format("{}: {}", what, text)};
}

Result<KeyPtr> new_key() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return openssl_error("generating a key");
  return key;
}

bool add_extension(X509* certificate, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
  if (extension == nullptr) return false;
  const bool added = X509_add_ext(certificate, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return added;
}

// A certificate for `key`, signed by `issuer_key` (and named after `issuer`; null: self-signed).
Result<CertPtr> new_certificate(EVP_PKEY* key, const std::string& common_name, X509* issuer, EVP_PKEY* issuer_key,
                                const std::vector<std::pair<int, std::string>>& extensions) {
  CertPtr certificate(X509_new());
  if (!certificate) return openssl_error("allocating a certificate");
  X509_set_version(certificate.get(), 2);
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) return openssl_error("drawing a serial number");
  serial_bytes[0] &= 0x7F;  // positive
  BIGNUM* serial = BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr);
  BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(certificate.get()));
  BN_free(serial);
  // Valid from an hour ago (clock skew) for ten years.
  X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(certificate.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(certificate.get(), key);
  X509_NAME* name = X509_get_subject_name(certificate.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("tessera"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  X509* signer = issuer != nullptr ? issuer : certificate.get();
  X509_set_issuer_name(certificate.get(), X509_get_subject_name(signer));
  for (const auto& [nid, value] : extensions) {
    if (!add_extension(certificate.get(), signer, nid, value)) {
      return openssl_error(fmt::format("adding extension {}", value).c_str());
    }
  }
  if (X509_sign(certificate.get(), issuer_key, EVP_sha256()) == 0) return openssl_error("signing a certificate");
  return certificate;
}

Result<std::string> to_pem(const std::function<int(BIO*)>& write) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return openssl_error("writing PEM");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

}  // namespace

Result<ServerCertificates> make_server_certificates(const std::vector<std::string>& ip_addresses,
                                                    const std::vector<std::string>& dns_names) {
  Result<KeyPtr> ca_key = new_key();
  if (!ca_key) return ca_key.error();
  Result<CertPtr> ca = new_certificate(ca_key->get(), "tessera-dev-ca", nullptr, ca_key->get(),
                                       {{NID_basic_constraints, "critical,CA:TRUE"},
                                        {NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"},
                                        {NID_subject_key_identifier, "hash"}});
  if (!ca) return ca.error();

  std::string alt_names;
  for (const std::string& ip : ip_addresses) alt_names += fmt::format("{}IP:{}", alt_names.empty() ? "" : ",", ip);
  for (const std::string& dns : dns_names) alt_names += fmt::format("{}DNS:{}", alt_names.empty() ? "" : ",", dns);
  Result<KeyPtr> server_key = new_key();
  if (!server_key) return server_key.error();
  Result<CertPtr> server = new_certificate(server_key->get(), "tessera-dev-apiserver", ca->get(), ca_key->get(),
                                           {{NID_basic_constraints, "critical,CA:FALSE"},
                                            {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                                            {NID_ext_key_usage, "serverAuth"},
                                            {NID_authority_key_identifier, "keyid:always"},
                                            {NID_subject_alt_name, alt_names}});
  if (!server) return server.error();

  ServerCertificates result;
  Result<std::string> ca_pem = to_pem([&](BIO* bio) { return PEM_write_bio_X509(bio, ca->get()); });
  Result<std::string> server_pem = to_pem([&](BIO* bio) { return PEM_write_bio_X509(bio, server->get()); });
  Result<std::string> key_pem = to_pem([&](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, server_key->get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  if (!ca_pem) return ca_pem.error();
  if (!server_pem) return server_pem.error();
  if (!key_pem) return key_pem.error();
  result.ca_certificate_pem = *ca_pem;
  result.server_certificate_pem = *server_pem;
  result.server_private_key_pem = *key_pem;
  return result;
}

}  // namespace tessera::apiserver
