#include "kube/kubeconfig.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "kube/file_text.h"
#include "kube/tls_credentials.h"
#include "wire/base64.h"

namespace tessera::kube {
namespace {

namespace fs = std::filesystem;

// Reads the fields of one kubeconfig; every error names the file and the field's path.
class KubeconfigReader {
 public:
  KubeconfigReader(std::string path, YAML::Node root)
      : path_(std::move(path)), folder_(fs::path(path_).parent_path()), root_(std::move(root)) {}

  Result<ClientConfig> read(const std::string& requested_context) {
    if (!root_.IsMap()) return error("", "expected a YAML mapping at the top level");
    std::string context_name = requested_context;
    if (context_name.empty()) {
      auto current = string_field(root_, "current-context");
      if (!current) return current.error();
      if (current->empty()) return error("current-context", "not set, and no context was named");
      context_name = *current;
    }
    auto context = find_named("contexts", context_name, "context");
    if (!context) return context.error();
    auto cluster_name = string_field(context->node, "cluster", context->field);
    if (!cluster_name) return cluster_name.error();
    auto user_name = string_field(context->node, "user", context->field);
    if (!user_name) return user_name.error();
    auto context_namespace = string_field(context->node, "namespace", context->field);
    if (!context_namespace) return context_namespace.error();

    ClientConfig config;
    if (!context_namespace->empty()) config.default_namespace = *context_namespace;
    if (cluster_name->empty()) return error(context->field + ".cluster", "not set");
    auto cluster = find_named("clusters", *cluster_name, "cluster");
    if (!cluster) return cluster.error();
    if (auto status = read_cluster(*cluster, config); !status) return status.error();
    if (!user_name->empty()) {
      auto user = find_named("users", *user_name, "user");
      if (!user) return user.error();
      if (auto status = read_user(*user, config); !status) return status.error();
    }
    return config;
  }

 private:
  // An entry of a named list ("clusters", "users", "contexts"): its inner mapping and the
  // field path that leads to it ("clusters[2].cluster").
  struct Entry {
    YAML::Node node;
    std::string field;
  };

  Error error(const std::string& field, std::string_view what) const {
    if (field.empty()) return Error{fmt::format("kubeconfig {}: {}", path_, what)};
    return Error{fmt::format("kubeconfig {}: {}: {}", path_, field, what)};
  }

  static std::string join(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : fmt::format("{}.{}", parent, key);
  }

  // A scalar field as text; "" when absent.
  Result<std::string> string_field(const YAML::Node& parent, const std::string& key,
                                   const std::string& parent_field = "") const {
    const YAML::Node value = parent[key];
    if (!value || value.IsNull()) return std::string();
    if (!value.IsScalar()) return error(join(parent_field, key), "expected a string");
    return value.Scalar();
  }

  Result<bool> bool_field(const YAML::Node& parent, const std::string& key, const std::string& parent_field) const {
    const YAML::Node value = parent[key];
    if (!value || value.IsNull()) return false;
    bool flag = false;
    if (!value.IsScalar() || !YAML::convert<bool>::decode(value, flag)) {
      return error(join(parent_field, key), "expected true or false");
    }
    return flag;
  }

  Result<Entry> find_named(const std::string& list_key, const std::string& name, const std::string& inner_key) const {
    const YAML::Node list = root_[list_key];
    if (list && !list.IsNull() && !list.IsSequence()) return error(list_key, "expected a list");
    for (size_t i = 0; list && i < list.size(); ++i) {
      const YAML::Node item = list[i];
      if (!item.IsMap() || !item["name"] || !item["name"].IsScalar() || item["name"].Scalar() != name) continue;
      std::string field = fmt::format("{}[{}].{}", list_key, i, inner_key);
      const YAML::Node inner = item[inner_key];
      if (!inner || !inner.IsMap()) return error(field, "missing or not a mapping");
      return Entry{inner, std::move(field)};
    }
    return error(list_key, fmt::format("no entry named \"{}\"", name));
  }

  // The contents of a `<key>-data` (base64) field, else of the file named by `<key>`
  // (relative to the kubeconfig's folder); "" when neither is set.
  Result<std::string> data_or_file(const Entry& entry, const std::string& key) const {
    const std::string data_key = key + "-data";
    auto data = string_field(entry.node, data_key, entry.field);
    if (!data) return data.error();
    if (!data->empty()) {
      auto decoded = wire::decode_base64(*data);
      if (!decoded) return error(join(entry.field, data_key), "not valid base64");
      return *decoded;
    }
    auto file = string_field(entry.node, key, entry.field);
    if (!file) return file.error();
    if (file->empty()) return std::string();
    auto text = read_file_text(resolve(*file));
    if (!text) return error(join(entry.field, key), text.error().message);
    return text;
  }

  std::string resolve(const std::string& file) const {
    const fs::path path(file);
    return path.is_absolute() ? file : (folder_ / path).string();
  }

  Status read_cluster(const Entry& cluster, ClientConfig& config) const {
    auto server = string_field(cluster.node, "server", cluster.field);
    if (!server) return server.error();
    if (server->empty()) return error(join(cluster.field, "server"), "not set");
    config.server = *server;
    auto insecure = bool_field(cluster.node, "insecure-skip-tls-verify", cluster.field);
    if (!insecure) return insecure.error();
    config.insecure_skip_tls_verify = *insecure;
    auto authority = data_or_file(cluster, "certificate-authority");
    if (!authority) return authority.error();
    if (!authority->empty()) {
      if (auto parsed = parse_certificates_pem(*authority); !parsed) {
        return error(join(cluster.field, "certificate-authority"), parsed.error().message);
      }
    }
    config.certificate_authority_pem = std::move(*authority);
    return Ok{};
  }

  Status read_user(const Entry& user, ClientConfig& config) const {
    for (const char* unsupported : {"exec", "auth-provider", "username"}) {
      if (user.node[unsupported]) {
        return error(join(user.field, unsupported), "not supported; use a token, a token file or a client certificate");
      }
    }
    auto certificate = data_or_file(user, "client-certificate");
    if (!certificate) return certificate.error();
    auto key = data_or_file(user, "client-key");
    if (!key) return key.error();
    if (certificate->empty() != key->empty()) {
      return error(user.field, "client-certificate and client-key must be given together");
    }
    if (!certificate->empty()) {
      if (auto parsed = parse_certificates_pem(*certificate); !parsed) {
        return error(join(user.field, "client-certificate"), parsed.error().message);
      }
      if (auto parsed = parse_private_key_pem(*key); !parsed) {
        return error(join(user.field, "client-key"), parsed.error().message);
      }
    }
    config.client_certificate_pem = std::move(*certificate);
    config.client_key_pem = std::move(*key);

    auto token = string_field(user.node, "token", user.field);
    if (!token) return token.error();
    auto token_file = string_field(user.node, "tokenFile", user.field);
    if (!token_file) return token_file.error();
    config.bearer_token = *token;
    // As in client-go, an inline token wins over a token file.
    if (token->empty() && !token_file->empty()) {
      config.bearer_token_file = resolve(*token_file);
      auto text = read_file_text(config.bearer_token_file);
      if (!text) return error(join(user.field, "tokenFile"), text.error().message);
      config.bearer_token = trim_whitespace(std::move(*text));
    }
    return Ok{};
  }

  std::string path_;
  fs::path folder_;
  YAML::Node root_;
};

std::string bracket_ipv6(const std::string& host) {
  return host.find(':') != std::string::npos ? fmt::format("[{}]", host) : host;
}

}  // namespace

Result<ClientConfig> load_kubeconfig(const std::string& path, const std::string& context) {
  auto text = read_file_text(path);
  if (!text) return Error{fmt::format("kubeconfig: {}", text.error().message)};
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return Error{fmt::format("kubeconfig {}: line {}: {}", path, e.mark.line + 1, e.msg)};
  }
  try {
    return KubeconfigReader(path, root).read(context);
  } catch (const YAML::Exception& e) {  // a shape yaml-cpp refuses to index (e.g. a scalar as a map)
    return Error{fmt::format("kubeconfig {}: line {}: {}", path, e.mark.line + 1, e.msg)};
  }
}

Result<ClientConfig> load_in_cluster_config(const std::string& account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return Error{"not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set"};
  }
  ClientConfig config;
  config.server = fmt::format("https://{}:{}", bracket_ipv6(host), port);
  const fs::path folder(account_dir);
  config.bearer_token_file = (folder / "token").string();
  auto token = read_file_text(config.bearer_token_file);
  if (!token) return Error{fmt::format("in-cluster service account: {}", token.error().message)};
  config.bearer_token = trim_whitespace(std::move(*token));
  auto authority = read_file_text((folder / "ca.crt").string());
  if (!authority) return Error{fmt::format("in-cluster service account: {}", authority.error().message)};
  config.certificate_authority_pem = std::move(*authority);
  if (auto ns = read_file_text((folder / "namespace").string()); ns && !trim_whitespace(*ns).empty()) {
    config.default_namespace = trim_whitespace(std::move(*ns));
  }
  return config;
}

Result<ClientConfig> load_default_config(const std::string& context) {
  if (const char* list = std::getenv("KUBECONFIG"); list != nullptr && *list != '\0') {
    std::string_view entries = list;
    while (!entries.empty()) {
      const size_t colon = entries.find(':');
      const std::string_view first = entries.substr(0, colon);
      if (!first.empty()) return load_kubeconfig(std::string(first), context);
      if (colon == std::string_view::npos) break;
      entries.remove_prefix(colon + 1);
    }
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    const fs::path path = fs::path(home) / ".kube" / "config";
    std::error_code ignored;
    if (fs::exists(path, ignored)) return load_kubeconfig(path.string(), context);
  }
  auto in_cluster = load_in_cluster_config();
  if (!in_cluster) {
    return Error{
        fmt::format("no Kubernetes configuration: $KUBECONFIG is not set, ~/.kube/config does not exist, "
                    "and {}",
                    in_cluster.error().message)};
  }
  return in_cluster;
}

}  // namespace tessera::kube
