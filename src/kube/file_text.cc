#include "kube/file_text.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tessera::kube {

Result<std::string> read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("cannot read {}: {}", path, std::strerror(errno))};
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return Error{fmt::format("cannot read {}: {}", path, std::strerror(errno))};
  return contents.str();
}

std::string trim_whitespace(std::string text) {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  size_t end = text.size();
  while (end > 0 && is_space(text[end - 1])) --end;
  size_t begin = 0;
  while (begin < end && is_space(text[begin])) ++begin;
  return text.substr(begin, end - begin);
}

}  // namespace tessera::kube
