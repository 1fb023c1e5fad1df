// `tessera submit`: a training job or an interactive workload from flags, or the objects of a
// YAML file; prints what it created.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "apiserver/yaml_json.h"
#include "cli/user/cluster_access.h"
#include "cli/user/submission.h"
#include "cli/user/user_commands.h"
#include "kube/file_text.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

struct SubmitFlags {
  ClusterFlags cluster;
  SubmitRequest request;
  std::string file;
  bool dry_run = false;
};

Result<std::vector<json>> objects_from_file(const std::string& path) {
  Result<std::string> text = kube::read_file_text(path);
  if (!text) return text.error();
  Result<std::vector<json>> documents = apiserver::yaml_documents_to_json(*text);
  if (!documents) return Error{fmt::format("{}: {}", path, documents.error().message)};
  if (documents->empty()) return Error{fmt::format("{}: no object in it", path)};
  for (size_t i = 0; i < documents->size(); ++i) {
    if (!(*documents)[i].is_object()) return Error{fmt::format("{}: document {}: not an object", path, i + 1)};
  }
  return documents;
}

int run_submit(SubmitFlags flags) {
  Result<Cluster> cluster = connect(flags.cluster);
  if (!cluster) return report_failure(cluster.error());
  flags.request.namespace_name = cluster->namespace_name;
  Result<std::vector<json>> objects =
      flags.file.empty() ? submission_objects(flags.request) : objects_from_file(flags.file);
  if (!objects) return report_failure(objects.error());
  std::vector<std::string> paths;
  for (size_t i = 0; i < objects->size(); ++i) {
    Result<std::string> path = creation_path((*objects)[i], cluster->namespace_name);
    if (!path) {
      return report_failure(flags.file.empty() ? path.error()
                                               : Error{fmt::format("{}: document {}: {}", flags.file, i + 1,
                                                                   path.error().message)});
    }
    paths.push_back(std::move(*path));
  }
  json made = json::array();
  std::string lines;
  for (size_t i = 0; i < objects->size(); ++i) {
    if (flags.dry_run) {
      made.push_back((*objects)[i]);
      lines += created_line((*objects)[i], "created (dry run)") + "\n";
      continue;
    }
    Result<json> created = cluster->create(paths[i], (*objects)[i]);
    if (!created) {
      std::fputs(lines.c_str(), stdout);  // what was made before the failure
      return report_failure(created.error());
    }
    lines += created_line(*created) + "\n";
    made.push_back(std::move(*created));
  }
  const std::optional<std::string> data = render_data(cluster->output, {{"kind", "List"}, {"items", made}});
  std::fputs(data ? data->c_str() : lines.c_str(), stdout);
  return 0;
}

}  // namespace

void add_submit_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SubmitFlags>();
  SubmitRequest& request = flags->request;
  CLI::App* command = app.add_subcommand(
      "submit",
      "Submit a training job (an indexed batch/v1 Job of --pods pods that start together) or an interactive workload "
      "(--type interactive: a PodGroup and its pods, not preemptible) scheduled by Tessera, or create the objects of "
      "a YAML file (-f); prints what it created. The container command follows `--`.");
  command->add_option("name", request.name, "The workload's name (the Job's, or the PodGroup's)");
  command->add_option("command", request.command, "The container's command and arguments, after --");
  command->add_option("-f,--filename", flags->file, "Create the objects of this YAML file instead (one or more documents)");
  command->add_option("--type", request.type, "train or interactive")
      ->check(CLI::IsMember({"train", "interactive"}))
      ->capture_default_str();
  command->add_option("--image", request.image, "The container image");
  command->add_option("--pods", request.pods, "Pods, started together")->capture_default_str();
  command->add_option("--gpus", request.gpus, "GPUs per pod: a whole number, or a fraction of one GPU (0.5)");
  command->add_option("--gpu-memory", request.gpu_memory, "Instead of --gpus: an amount of one GPU's memory (20Gi)");
  command->add_option("--cpu", request.cpu, "CPU request per pod (4, 500m)");
  command->add_option("--memory", request.memory, "Memory request per pod (16Gi)");
  command->add_option("--queue", request.queue, "The leaf queue (the scheduling.tessera.dev/queue label)");
  command->add_option("--time-limit", request.time_limit,
                      "Ends each pod this long after it starts (spec.activeDeadlineSeconds): 90m, 2h");
  command->add_option("--label", request.labels, "KEY=VALUE on the workload and its pods (repeatable)");
  command->add_option("--annotation", request.annotations, "KEY=VALUE on the pods (repeatable)");
  command->add_flag("--dry-run", flags->dry_run, "Print what would be created, create nothing");
  add_cluster_flags(*command, flags->cluster, false, true);
  command->callback([flags, &exit_code] {
    if (flags->file.empty() && (flags->request.name.empty() || flags->request.image.empty())) {
      std::fputs("error: give a NAME and --image, or -f FILE\n", stderr);
      exit_code = 2;
      return;
    }
    if (!flags->file.empty() && !flags->request.name.empty()) {
      std::fputs("error: -f FILE creates the file's objects: give no NAME with it\n", stderr);
      exit_code = 2;
      return;
    }
    exit_code = run_submit(*flags);
  });
}

}  // namespace tessera::cli
