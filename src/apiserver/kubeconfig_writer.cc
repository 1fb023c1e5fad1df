#include "apiserver/kubeconfig_writer.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "wire/base64.h"

namespace tessera::apiserver {

std::string kubeconfig_yaml(const KubeconfigContents& contents) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << "v1";
  out << YAML::Key << "kind" << YAML::Value << "Config";
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << contents.context;
  out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "server" << YAML::Value << contents.server_url;
  if (!contents.ca_certificate_pem.empty()) {
    out << YAML::Key << "certificate-authority-data" << YAML::Value << wire::encode_base64(contents.ca_certificate_pem);
  }
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << contents.context;
  out << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
  if (!contents.token.empty()) out << YAML::Key << "token" << YAML::Value << contents.token;
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << contents.context;
  out << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "cluster" << YAML::Value << contents.context;
  out << YAML::Key << "user" << YAML::Value << contents.context;
  out << YAML::Key << "namespace" << YAML::Value << contents.namespace_name;
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "current-context" << YAML::Value << contents.context;
  out << YAML::Key << "preferences" << YAML::Value << YAML::BeginMap << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Status write_kubeconfig(const std::string& path, const KubeconfigContents& contents) {
  const std::filesystem::path target(path);
  const std::filesystem::path temporary =
      target.parent_path() / fmt::format(".{}.tmp-{}", target.filename().string(), getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) return Error{fmt::format("cannot write {}: {}", temporary.string(), std::strerror(errno))};
    file << kubeconfig_yaml(contents);
    if (!file.flush()) return Error{fmt::format("cannot write {}: {}", temporary.string(), std::strerror(errno))};
  }
  ::chmod(temporary.c_str(), 0600);
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return Error{fmt::format("cannot write {}: {}", path, error.message())};
  }
  return Ok{};
}

}  // namespace tessera::apiserver
