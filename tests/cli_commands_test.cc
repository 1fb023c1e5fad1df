// The user commands as a user runs them, against a canned API server: arguments, what they print,
// and the errors a kubectl user expects — one line on stderr and a non-zero exit.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/user/bash_completion.h"
#include "cli/user/user_commands.h"
#include "kube_temp_dir.h"
#include "kube_test_server.h"

namespace tessera::cli {
namespace {

using nlohmann::json;
using testing::TempDir;
using testing::TestServer;

struct Outcome {
  int exit_code = 0;
  std::string out, err;
};

// Runs `tessera ARGS...` with the user commands, as main does (usage errors exit 2).
Outcome run(std::vector<std::string> args) {
  CLI::App app{"tessera", "tessera"};
  app.require_subcommand(1);
  Outcome outcome;
  add_user_commands(app, outcome.exit_code);
  args.insert(args.begin(), "tessera");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& error) {
    outcome.exit_code = app.exit(error) == 0 ? 0 : 2;
  }
  outcome.out = ::testing::internal::GetCapturedStdout();
  outcome.err = ::testing::internal::GetCapturedStderr();
  return outcome;
}

json status(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
          {"message", message}, {"reason", reason}, {"code", code}};
}

// A canned API server and a kubeconfig for it whose context's namespace is "ml".
class CliCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto handle = [this](const httplib::Request& request, httplib::Response& response) {
      std::lock_guard lock(mutex);
      requests.push_back(request.method + " " + request.path);
      bodies.push_back(request.body);
      auto answer = answers.find(request.method + " " + request.path);
      if (answer == answers.end()) {
        response.status = 404;
        response.set_content(status(404, "NotFound", "the server could not find the requested resource").dump(),
                             "application/json");
      } else {
        response.status = answer->second.first;
        response.set_content(answer->second.second.dump(), "application/json");
      }
    };
    server.http().Get(".*", handle).Post(".*", handle).Delete(".*", handle);
    server.start();
    kubeconfig = dir.write("config", fmt::format(R"(current-context: dev
contexts: [{{name: dev, context: {{cluster: k, user: u, namespace: ml}}}}]
clusters: [{{name: k, cluster: {{server: "{}"}}}}]
users: [{{name: u, user: {{token: secret}}}}]
)",
                                                 server.url()));
  }

  void answer(const std::string& request, int code, json body) {
    std::lock_guard lock(mutex);
    answers[request] = {code, std::move(body)};
  }

  TempDir dir;
  TestServer server;
  std::string kubeconfig;
  std::mutex mutex;
  std::map<std::string, std::pair<int, json>> answers;
  std::vector<std::string> requests;
  std::vector<std::string> bodies;
};

constexpr const char* kPodGroups = "GET /apis/scheduling.tessera.dev/v1alpha1/namespaces/ml/podgroups";

TEST_F(CliCommandsTest, ListPrintsTheWorkloadsOfTheContextsNamespace) {
  answer(kPodGroups, 200,
         {{"kind", "PodGroupList"},
          {"items",
           {{{"metadata", {{"name", "big"}, {"namespace", "ml"}, {"creationTimestamp", "2020-01-01T00:00:00Z"}}},
             {"spec", {{"minMember", 2}, {"queue", "team-a"}}},
             {"status",
              {{"phase", "Pending"},
               {"conditions", {{{"type", "Scheduled"}, {"status", "False"}, {"reason", "Unschedulable"},
                                {"message", "fits on no node"}}}}}}}}}});
  answer("GET /api/v1/namespaces/ml/pods", 200, {{"kind", "PodList"}, {"items", json::array()}});
  const Outcome outcome = run({"list", "--kubeconfig", kubeconfig});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.err, "");
  EXPECT_NE(outcome.out.find("big    team-a   Pending   0      0/2"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("Unschedulable: fits on no node"), std::string::npos) << outcome.out;

  const Outcome as_json = run({"list", "--kubeconfig", kubeconfig, "-o", "json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(json::parse(as_json.out)["items"][0]["reason"], "Unschedulable");

  // -n overrides the context's namespace; -A asks across namespaces.
  run({"list", "--kubeconfig", kubeconfig, "-n", "other"});
  run({"list", "--kubeconfig", kubeconfig, "-A"});
  std::lock_guard lock(mutex);
  EXPECT_NE(std::find(requests.begin(), requests.end(),
                      "GET /apis/scheduling.tessera.dev/v1alpha1/namespaces/other/podgroups"),
            requests.end());
  EXPECT_NE(std::find(requests.begin(), requests.end(), "GET /apis/scheduling.tessera.dev/v1alpha1/podgroups"),
            requests.end());
}

TEST_F(CliCommandsTest, AForbiddenListIsTheServersMessageOnOneLine) {
  const std::string message =
      "podgroups.scheduling.tessera.dev is forbidden: User \"system:serviceaccount:ml:viewer\" cannot list resource "
      "\"podgroups\" in API group \"scheduling.tessera.dev\" in the namespace \"ml\"";
  answer(kPodGroups, 403, status(403, "Forbidden", message));
  const Outcome outcome = run({"list", "--kubeconfig", kubeconfig});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.out, "");
  EXPECT_EQ(outcome.err, "Error from server (Forbidden): " + message + "\n");
}

TEST_F(CliCommandsTest, AnUnknownWorkloadIsNamedWithItsNamespace) {
  answer(kPodGroups, 200, {{"kind", "PodGroupList"}, {"items", json::array()}});
  for (const char* command : {"describe", "explain", "delete"}) {
    const Outcome outcome = run({command, "nope", "--kubeconfig", kubeconfig});
    EXPECT_EQ(outcome.exit_code, 1) << command;
    EXPECT_EQ(outcome.err, "error: workload \"nope\" not found in namespace \"ml\"\n") << command;
  }
}

TEST_F(CliCommandsTest, AClusterWithoutTesserasKindsSaysWhatToInstall) {
  // Nothing answered: every path is 404, as on a cluster without the CRDs.
  for (const char* command : {"list", "top"}) {
    const Outcome outcome = std::string(command) == "top" ? run({"top", "queues", "--kubeconfig", kubeconfig})
                                                          : run({"list", "--kubeconfig", kubeconfig});
    EXPECT_EQ(outcome.exit_code, 1) << command;
    EXPECT_EQ(outcome.err.rfind("error: the server does not serve ", 0), 0u) << outcome.err;
    EXPECT_NE(outcome.err.find("scheduling.tessera.dev: Tessera's CRDs are not installed"), std::string::npos)
        << outcome.err;
  }
}

TEST_F(CliCommandsTest, AnUnreachableServerIsOneLine) {
  const std::string unreachable = dir.write("unreachable", R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "http://127.0.0.1:1"}}]
)");
  const Outcome outcome = run({"top", "queues", "--kubeconfig", unreachable});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.err.rfind("error: cannot reach the API server http://127.0.0.1:1: GET ", 0), 0u) << outcome.err;
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
}

TEST_F(CliCommandsTest, AMissingKubeconfigOrContextIsNamed) {
  const Outcome missing = run({"list", "--kubeconfig", (dir.path() / "none").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none"), std::string::npos) << missing.err;
  const Outcome context = run({"list", "--kubeconfig", kubeconfig, "--context", "prod"});
  EXPECT_EQ(context.exit_code, 1);
  EXPECT_NE(context.err.find("prod"), std::string::npos) << context.err;
}

TEST_F(CliCommandsTest, SubmitCreatesTheJobAndSaysSo) {
  answer("POST /apis/batch/v1/namespaces/ml/jobs", 201,
         {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "train"}, {"namespace", "ml"}}}});
  const Outcome outcome = run({"submit", "train", "--kubeconfig", kubeconfig, "--image", "busybox", "--pods", "2",
                               "--gpus", "4", "--queue", "team-a", "--", "sleep", "60"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "job.batch/train created\n");
  std::lock_guard lock(mutex);
  ASSERT_EQ(requests.back(), "POST /apis/batch/v1/namespaces/ml/jobs");
  const json sent = json::parse(bodies.back());
  EXPECT_EQ(sent["spec"]["template"]["spec"]["containers"][0]["command"], json({"sleep", "60"}));
  EXPECT_EQ(sent["spec"]["parallelism"], 2);
}

TEST_F(CliCommandsTest, SubmitFromAFileCreatesEachObjectAndRefusesKindsItDoesNotKnow) {
  answer("POST /apis/scheduling.tessera.dev/v1alpha1/namespaces/ml/podgroups", 201,
         {{"apiVersion", "scheduling.tessera.dev/v1alpha1"}, {"kind", "PodGroup"}, {"metadata", {{"name", "g"}}}});
  answer("POST /api/v1/namespaces/ml/pods", 201, {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}}}});
  const std::string file = dir.write("w.yaml", R"(apiVersion: scheduling.tessera.dev/v1alpha1
kind: PodGroup
metadata: {name: g}
spec: {minMember: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {scheduling.tessera.dev/pod-group: g}}
spec: {schedulerName: tessera, containers: [{name: main, image: busybox}]}
)");
  const Outcome outcome = run({"submit", "-f", file, "--kubeconfig", kubeconfig});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "podgroup.scheduling.tessera.dev/g created\npod/p created\n");

  const std::string secret = dir.write("s.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n");
  const Outcome refused = run({"submit", "-f", secret, "--kubeconfig", kubeconfig});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.err.rfind("error: " + secret + ": document 1: kind Secret (v1) is not one", 0), 0u) << refused.err;
}

TEST_F(CliCommandsTest, ARefusedCreateIsTheServersLine) {
  answer("POST /apis/batch/v1/namespaces/ml/jobs", 409,
         status(409, "AlreadyExists", "jobs.batch \"train\" already exists"));
  const Outcome outcome = run({"submit", "train", "--kubeconfig", kubeconfig, "--image", "busybox"});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.err, "Error from server (AlreadyExists): jobs.batch \"train\" already exists\n");
}

TEST(CliArguments, UsageErrorsAreCaughtBeforeAnyRequest) {
  EXPECT_EQ(run({"list", "-o", "jsonpath"}).exit_code, 2);
  EXPECT_EQ(run({"describe"}).exit_code, 2);
  EXPECT_EQ(run({"top"}).exit_code, 2);
  EXPECT_EQ(run({"top", "pods"}).exit_code, 2);
  EXPECT_EQ(run({"submit", "--image", "busybox"}).exit_code, 2);
  EXPECT_EQ(run({"submit", "x", "--type", "batch", "--image", "busybox"}).exit_code, 2);
  EXPECT_EQ(run({"completion", "fish"}).exit_code, 2);
}

TEST(CliArguments, TheCompletionScriptCoversEveryCommandAndOptionOfTheApp) {
  CLI::App app{"tessera", "tessera"};
  int exit_code = 0;
  add_user_commands(app, exit_code);
  const std::string script = bash_completion_script(app, "tessera");
  // Made from the app: a command added to it shows up without editing the script.
  app.add_subcommand("brand-new", "a command added later")->add_option("--knob", "a knob");
  const std::string grown = bash_completion_script(app, "tessera");
  EXPECT_EQ(script.find("brand-new"), std::string::npos);
  EXPECT_NE(grown.find("brand-new"), std::string::npos);
  EXPECT_NE(grown.find("\"brand-new\") words=\"--help -h --knob\""), std::string::npos) << grown;
  for (const char* expected : {"\"\") words=\"list describe explain top submit delete completion --help -h\"",
                               "\"top\") words=\"queues nodes --help -h\"", "\"top queues\") ;;",
                               "\"list|--output\") COMPREPLY=($(compgen -W \"table wide json yaml\"",
                               "\"list|-o\") COMPREPLY=($(compgen -W \"table wide json yaml\"",
                               "\"submit|--type\") COMPREPLY=($(compgen -W \"train interactive\"",
                               "\"submit|--kubeconfig\") COMPREPLY=($(compgen -f", "--all-namespaces", "--gpu-memory",
                               "complete -F _tessera_complete tessera", "complete -F _tessera_complete kubectl-tessera"}) {
    EXPECT_NE(script.find(expected), std::string::npos) << expected;
  }
  // Flags that take no value offer no value completion.
  EXPECT_EQ(script.find("\"list|-A\")"), std::string::npos);
}

}  // namespace
}  // namespace tessera::cli
