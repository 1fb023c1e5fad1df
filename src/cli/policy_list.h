// Parses a comma-separated --policy value.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace tessera {

inline std::vector<std::string> split_policy_list(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream stream(text);
  std::string name;
  while (std::getline(stream, name, ',')) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

}  // namespace tessera
