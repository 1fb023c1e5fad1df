// What `tessera submit` creates (docs/cli.md): from flags, a training job — a batch/v1 indexed
// Job of N pods that start together — or an interactive workload — a PodGroup and its N pods,
// not preemptible — with schedulerName tessera and the queue label, GPUs whole (the
// nvidia.com/gpu limit) or as a fraction or an amount of GPU memory (Tessera's pod annotations),
// and a time limit as spec.activeDeadlineSeconds (which the kubelet enforces and the scheduler
// reads for backfill). Pure functions: objects in, objects out; errors name the flag.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"

namespace tessera::cli {

struct SubmitRequest {
  std::string name;
  std::string namespace_name;
  std::string type = "train";  // train | interactive
  std::string image;
  std::vector<std::string> command;  // empty: the image's entrypoint
  int pods = 1;
  std::string gpus;        // "" none, "2" whole GPUs, "0.5" a portion of one
  std::string gpu_memory;  // an amount of one GPU's memory ("20Gi"), instead of --gpus
  std::string cpu;         // requests, as quantities
  std::string memory;
  std::string queue;
  std::string time_limit;  // a duration ("2h", "90m")
  std::vector<std::string> labels;       // "key=value", on the workload and its pods
  std::vector<std::string> annotations;  // "key=value", on the pods
};

// The objects to create, in order (a PodGroup before its pods).
Result<std::vector<nlohmann::json>> submission_objects(const SubmitRequest& request);

// The API path an object is created at (POST), with `default_namespace` where it names none, for
// the kinds submit creates from a file: Pod, Job, PodGroup, Queue, Deployment, StatefulSet,
// JobSet, PyTorchJob, TrainJob, RayCluster, LeaderWorkerSet. Others are an error naming the kind.
Result<std::string> creation_path(const nlohmann::json& object, const std::string& default_namespace);

// kubectl's line for an object made: "job.batch/train created", "pod/nb-0 created".
std::string created_line(const nlohmann::json& object, std::string_view verb = "created");

}  // namespace tessera::cli
