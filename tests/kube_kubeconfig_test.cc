// Kubeconfig and in-cluster configuration loading.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <optional>

#include "kube/kubeconfig.h"
#include "kube_temp_dir.h"
#include "kube_test_pki.h"

namespace tessera::kube {
namespace {

using testing::issue_certificate;
using testing::TempDir;
using testing::TestIdentity;

std::string base64(const std::string& text) {
  std::string encoded(4 * ((text.size() + 2) / 3) + 1, '\0');
  const int length =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  encoded.resize(static_cast<size_t>(length));
  return encoded;
}

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class KubeconfigTest : public ::testing::Test {
 protected:
  TempDir dir;
  TestIdentity ca = issue_certificate("test-ca");
  TestIdentity client = issue_certificate("tessera", &ca);
};

TEST_F(KubeconfigTest, ReadsTheCurrentContextWithInlineData) {
  const std::string path = dir.write(
      "config", fmt::format(R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: staging
  cluster: {{server: "https://staging:6443"}}
- name: prod
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: {}
users:
- name: admin
  user:
    client-certificate-data: {}
    client-key-data: {}
    token: abc.def
contexts:
- name: prod
  context: {{cluster: prod, user: admin, namespace: team-a}}
- name: staging
  context: {{cluster: staging, user: admin}}
)",
                            base64(ca.certificate_pem()), base64(client.certificate_pem()), base64(client.key_pem())));
  auto config = load_kubeconfig(path);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->server, "https://10.0.0.1:6443");
  EXPECT_EQ(config->certificate_authority_pem, ca.certificate_pem());
  EXPECT_EQ(config->client_certificate_pem, client.certificate_pem());
  EXPECT_EQ(config->client_key_pem, client.key_pem());
  EXPECT_EQ(config->bearer_token, "abc.def");
  EXPECT_EQ(config->bearer_token_file, "");
  EXPECT_EQ(config->default_namespace, "team-a");
  EXPECT_FALSE(config->insecure_skip_tls_verify);

  auto staging = load_kubeconfig(path, "staging");
  ASSERT_TRUE(staging) << staging.error().message;
  EXPECT_EQ(staging->server, "https://staging:6443");
  EXPECT_EQ(staging->certificate_authority_pem, "");
  EXPECT_EQ(staging->default_namespace, "default");
}

TEST_F(KubeconfigTest, ReadsFilesRelativeToTheKubeconfigFolder) {
  dir.write("pki/ca.crt", ca.certificate_pem());
  const std::string cert_path = dir.write("pki/client.crt", client.certificate_pem());
  dir.write("pki/client.key", client.key_pem());
  dir.write("pki/token", "file-token\n");
  const std::string path = dir.write("config", fmt::format(R"(current-context: c
clusters:
- name: k
  cluster:
    server: https://k.example:443
    certificate-authority: pki/ca.crt
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    client-certificate: {}
    client-key: pki/client.key
    tokenFile: pki/token
contexts:
- name: c
  context: {{cluster: k, user: u}}
)",
                                                           cert_path));  // an absolute path stays as it is
  auto config = load_kubeconfig(path);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->certificate_authority_pem, ca.certificate_pem());
  EXPECT_EQ(config->client_certificate_pem, client.certificate_pem());
  EXPECT_EQ(config->client_key_pem, client.key_pem());
  EXPECT_TRUE(config->insecure_skip_tls_verify);
  EXPECT_EQ(config->bearer_token_file, (dir.path() / "pki/token").string());
  EXPECT_EQ(config->bearer_token, "file-token");
}

TEST_F(KubeconfigTest, ErrorsNameTheFileAndTheField) {
  const auto load_error = [&](const std::string& text, const std::string& context = "") {
    const std::string path = dir.write("config", text);
    auto config = load_kubeconfig(path, context);
    return config ? std::string("(loaded)") : config.error().message;
  };
  const std::string prefix = fmt::format("kubeconfig {}: ", (dir.path() / "config").string());
  const std::string tail = R"(
contexts:
- name: c
  context: {cluster: k, user: u}
clusters:
- name: k
  cluster: {server: "https://k:6443"}
)";

  EXPECT_EQ(load_error("current-context: c\nusers:\n- name: u\n  user:\n    client-certificate-data: " +
                       base64(client.certificate_pem()) + "\n    client-key-data: '%%%'\n" + tail),
            prefix + "users[0].user.client-key-data: not valid base64");
  EXPECT_EQ(
      load_error("current-context: c\nusers:\n- name: u\n  user: {client-certificate: missing.crt, "
                 "client-key: missing.key}\n" +
                 tail)
          .rfind(prefix + "users[0].user.client-certificate: cannot read " + (dir.path() / "missing.crt").string(), 0),
      0u);
  EXPECT_EQ(load_error("users:\n- name: u\n  user: {}\n" + tail),
            prefix + "current-context: not set, and no context was named");
  EXPECT_EQ(load_error("users:\n- name: u\n  user: {}\n" + tail, "other"),
            prefix + "contexts: no entry named \"other\"");
  EXPECT_EQ(load_error("current-context: c\nusers: []\n" + tail), prefix + "users: no entry named \"u\"");
  EXPECT_EQ(load_error("current-context: c\nusers:\n- name: u\n  user: {exec: {command: aws}}\n" + tail),
            prefix + "users[0].user.exec: not supported; use a token, a token file or a client certificate");
  EXPECT_EQ(load_error("current-context: c\nusers:\n- name: u\n  user: {client-key-data: " + base64(client.key_pem()) +
                       "}\n" + tail),
            prefix + "users[0].user: client-certificate and client-key must be given together");
  EXPECT_EQ(load_error("current-context: c\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: "
                       "k, user: u}\nclusters:\n- name: k\n  cluster: {certificate-authority-data: " +
                       base64("not a certificate") + "}\n"),
            prefix + "clusters[0].cluster.server: not set");
  EXPECT_EQ(load_error("current-context: c\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: "
                       "k, user: u}\nclusters:\n- name: k\n  cluster: {server: 'https://k', insecure-skip-tls-verify: "
                       "maybe}\n"),
            prefix + "clusters[0].cluster.insecure-skip-tls-verify: expected true or false");
  const std::string bad_ca = load_error(
      "current-context: c\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
      "clusters:\n- name: k\n  cluster: {server: 'https://k', certificate-authority-data: " +
      base64("not a certificate") + "}\n");
  EXPECT_EQ(bad_ca.rfind(prefix + "clusters[0].cluster.certificate-authority: no PEM certificate", 0), 0u) << bad_ca;
  const std::string syntax = load_error("current-context: c\nclusters: [\n");
  EXPECT_EQ(syntax.rfind(prefix + "line ", 0), 0u) << syntax;

  auto missing = load_kubeconfig((dir.path() / "nope").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message.rfind("kubeconfig: cannot read " + (dir.path() / "nope").string(), 0), 0u);
}

TEST_F(KubeconfigTest, InClusterUsesTheServiceAccountAndBracketsIpv6Hosts) {
  dir.write("sa/token", "sa-token\n");
  dir.write("sa/ca.crt", ca.certificate_pem());
  dir.write("sa/namespace", "tessera-system");
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00::1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  auto config = load_in_cluster_config((dir.path() / "sa").string());
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->server, "https://[fd00::1]:443");
  EXPECT_EQ(config->bearer_token, "sa-token");
  EXPECT_EQ(config->bearer_token_file, (dir.path() / "sa/token").string());
  EXPECT_EQ(config->certificate_authority_pem, ca.certificate_pem());
  EXPECT_EQ(config->default_namespace, "tessera-system");

  ScopedEnv ipv4("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  auto v4 = load_in_cluster_config((dir.path() / "sa").string());
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->server, "https://10.96.0.1:443");

  ScopedEnv unset("KUBERNETES_SERVICE_HOST", nullptr);
  auto outside = load_in_cluster_config((dir.path() / "sa").string());
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.error().message.find("KUBERNETES_SERVICE_HOST"), std::string::npos);
}

TEST_F(KubeconfigTest, DefaultConfigTakesTheFirstKubeconfigEntry) {
  const std::string first = dir.write("first", R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "http://first:8080"}}]
)");
  const std::string second = dir.write("second", R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "http://second:8080"}}]
)");
  ScopedEnv kubeconfig("KUBECONFIG", (first + ":" + second).c_str());
  auto config = load_default_config();
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->server, "http://first:8080");

  ScopedEnv no_kubeconfig("KUBECONFIG", nullptr);
  ScopedEnv home("HOME", dir.path().c_str());
  dir.write(".kube/config", R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "http://home:8080"}}]
)");
  auto from_home = load_default_config();
  ASSERT_TRUE(from_home) << from_home.error().message;
  EXPECT_EQ(from_home->server, "http://home:8080");
}

// `--context` without `--kubeconfig` picks that context of the default kubeconfig, as kubectl does.
TEST_F(KubeconfigTest, DefaultConfigTakesTheContextAsked) {
  const std::string file = dir.write("config", R"(current-context: c
contexts: [{name: c, context: {cluster: k}}, {name: staging, context: {cluster: s, namespace: ml}}]
clusters: [{name: k, cluster: {server: "http://k:8080"}}, {name: s, cluster: {server: "http://s:8080"}}]
)");
  ScopedEnv kubeconfig("KUBECONFIG", file.c_str());
  auto staging = load_default_config("staging");
  ASSERT_TRUE(staging) << staging.error().message;
  EXPECT_EQ(staging->server, "http://s:8080");
  EXPECT_EQ(staging->default_namespace, "ml");
  auto missing = load_default_config("nope");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("nope"), std::string::npos) << missing.error().message;
}

}  // namespace
}  // namespace tessera::kube
