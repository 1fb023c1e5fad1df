// What the GPU memory tests share: sizes, and a simulated GPU node — a fake device (the fake
// libcuda.so.1) and a ledger in a folder of their own — on which the workload programs run as
// separate processes through the real interposer, loaded the normal way (LD_PRELOAD, and the fake
// driver found as libcuda.so.1 on LD_LIBRARY_PATH).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpumem/ledger.h"

namespace tessera::gpumem::testing {

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

using Environment = std::map<std::string, std::string>;

struct Finished {
  int exit_code = -1;                         // -1 when ended by a signal
  int signal = 0;                             // the signal that ended it, 0 if none
  std::map<std::string, std::string> values;  // its key=value lines
  std::string value(const std::string& key) const {
    auto found = values.find(key);
    return found == values.end() ? "" : found->second;
  }
  std::uint64_t number(const std::string& key) const { return std::strtoull(value(key).c_str(), nullptr, 10); }
};

// A workload program started and still running: its stdin (close to let `hold` free and end) and stdout.
struct Running {
  pid_t pid = -1;
  int input = -1;
  FILE* output = nullptr;
};

class FakeGpuNode {
 public:
  explicit FakeGpuNode(std::uint64_t capacity, bool overcommit = false) : capacity_(capacity) {
    char pattern[] = "/tmp/tessera-gpumem-node-XXXXXX";
    directory_ = mkdtemp(pattern);
    base_ = {{"LD_PRELOAD", TESSERA_GPUMEM_INTERPOSER},
             {"LD_LIBRARY_PATH", TESSERA_FAKE_CUDA_DIR},
             {"TESSERA_FAKE_CUDA_STATE", directory_ + "/device"},
             {"TESSERA_FAKE_CUDA_DEVICE_MEMORY", std::to_string(capacity)},
             {"TESSERA_FAKE_CUDA_OVERCOMMIT", overcommit ? "1" : "0"},
             {"TESSERA_GPUMEM_LEDGER", ledger_path()}};
  }
  ~FakeGpuNode() { std::filesystem::remove_all(directory_); }

  std::string ledger_path() const { return directory_ + "/ledger"; }
  std::uint64_t capacity() const { return capacity_; }

  std::unique_ptr<Ledger> ledger() const {
    std::string error;
    auto ledger = Ledger::open(ledger_path(), &error);
    EXPECT_TRUE(ledger) << error;
    return ledger;
  }

  Running start(const Environment& extra, const std::vector<std::string>& arguments) const {
    // Close-on-exec: a program started later must not hold this one's input open (it would never
    // see the end of it).
    int input[2], output[2];
    if (pipe2(input, O_CLOEXEC) != 0 || pipe2(output, O_CLOEXEC) != 0) return {};
    Environment environment = base_;
    for (const auto& [key, value] : extra) environment[key] = value;
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(input[0], 0);
      dup2(output[1], 1);
      close(input[1]);
      close(output[0]);
      std::vector<std::string> texts;
      for (const auto& [key, value] : environment) texts.push_back(key + "=" + value);
      std::vector<char*> envp, argv;
      for (std::string& text : texts) envp.push_back(text.data());
      envp.push_back(nullptr);
      std::string program = TESSERA_GPUMEM_WORKLOAD;
      argv.push_back(program.data());
      std::vector<std::string> copies = arguments;
      for (std::string& argument : copies) argv.push_back(argument.data());
      argv.push_back(nullptr);
      execve(program.c_str(), argv.data(), envp.data());
      _exit(127);
    }
    close(input[0]);
    close(output[1]);
    return {pid, input[1], fdopen(output[0], "r")};
  }

  // Reads the program's output up to a line starting with `prefix`; that line, or "" at its end.
  static std::string read_until(Running& running, const std::string& prefix) {
    char line[4096];
    while (std::fgets(line, sizeof(line), running.output) != nullptr) {
      std::string text = line;
      if (text.rfind(prefix, 0) == 0) return text;
    }
    return "";
  }

  static Finished finish(Running& running) {
    Finished finished;
    if (running.input >= 0) close(running.input);
    char line[4096];
    while (running.output != nullptr && std::fgets(line, sizeof(line), running.output) != nullptr) {
      std::string text = line;
      if (!text.empty() && text.back() == '\n') text.pop_back();
      const auto equals = text.find('=');
      if (equals != std::string::npos) finished.values[text.substr(0, equals)] = text.substr(equals + 1);
    }
    if (running.output != nullptr) std::fclose(running.output);
    int status = 0;
    if (running.pid > 0) waitpid(running.pid, &status, 0);
    if (WIFEXITED(status)) finished.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) finished.signal = WTERMSIG(status);
    return finished;
  }

  Finished run(const Environment& extra, const std::vector<std::string>& arguments) const {
    Running running = start(extra, arguments);
    return finish(running);
  }

 private:
  std::uint64_t capacity_;
  std::string directory_;
  Environment base_;
};

inline Environment pod(const std::string& uid, std::uint64_t limit, std::uint64_t request = 0) {
  return {{"TESSERA_POD_UID", uid},
          {"TESSERA_GPU_MEMORY_LIMIT", std::to_string(limit)},
          {"TESSERA_GPU_MEMORY_REQUEST", std::to_string(request)}};
}

inline Environment with(Environment environment, const Environment& more) {
  for (const auto& [key, value] : more) environment[key] = value;
  return environment;
}

inline const DeviceRecord& device0(Ledger& ledger) { return ledger.layout().devices[0]; }

inline const EntryRecord* entry_of(Ledger& ledger, const std::string& uid) {
  for (const EntryRecord& entry : ledger.layout().entries) {
    if (entry.state == kSlotLive && uid == entry.uid) return &entry;
  }
  return nullptr;
}

// Polls `done` until it holds; fails after a minute (which only a broken program takes): for what
// another process does in its own time, asserted as an outcome, never as a duration.
inline bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace tessera::gpumem::testing
