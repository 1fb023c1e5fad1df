// Throwaway certificate authorities and certificates for the TLS tests, made with OpenSSL.
#pragma once

#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <random>
#include <stdexcept>
#include <string>

#include "kube/tls_credentials.h"

namespace tessera::testing {

struct TestIdentity {
  kube::X509Ptr certificate;
  kube::EvpPkeyPtr key;

  std::string certificate_pem() const {
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, certificate.get());
    return drain(bio);
  }
  std::string key_pem() const {
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    return drain(bio);
  }

 private:
  static std::string drain(BIO* bio) {
    char* data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    std::string text(data, static_cast<size_t>(length));
    BIO_free(bio);
    return text;
  }
};

inline void add_extension(X509* certificate, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  if (extension == nullptr) throw std::runtime_error("bad test certificate extension");
  X509_add_ext(certificate, extension, -1);
  X509_EXTENSION_free(extension);
}

// A certificate for `common_name`, signed by `issuer`, or a self-signed CA when issuer is null.
// `subject_alt_names` is OpenSSL's syntax: "IP:127.0.0.1,DNS:localhost".
inline TestIdentity issue_certificate(const std::string& common_name, const TestIdentity* issuer = nullptr,
                                      const std::string& subject_alt_names = "") {
  TestIdentity identity;
  identity.key.reset(EVP_EC_gen("P-256"));
  identity.certificate.reset(X509_new());
  X509* certificate = identity.certificate.get();
  X509_set_version(certificate, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(certificate), static_cast<long>(std::random_device{}() & 0x7fffffff));
  X509_gmtime_adj(X509_getm_notBefore(certificate), -3600);
  X509_gmtime_adj(X509_getm_notAfter(certificate), 24 * 3600);
  X509_set_pubkey(certificate, identity.key.get());
  X509_NAME* subject = X509_get_subject_name(certificate);
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()),
                             -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer->certificate.get() : certificate;
  X509_set_issuer_name(certificate, X509_get_subject_name(signer));
  if (issuer == nullptr) {
    add_extension(certificate, signer, NID_basic_constraints, "critical,CA:TRUE");
    add_extension(certificate, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_extension(certificate, signer, NID_basic_constraints, "CA:FALSE");
    add_extension(certificate, signer, NID_ext_key_usage, "serverAuth,clientAuth");
    if (!subject_alt_names.empty()) {
      add_extension(certificate, signer, NID_subject_alt_name, subject_alt_names.c_str());
    }
  }
  EVP_PKEY* signing_key = issuer != nullptr ? issuer->key.get() : identity.key.get();
  if (X509_sign(certificate, signing_key, EVP_sha256()) == 0) throw std::runtime_error("cannot sign test certificate");
  return identity;
}

}  // namespace tessera::testing
