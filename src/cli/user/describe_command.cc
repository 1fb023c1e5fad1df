// `tessera describe WORKLOAD` (also `tessera explain`): one workload's whole story.
#include <cstdio>
#include <memory>

#include "cli/user/cluster_objects.h"
#include "cli/user/object_reads.h"
#include "cli/user/user_commands.h"
#include "cli/user/workload_story.h"
#include "cli/user/workload_view.h"

namespace tessera::cli {

namespace {

struct DescribeFlags {
  ClusterFlags cluster;
  std::string workload;
};

int run_describe(const DescribeFlags& flags) {
  Result<Cluster> cluster = connect(flags.cluster);
  if (!cluster) return report_failure(cluster.error());
  Result<nlohmann::json> group = find_workload(*cluster, cluster->namespace_name, flags.workload);
  if (!group) return report_failure(group.error());
  Result<WorkloadObjects> objects = fetch_workload_objects(*cluster);
  if (!objects) return report_failure(objects.error());
  Result<nlohmann::json> queues = list_tessera_kind(*cluster, std::string(kTesseraGroupVersion) + "/queues", "queues");
  if (!queues) return report_failure(queues.error());
  // Events add to the story; a user who may not read them still gets the rest.
  Result<nlohmann::json> events = cluster->get_if_present(namespaced_path("/api/v1", cluster->namespace_name, "events"));
  const nlohmann::json story =
      workload_story(*group, objects->pods, pod_groups_of_pods(objects->pods, objects->owners), *queues,
                     events ? *events : nlohmann::json::object());
  const std::optional<std::string> data = render_data(cluster->output, story);
  std::fputs(data ? data->c_str() : describe_text(story, unix_now()).c_str(), stdout);
  return 0;
}

}  // namespace

void add_describe_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<DescribeFlags>();
  CLI::App* command = app.add_subcommand(
      "describe", "One workload's whole story: its PodGroup's spec and status and why it waits, its pods and their "
                  "nodes, its queue's GPU quota figures, and recent events of it, its owner and its pods");
  command->alias("explain");
  command->add_option("workload", flags->workload,
                      "The PodGroup's name, or the name of the Job (JobSet...) Tessera wrote a PodGroup for")
      ->required();
  add_cluster_flags(*command, flags->cluster, false, true);
  command->callback([flags, &exit_code] { exit_code = run_describe(*flags); });
}

}  // namespace tessera::cli
