// The GPU-memory admission webhook's answer, as the API server applies it: AdmissionReview in,
// AdmissionReview out, the base64 JSONPatch decoded and applied to the pod.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "admission/admission_review.h"
#include "wire/base64.h"

namespace tessera::admission {
namespace {

using nlohmann::json;

json gpu_memory_pod() {
  return json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "server", "namespace": "ml",
                 "annotations": {"scheduling.tessera.dev/gpu-memory": "20Gi",
                                 "scheduling.tessera.dev/gpu-memory-limit": "40Gi"}},
    "spec": {"schedulerName": "tessera",
             "containers": [{"name": "server", "image": "vllm",
                             "env": [{"name": "MODEL", "value": "llama"}]},
                            {"name": "sidecar", "image": "proxy"}]}})");
}

json review_of(const json& pod, const std::string& operation = "CREATE") {
  return json{{"apiVersion", "admission.k8s.io/v1"},
              {"kind", "AdmissionReview"},
              {"request",
               {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
                {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                {"operation", operation},
                {"namespace", "ml"},
                {"object", pod}}}};
}

json response_to(const json& review) {
  auto answer = review_gpu_memory(review, GpuMemoryLayout{});
  EXPECT_TRUE(answer.ok()) << (answer.ok() ? "" : answer.error().message);
  EXPECT_EQ(answer->at("apiVersion"), "admission.k8s.io/v1");
  EXPECT_EQ(answer->at("kind"), "AdmissionReview");
  const json& response = answer->at("response");
  EXPECT_EQ(response.at("uid"), review["request"]["uid"]);
  EXPECT_EQ(response.at("allowed"), true);
  return response;
}

// The pod after the API server applies the response's patch.
json admitted(const json& pod) {
  const json response = response_to(review_of(pod));
  if (!response.contains("patch")) return pod;
  EXPECT_EQ(response.at("patchType"), "JSONPatch");
  const auto patch = wire::decode_base64(response.at("patch").get<std::string>());
  EXPECT_TRUE(patch.has_value());
  return pod.patch(json::parse(*patch));
}

const json* find_named(const json& list, const std::string& name) {
  for (const json& item : list) {
    if (item.at("name") == name) return &item;
  }
  return nullptr;
}

TEST(GpuMemoryWebhook, EveryContainerOfAGpuMemoryPodGetsThePreloadItsVariablesAndBothFolders) {
  const json pod = admitted(gpu_memory_pod());
  for (const json& container : pod["spec"]["containers"]) {
    const json& env = container.at("env");
    ASSERT_NE(find_named(env, "LD_PRELOAD"), nullptr) << container.dump();
    EXPECT_EQ(find_named(env, "LD_PRELOAD")->at("value"), "/var/lib/tessera-gpumem/lib/libtessera-gpumem.so");
    EXPECT_EQ(find_named(env, "TESSERA_GPUMEM_LEDGER")->at("value"), "/var/run/tessera-gpumem/ledger");
    EXPECT_EQ(find_named(env, "TESSERA_POD_UID")->at("valueFrom")["fieldRef"]["fieldPath"], "metadata.uid");
    EXPECT_EQ(find_named(env, "TESSERA_POD_NAME")->at("valueFrom")["fieldRef"]["fieldPath"], "metadata.name");
    EXPECT_EQ(find_named(env, "TESSERA_GPU_MEMORY_LIMIT")->at("valueFrom")["fieldRef"]["fieldPath"],
              "metadata.annotations['scheduling.tessera.dev/gpu-memory-limit-bytes']");
    EXPECT_EQ(find_named(env, "TESSERA_GPU_MEMORY_REQUEST")->at("valueFrom")["fieldRef"]["fieldPath"],
              "metadata.annotations['scheduling.tessera.dev/gpu-memory-request-bytes']");
    EXPECT_EQ(find_named(env, "TESSERA_GPU_MEMORY_RESOLVER")->at("valueFrom")["fieldRef"]["fieldPath"],
              "metadata.annotations['scheduling.tessera.dev/gpu-memory-resolver']");
    EXPECT_EQ(find_named(env, "NVIDIA_VISIBLE_DEVICES")->at("valueFrom")["fieldRef"]["fieldPath"],
              "metadata.annotations['scheduling.tessera.dev/gpu-index']");
    EXPECT_EQ(find_named(env, "TESSERA_GPU_MEMORY_SWAP_SLICE_MS")->at("valueFrom")["fieldRef"]["fieldPath"],
              "metadata.annotations['scheduling.tessera.dev/gpu-memory-swap-slice-ms']");
    const json& mounts = container.at("volumeMounts");
    ASSERT_NE(find_named(mounts, "tessera-gpumem-lib"), nullptr);
    EXPECT_EQ(find_named(mounts, "tessera-gpumem-lib")->at("mountPath"), "/var/lib/tessera-gpumem/lib");
    EXPECT_EQ(find_named(mounts, "tessera-gpumem-lib")->at("readOnly"), true);
    ASSERT_NE(find_named(mounts, "tessera-gpumem-ledger"), nullptr);
    EXPECT_EQ(find_named(mounts, "tessera-gpumem-ledger")->at("mountPath"), "/var/run/tessera-gpumem");
    EXPECT_FALSE(find_named(mounts, "tessera-gpumem-ledger")->contains("readOnly"));
  }
  EXPECT_EQ(find_named(pod["spec"]["containers"][0]["env"], "MODEL")->at("value"), "llama");
  const json& volumes = pod["spec"]["volumes"];
  ASSERT_EQ(volumes.size(), 2u);
  EXPECT_EQ(find_named(volumes, "tessera-gpumem-lib")->at("hostPath")["path"], "/var/lib/tessera-gpumem/lib");
  EXPECT_EQ(find_named(volumes, "tessera-gpumem-ledger")->at("hostPath")["path"], "/var/run/tessera-gpumem");
}

TEST(GpuMemoryWebhook, InitContainersGetTheSameInjectionAsContainers) {
  json pod = gpu_memory_pod();
  pod["spec"]["initContainers"] = json::parse(R"([
      {"name": "warm-up", "image": "vllm", "env": [{"name": "LD_PRELOAD", "value": "/opt/libjemalloc.so"}]},
      {"name": "fetch", "image": "fetcher", "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}])");
  pod["spec"]["volumes"] = json::parse(R"([{"name": "cache", "emptyDir": {}}])");
  const json after = admitted(pod);
  const json& init = after["spec"]["initContainers"];
  ASSERT_EQ(init.size(), 2u);
  EXPECT_EQ(find_named(init[0]["env"], "LD_PRELOAD")->at("value"),
            "/var/lib/tessera-gpumem/lib/libtessera-gpumem.so:/opt/libjemalloc.so");
  for (const json& container : init) {
    for (const char* variable : {"TESSERA_GPUMEM_LEDGER", "TESSERA_POD_UID", "TESSERA_GPU_MEMORY_LIMIT",
                                 "TESSERA_GPU_MEMORY_REQUEST", "NVIDIA_VISIBLE_DEVICES"}) {
      EXPECT_NE(find_named(container["env"], variable), nullptr) << container["name"] << " " << variable;
    }
    EXPECT_NE(find_named(container["env"], "LD_PRELOAD"), nullptr) << container.dump();
    EXPECT_NE(find_named(container["volumeMounts"], "tessera-gpumem-lib"), nullptr) << container.dump();
    EXPECT_NE(find_named(container["volumeMounts"], "tessera-gpumem-ledger"), nullptr) << container.dump();
  }
  EXPECT_NE(find_named(init[1]["volumeMounts"], "cache"), nullptr);
  EXPECT_NE(find_named(after["spec"]["containers"][0]["env"], "LD_PRELOAD"), nullptr);
  EXPECT_EQ(after["spec"]["volumes"].size(), 3u);  // the pod's own and the two folders, once each
  EXPECT_EQ(admitted(after), after);
}

TEST(GpuMemoryWebhook, APodAlreadyInjectedIsLeftAlone) {
  const json once = admitted(gpu_memory_pod());
  const json response = response_to(review_of(once));
  EXPECT_FALSE(response.contains("patch"));
  EXPECT_FALSE(response.contains("patchType"));
  EXPECT_EQ(admitted(once), once);
}

TEST(GpuMemoryWebhook, AContainerAddedAfterTheInjectionGetsItAloneOnReinvocation) {
  json pod = admitted(gpu_memory_pod());
  pod["spec"]["containers"].push_back(json{{"name", "added"}, {"image", "mesh-proxy"}});
  const json response = response_to(review_of(pod));
  ASSERT_TRUE(response.contains("patch"));
  const json patch = json::parse(*wire::decode_base64(response.at("patch").get<std::string>()));
  for (const json& operation : patch) {
    EXPECT_EQ(operation.at("path").get<std::string>().rfind("/spec/containers/2/", 0), 0u) << operation.dump();
  }
  const json after = pod.patch(patch);
  EXPECT_NE(find_named(after["spec"]["containers"][2]["env"], "LD_PRELOAD"), nullptr);
  EXPECT_EQ(after["spec"]["volumes"].size(), 2u);
  EXPECT_EQ(admitted(after), after);
}

TEST(GpuMemoryWebhook, PodsOfOtherSchedulersOrWithoutGpuMemoryAreNeverTouched) {
  json other_scheduler = gpu_memory_pod();
  other_scheduler["spec"]["schedulerName"] = "default-scheduler";
  json no_scheduler = gpu_memory_pod();
  no_scheduler["spec"].erase("schedulerName");
  json whole_gpus = gpu_memory_pod();
  whole_gpus["metadata"]["annotations"] = json{{"scheduling.tessera.dev/gpu-fraction", "0.5"}};
  json no_annotations = gpu_memory_pod();
  no_annotations["metadata"].erase("annotations");
  for (const json& pod : {other_scheduler, no_scheduler, whole_gpus, no_annotations}) {
    const json response = response_to(review_of(pod));
    EXPECT_FALSE(response.contains("patch")) << pod.dump();
  }
}

TEST(GpuMemoryWebhook, OnlyPodCreationIsPatched) {
  EXPECT_FALSE(response_to(review_of(gpu_memory_pod(), "UPDATE")).contains("patch"));
  json deployment = review_of(gpu_memory_pod());
  deployment["request"]["kind"] = json{{"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}};
  EXPECT_FALSE(response_to(deployment).contains("patch"));
}

TEST(GpuMemoryWebhook, ThePodsOwnVariablesAndMountsWinAndItsPreloadFollowsTheInterposer) {
  json pod = gpu_memory_pod();
  pod["spec"]["containers"][0]["env"] = json::parse(R"([
      {"name": "LD_PRELOAD", "value": "/opt/libjemalloc.so"},
      {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}])");
  pod["spec"]["containers"][0]["volumeMounts"] =
      json::parse(R"([{"name": "run", "mountPath": "/var/run/tessera-gpumem"}])");
  pod["spec"]["volumes"] = json::parse(R"([{"name": "run", "emptyDir": {}}])");
  const auto answer = review_gpu_memory(review_of(pod), GpuMemoryLayout{});
  ASSERT_TRUE(answer.ok());
  ASSERT_TRUE(answer->at("response").contains("warnings"));
  EXPECT_NE(answer->at("response")["warnings"][0].get<std::string>().find("/var/run/tessera-gpumem"),
            std::string::npos);
  const json after = admitted(pod);
  const json& env = after["spec"]["containers"][0]["env"];
  EXPECT_EQ(find_named(env, "LD_PRELOAD")->at("value"),
            "/var/lib/tessera-gpumem/lib/libtessera-gpumem.so:/opt/libjemalloc.so");
  EXPECT_EQ(find_named(env, "NVIDIA_VISIBLE_DEVICES")->at("value"), "all");
  const json& mounts = after["spec"]["containers"][0]["volumeMounts"];
  EXPECT_EQ(mounts.size(), 2u);  // the pod's own folder and the library; no second mount at the same path
  EXPECT_EQ(find_named(mounts, "tessera-gpumem-ledger"), nullptr);
  EXPECT_EQ(after["spec"]["volumes"].size(), 3u);
}

TEST(GpuMemoryWebhook, TheLayoutDecidesThePaths) {
  GpuMemoryLayout layout;
  layout.library_dir = "/opt/tessera/lib";
  layout.ledger_dir = "/run/tessera";
  const Injection injection = gpu_memory_injection(gpu_memory_pod(), layout);
  const json pod = gpu_memory_pod().patch(injection.patch);
  EXPECT_EQ(find_named(pod["spec"]["containers"][1]["env"], "LD_PRELOAD")->at("value"),
            "/opt/tessera/lib/libtessera-gpumem.so");
  EXPECT_EQ(find_named(pod["spec"]["containers"][1]["env"], "TESSERA_GPUMEM_LEDGER")->at("value"),
            "/run/tessera/ledger");
  EXPECT_EQ(find_named(pod["spec"]["volumes"], "tessera-gpumem-ledger")->at("hostPath")["path"], "/run/tessera");
}

TEST(GpuMemoryWebhook, AReviewThatIsNotOneIsAnErrorNamingTheField) {
  const auto wrong_kind = review_gpu_memory(
      json{{"apiVersion", "admission.k8s.io/v1beta1"}, {"kind", "AdmissionReview"}}, GpuMemoryLayout{});
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_NE(wrong_kind.error().message.find("admission.k8s.io/v1beta1"), std::string::npos);
  json no_uid = review_of(gpu_memory_pod());
  no_uid["request"].erase("uid");
  const auto missing = review_gpu_memory(no_uid, GpuMemoryLayout{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("request.uid"), std::string::npos);
  json no_object = review_of(gpu_memory_pod());
  no_object["request"].erase("object");
  const auto without = review_gpu_memory(no_object, GpuMemoryLayout{});
  ASSERT_FALSE(without.ok());
  EXPECT_NE(without.error().message.find("request.object"), std::string::npos);
}

}  // namespace
}  // namespace tessera::admission
