#include "kube/bearer_token.h"

#include "kube/file_text.h"

namespace tessera::kube {

BearerToken::BearerToken(std::string token, std::string file) : token_(std::move(token)), file_(std::move(file)) {}

std::string BearerToken::current() {
  std::lock_guard lock(mutex_);
  if (file_.empty()) return token_;
  // One stat per request is far cheaper than the request; a rotated token is used at once.
  std::error_code error;
  const auto time = std::filesystem::last_write_time(file_, error);
  if (error || (file_read_ && time == file_time_)) return token_;
  if (auto text = read_file_text(file_); text) {
    token_ = trim_whitespace(std::move(*text));
    file_time_ = time;
    file_read_ = true;
  }
  return token_;
}

}  // namespace tessera::kube
