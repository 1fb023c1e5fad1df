// `tessera delete WORKLOAD`: the object the user created (the Job, JobSet...) when Tessera wrote
// the PodGroup for it, then the PodGroup and its pods, so that nothing of it is left behind
// whether or not the cluster runs a garbage collector.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli/user/cluster_objects.h"
#include "cli/user/object_reads.h"
#include "cli/user/submission.h"
#include "cli/user/user_commands.h"
#include "cli/user/workload_view.h"

namespace tessera::cli {

namespace {

using nlohmann::json;

struct DeleteFlags {
  ClusterFlags cluster;
  std::string workload;
};

// What to delete, in order: the owner, the PodGroup, its pods; as objects that name their kind.
std::vector<json> doomed_objects(const json& group, const WorkloadObjects& objects) {
  std::vector<json> doomed;
  const std::string space = text_at(group, "/metadata/namespace");
  const json owners = group.value("/metadata/ownerReferences"_json_pointer, json::array());
  if (owners.is_array() && !owners.empty() && owners[0].is_object()) {
    doomed.push_back({{"apiVersion", owners[0].value("apiVersion", "")},
                      {"kind", owners[0].value("kind", "")},
                      {"metadata", {{"name", owners[0].value("name", "")}, {"namespace", space}}}});
  }
  // Items of a List need not say their kind.
  doomed.push_back({{"apiVersion", "scheduling.tessera.dev/v1alpha1"}, {"kind", "PodGroup"}, {"metadata", group["metadata"]}});
  const std::map<std::string, std::string> groups = pod_groups_of_pods(objects.pods, objects.owners);
  for (const json& pod : list_items(objects.pods)) {
    auto member = groups.find(object_key(pod));
    if (member != groups.end() && member->second == object_key(group)) {
      doomed.push_back({{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", pod["metadata"]}});
    }
  }
  return doomed;
}

int run_delete(const DeleteFlags& flags) {
  Result<Cluster> cluster = connect(flags.cluster);
  if (!cluster) return report_failure(cluster.error());
  Result<json> group = find_workload(*cluster, cluster->namespace_name, flags.workload);
  if (!group) return report_failure(group.error());
  Result<WorkloadObjects> objects = fetch_workload_objects(*cluster);
  if (!objects) return report_failure(objects.error());
  for (const json& object : doomed_objects(*group, *objects)) {
    Result<std::string> path = creation_path(object, cluster->namespace_name);
    if (!path) return report_failure(path.error());
    Result<json> deleted = cluster->remove(*path + "/" + text_at(object, "/metadata/name"));
    if (!deleted) return report_failure(deleted.error());
    // Gone already (the garbage collector was quicker): nothing to say.
    if (!deleted->is_null()) std::fputs((created_line(object, "deleted") + "\n").c_str(), stdout);
  }
  return 0;
}

}  // namespace

void add_delete_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<DeleteFlags>();
  CLI::App* command = app.add_subcommand(
      "delete", "Delete a workload: the Job (JobSet...) it stands for, its PodGroup and its pods");
  command->add_option("workload", flags->workload,
                      "The PodGroup's name, or the name of the Job (JobSet...) Tessera wrote a PodGroup for")
      ->required();
  add_cluster_flags(*command, flags->cluster, false, false);
  command->callback([flags, &exit_code] { exit_code = run_delete(*flags); });
}

}  // namespace tessera::cli
