// HTTPS: the server certificate is verified against the configured CA only, its names against
// the host, client certificates are presented, and connections are kept alive.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "kube/api_client.h"
#include "kube_test_pki.h"
#include "kube_test_server.h"

namespace tessera::kube {
namespace {

using testing::issue_certificate;
using testing::TestIdentity;
using testing::TestServer;

class TlsTest : public ::testing::Test {
 protected:
  // Serves GET /ok over TLS with `certificate`; with `client_ca`, demands client certificates
  // signed by it.
  void serve(const TestIdentity& certificate, const TestIdentity* client_ca = nullptr) {
    X509_STORE* client_store = nullptr;
    if (client_ca != nullptr) {
      client_store = X509_STORE_new();  // the server takes ownership
      X509_STORE_add_cert(client_store, client_ca->certificate.get());
    }
    auto https =
        std::make_unique<httplib::SSLServer>(certificate.certificate.get(), certificate.key.get(), client_store);
    ASSERT_TRUE(https->is_valid());
    server = std::make_unique<TestServer>(std::move(https));
    server->http().Get("/ok", [this](const httplib::Request& request, httplib::Response& response) {
      std::lock_guard lock(mutex);
      authorizations.push_back(request.get_header_value("Authorization"));
      ports.insert(request.remote_port);
      response.set_content(R"({"ok":true})", "application/json");
    });
    server->start();
  }

  ClientConfig config_trusting(const TestIdentity& authority) const {
    ClientConfig config;
    config.server = server->url("https");
    config.certificate_authority_pem = authority.certificate_pem();
    return config;
  }

  TestIdentity ca = issue_certificate("tessera-test-ca");
  TestIdentity other_ca = issue_certificate("tessera-test-ca");  // same name, different key
  std::unique_ptr<TestServer> server;
  std::mutex mutex;
  std::vector<std::string> authorizations;
  std::set<int> ports;
};

TEST_F(TlsTest, ConnectsWhenTheServerIsSignedByTheConfiguredCa) {
  serve(issue_certificate("apiserver", &ca, "IP:127.0.0.1"));
  ClientConfig config = config_trusting(ca);
  config.bearer_token = "tls-token";
  ApiClient client(config);
  for (int i = 0; i < 5; ++i) {
    auto response = client.get("/ok");
    ASSERT_TRUE(response) << response.error().message;
    EXPECT_EQ(response->status, 200);
  }
  std::lock_guard lock(mutex);
  EXPECT_EQ(authorizations.front(), "Bearer tls-token");
  EXPECT_EQ(ports.size(), 1u);  // one TLS connection, kept alive
}

// The server closes a kept-alive TLS connection after 1 s of quiet (TestServer's keep-alive
// timeout), leaving a close_notify to read: the client must not send the next request on it,
// and a write must never fail for it.
TEST_F(TlsTest, WritesAfterAQuietPeriodGoThroughOnANewConnection) {
  serve(issue_certificate("apiserver", &ca, "IP:127.0.0.1"));
  int posts = 0;
  server->http().Post("/write", [&](const httplib::Request& request, httplib::Response& response) {
    std::lock_guard lock(mutex);
    ++posts;
    ports.insert(request.remote_port);
    response.set_content(R"({"ok":true})", "application/json");
  });
  ApiClient client(config_trusting(ca));
  ASSERT_TRUE(client.post("/write", {{"n", 0}}));
  for (int quiet = 1; quiet <= 2; ++quiet) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    auto response = client.post("/write", {{"n", quiet}});
    ASSERT_TRUE(response) << "after quiet period " << quiet << ": " << response.error().message;
    EXPECT_EQ(response->status, 200);
  }
  std::lock_guard lock(mutex);
  EXPECT_EQ(posts, 3);         // each write sent once
  EXPECT_EQ(ports.size(), 3u);  // on a new connection after each quiet period
}

TEST_F(TlsTest, RefusesAServerSignedByAnotherCa) {
  serve(issue_certificate("apiserver", &ca, "IP:127.0.0.1"));
  ApiClient client(config_trusting(other_ca));
  auto response = client.get("/ok");
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message.find("not trusted"), std::string::npos) << response.error().message;
  std::lock_guard lock(mutex);
  EXPECT_TRUE(authorizations.empty());
}

TEST_F(TlsTest, RefusesACertificateForAnotherHost) {
  serve(issue_certificate("apiserver.example", &ca, "DNS:apiserver.example,IP:10.0.0.1"));
  ApiClient client(config_trusting(ca));
  auto response = client.get("/ok");
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message.find("not valid for host 127.0.0.1"), std::string::npos)
      << response.error().message;
}

TEST_F(TlsTest, InsecureSkipTlsVerifyAcceptsAnyCertificate) {
  serve(issue_certificate("apiserver.example", &other_ca, "DNS:apiserver.example"));
  ClientConfig config = config_trusting(ca);
  config.insecure_skip_tls_verify = true;
  ApiClient client(config);
  auto response = client.get("/ok");
  ASSERT_TRUE(response) << response.error().message;
}

TEST_F(TlsTest, PresentsTheClientCertificate) {
  const TestIdentity client_ca = issue_certificate("clients");
  const TestIdentity user = issue_certificate("tessera-scheduler", &client_ca);
  serve(issue_certificate("apiserver", &ca, "IP:127.0.0.1"), &client_ca);

  ClientConfig config = config_trusting(ca);
  config.client_certificate_pem = user.certificate_pem();
  config.client_key_pem = user.key_pem();
  ApiClient with_certificate(config);
  auto response = with_certificate.get("/ok");
  ASSERT_TRUE(response) << response.error().message;

  ApiClient without_certificate(config_trusting(ca));
  EXPECT_FALSE(without_certificate.get("/ok"));
}

TEST_F(TlsTest, BadTlsMaterialFailsEveryRequestWithAClearMessage) {
  serve(issue_certificate("apiserver", &ca, "IP:127.0.0.1"));
  ClientConfig config = config_trusting(ca);
  config.certificate_authority_pem = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  ApiClient client(config);
  auto response = client.get("/ok");
  ASSERT_FALSE(response);
  EXPECT_NE(response.error().message.find("certificate authority"), std::string::npos) << response.error().message;

  ClientConfig mismatched = config_trusting(ca);
  const TestIdentity user = issue_certificate("user", &ca);
  const TestIdentity stranger = issue_certificate("stranger", &ca);
  mismatched.client_certificate_pem = user.certificate_pem();
  mismatched.client_key_pem = stranger.key_pem();
  ApiClient wrong_key(mismatched);
  auto refused = wrong_key.get("/ok");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("does not belong"), std::string::npos) << refused.error().message;
}

}  // namespace
}  // namespace tessera::kube
