// `tessera list`: the workloads in a namespace (or all, -A), one line each.
#include <cstdio>
#include <memory>

#include "cli/user/cluster_objects.h"
#include "cli/user/object_reads.h"
#include "cli/user/user_commands.h"
#include "cli/user/workload_view.h"

namespace tessera::cli {

namespace {

int run_list(const ClusterFlags& flags) {
  Result<Cluster> cluster = connect(flags);
  if (!cluster) return report_failure(cluster.error());
  Result<WorkloadObjects> objects = fetch_workload_objects(*cluster);
  if (!objects) return report_failure(objects.error());
  const std::vector<WorkloadSummary> workloads = summarize_workloads(
      objects->pod_groups, objects->pods, pod_groups_of_pods(objects->pods, objects->owners));
  const std::string empty = cluster->all_namespaces
                                ? std::string("No workloads found.")
                                : "No workloads found in namespace " + cluster->namespace_name + ".";
  const double now = unix_now();
  std::fputs(render(cluster->output, workload_table(workloads, cluster->all_namespaces, now), workload_json(workloads),
                    empty)
                 .c_str(),
             stdout);
  return 0;
}

}  // namespace

void add_list_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ClusterFlags>();
  CLI::App* command = app.add_subcommand(
      "list", "List workloads (PodGroups, those Tessera writes for Jobs and the like included): queue, state, GPUs, "
              "pods bound of the minimum, age, and why each waits");
  add_cluster_flags(*command, *flags, true, true);
  command->callback([flags, &exit_code] { exit_code = run_list(*flags); });
}

}  // namespace tessera::cli
