// The bearer token to send: a fixed one, or the contents of a token file, re-read when the
// file's modification time changes (projected service-account tokens are rotated in place).
#pragma once

#include <filesystem>
#include <mutex>
#include <string>

namespace tessera::kube {

class BearerToken {
 public:
  // `file` empty: always `token`. Otherwise the file's contents, with `token` as the value
  // until the file is first read (and whenever it cannot be read).
  BearerToken(std::string token, std::string file);

  // Thread-safe; "" when there is no token.
  std::string current();

 private:
  std::mutex mutex_;
  std::string token_;
  const std::string file_;
  std::filesystem::file_time_type file_time_{};
  bool file_read_ = false;
};

}  // namespace tessera::kube
