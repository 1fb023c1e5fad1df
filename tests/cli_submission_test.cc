// What `tessera submit` makes from its flags, and where each kind of object is created.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/user/submission.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

SubmitRequest training() {
  SubmitRequest request;
  request.name = "train";
  request.namespace_name = "ml";
  request.image = "pytorch:2";
  request.command = {"torchrun", "train.py"};
  request.pods = 4;
  request.gpus = "8";
  request.queue = "team-a";
  request.time_limit = "2h";
  request.cpu = "16";
  request.memory = "64Gi";
  return request;
}

TEST(CliSubmit, ATrainingJobIsAnIndexedJobOfItsPodsForTessera) {
  Result<std::vector<json>> objects = submission_objects(training());
  ASSERT_TRUE(objects) << objects.error().message;
  ASSERT_EQ(objects->size(), 1u);
  const json& job = objects->front();
  EXPECT_EQ(job["apiVersion"], "batch/v1");
  EXPECT_EQ(job["kind"], "Job");
  EXPECT_EQ(job["metadata"]["namespace"], "ml");
  EXPECT_EQ(job["metadata"]["labels"]["scheduling.tessera.dev/queue"], "team-a");
  EXPECT_EQ(job["spec"]["parallelism"], 4);
  EXPECT_EQ(job["spec"]["completions"], 4);
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  const json& pod = job["spec"]["template"];
  EXPECT_EQ(pod["metadata"]["labels"]["scheduling.tessera.dev/queue"], "team-a");
  EXPECT_EQ(pod["spec"]["schedulerName"], "tessera");
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(pod["spec"]["activeDeadlineSeconds"], 7200);
  const json& container = pod["spec"]["containers"][0];
  EXPECT_EQ(container["image"], "pytorch:2");
  EXPECT_EQ(container["command"], json({"torchrun", "train.py"}));
  EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(container["resources"]["requests"]["memory"], "64Gi");
  EXPECT_EQ(created_line(job), "job.batch/train created");
}

TEST(CliSubmit, FractionsAndGpuMemoryGoThroughTesserasAnnotations) {
  SubmitRequest request = training();
  request.gpus = "0.5";
  Result<std::vector<json>> half = submission_objects(request);
  ASSERT_TRUE(half) << half.error().message;
  const json& pod = (*half)[0]["spec"]["template"];
  EXPECT_EQ(pod["metadata"]["annotations"]["scheduling.tessera.dev/gpu-fraction"], "0.5");
  EXPECT_FALSE(pod["spec"]["containers"][0].contains("resources") &&
               pod["spec"]["containers"][0]["resources"].contains("limits"));

  request.gpus = "";
  request.gpu_memory = "20Gi";
  Result<std::vector<json>> memory = submission_objects(request);
  ASSERT_TRUE(memory) << memory.error().message;
  EXPECT_EQ((*memory)[0]["spec"]["template"]["metadata"]["annotations"]["scheduling.tessera.dev/gpu-memory"], "20Gi");
}

TEST(CliSubmit, AnInteractiveWorkloadIsAPodGroupOfItsPodsNotPreemptible) {
  SubmitRequest request = training();
  request.type = "interactive";
  request.name = "nb";
  request.pods = 2;
  request.gpus = "0.25";
  request.annotations = {"scheduling.tessera.dev/duration=1h"};
  Result<std::vector<json>> objects = submission_objects(request);
  ASSERT_TRUE(objects) << objects.error().message;
  ASSERT_EQ(objects->size(), 3u);
  const json& group = (*objects)[0];
  EXPECT_EQ(group["kind"], "PodGroup");
  EXPECT_EQ(group["spec"], json({{"minMember", 2}, {"workloadType", "interactive"}, {"queue", "team-a"}}));
  EXPECT_EQ(created_line(group), "podgroup.scheduling.tessera.dev/nb created");
  for (int i = 0; i < 2; ++i) {
    const json& pod = (*objects)[static_cast<size_t>(i) + 1];
    EXPECT_EQ(pod["metadata"]["name"], "nb-" + std::to_string(i));
    EXPECT_EQ(pod["metadata"]["labels"]["scheduling.tessera.dev/pod-group"], "nb");
    EXPECT_EQ(pod["metadata"]["annotations"]["scheduling.tessera.dev/workload-type"], "interactive");
    EXPECT_EQ(pod["metadata"]["annotations"]["scheduling.tessera.dev/duration"], "1h");
    EXPECT_EQ(pod["spec"]["schedulerName"], "tessera");
    EXPECT_EQ(created_line(pod), "pod/nb-" + std::to_string(i) + " created");
  }
}

TEST(CliSubmit, BadFlagsAreRefusedNamingTheFlag) {
  const auto error_of = [](SubmitRequest request) {
    Result<std::vector<json>> objects = submission_objects(request);
    return objects ? std::string("accepted") : objects.error().message;
  };
  SubmitRequest request = training();
  request.gpus = "1.5";
  EXPECT_EQ(error_of(request).rfind("--gpus 1.5: expected a whole number of GPUs", 0), 0u) << error_of(request);
  request.gpus = "1";
  request.gpu_memory = "10Gi";
  EXPECT_EQ(error_of(request).rfind("--gpus and --gpu-memory: give one", 0), 0u) << error_of(request);
  request = training();
  request.time_limit = "soon";
  EXPECT_EQ(error_of(request).rfind("--time-limit soon:", 0), 0u) << error_of(request);
  request = training();
  request.pods = 0;
  EXPECT_EQ(error_of(request), "--pods 0: expected at least 1");
  request = training();
  request.name = "Train_1";
  EXPECT_EQ(error_of(request).rfind("name \"Train_1\": expected lower-case", 0), 0u) << error_of(request);
  request = training();
  request.labels = {"team"};
  EXPECT_EQ(error_of(request), "--label team: expected KEY=VALUE");
  request = training();
  request.memory = "lots";
  EXPECT_EQ(error_of(request), "--memory lots: expected a quantity");
}

TEST(CliSubmit, FileObjectsGoWhereTheirKindIsServed) {
  const auto path = [](const json& object) {
    Result<std::string> created = creation_path(object, "ml");
    return created ? *created : "error: " + created.error().message;
  };
  EXPECT_EQ(path({{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "a"}}}}),
            "/apis/batch/v1/namespaces/ml/jobs");
  EXPECT_EQ(path({{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "a"}, {"namespace", "team-b"}}}}),
            "/api/v1/namespaces/team-b/pods");
  EXPECT_EQ(path({{"apiVersion", "scheduling.tessera.dev/v1alpha1"}, {"kind", "Queue"}, {"metadata", {{"name", "q"}}}}),
            "/apis/scheduling.tessera.dev/v1alpha1/queues");
  EXPECT_EQ(path({{"apiVersion", "ray.io/v1"}, {"kind", "RayCluster"}, {"metadata", {{"name", "tune"}}}}),
            "/apis/ray.io/v1/namespaces/ml/rayclusters");
  EXPECT_EQ(path({{"apiVersion", "v1"}, {"kind", "Secret"}}).rfind("error: kind Secret (v1) is not one tessera submit "
                                                                   "creates: Pod (v1), Job (batch/v1)",
                                                                   0),
            0u);
}

}  // namespace
}  // namespace tessera::cli
