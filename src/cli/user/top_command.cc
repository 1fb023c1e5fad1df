// `tessera top queues` and `tessera top nodes`: where the GPUs go, by queue and by node.
#include <cstdio>
#include <memory>

#include "cli/user/cluster_objects.h"
#include "cli/user/node_fragmentation.h"
#include "cli/user/node_view.h"
#include "cli/user/queue_view.h"
#include "cli/user/user_commands.h"

namespace tessera::cli {

namespace {

int run_top_queues(const ClusterFlags& flags) {
  Result<Cluster> cluster = connect(flags);
  if (!cluster) return report_failure(cluster.error());
  Result<nlohmann::json> queues = list_tessera_kind(*cluster, std::string(kTesseraGroupVersion) + "/queues", "queues");
  if (!queues) return report_failure(queues.error());
  const std::vector<QueueFigures> tree = queue_tree(*queues);
  std::fputs(render(cluster->output, queue_table(tree), queue_json(tree), "No queues found.").c_str(), stdout);
  return 0;
}

int run_top_nodes(ClusterFlags flags) {
  flags.all_namespaces = true;  // a node's GPUs are held by pods of any namespace
  Result<Cluster> cluster = connect(flags);
  if (!cluster) return report_failure(cluster.error());
  Result<nlohmann::json> nodes = cluster->get("/api/v1/nodes");
  if (!nodes) return report_failure(nodes.error());
  Result<WorkloadObjects> objects = fetch_workload_objects(*cluster);
  if (!objects) return report_failure(objects.error());
  std::vector<NodeGpus> gpus = node_gpus(*nodes, objects->pods, pod_queues(*objects));
  add_fragmentation(gpus, *nodes, objects->pods, gpu_pod_mix(*nodes, objects->pods));
  if (const std::optional<std::string> data = render_data(cluster->output, node_json(gpus))) {
    std::fputs(data->c_str(), stdout);
    return 0;
  }
  std::fputs(render_table(node_table(gpus), cluster->output == OutputFormat::kWide, "No nodes found.").c_str(), stdout);
  if (!gpus.empty()) std::fputs(cluster_line(cluster_gpus(gpus)).c_str(), stdout);
  return 0;
}

}  // namespace

void add_top_command(CLI::App& app, int& exit_code) {
  CLI::App* top = app.add_subcommand("top", "Where the GPUs go: by queue or by node");
  top->require_subcommand(1);
  auto queue_flags = std::make_shared<ClusterFlags>();
  CLI::App* queues = top->add_subcommand(
      "queues", "The queue tree with each queue's GPUs: deserved, fair share, allocated, borrowed (allocated beyond "
                "deserved), and what its waiting pods ask for");
  add_cluster_flags(*queues, *queue_flags, false, true);
  queues->callback([queue_flags, &exit_code] { exit_code = run_top_queues(*queue_flags); });

  auto node_flags = std::make_shared<ClusterFlags>();
  CLI::App* nodes = top->add_subcommand(
      "nodes",
      "Each node's GPUs: model, used of total, a map of its devices ('#' in use, '.' free, '1'-'9' tenths "
      "of a shared one in use), whole devices free, fragmented GPUs (free capacity the cluster's GPU pod types "
      "cannot use, FGD's measure) and the queues holding them; then the cluster's totals");
  add_cluster_flags(*nodes, *node_flags, false, true);
  nodes->callback([node_flags, &exit_code] { exit_code = run_top_nodes(*node_flags); });
}

}  // namespace tessera::cli
