// `tessera dev gpu-metrics`: utilisation profiles as pods declare them, and the dcgm-exporter
// series served for them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/user/gpu_metrics.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

TEST(GpuMetrics, ProfilesAsPodsDeclareThem) {
  auto idle = parse_utilisation_annotation("idle_after 2m");
  ASSERT_TRUE(idle.ok()) << idle.error().message;
  EXPECT_EQ(idle->shape, UtilisationShape::kIdleAfter);
  EXPECT_EQ(idle->after_seconds, 120);
  auto bursty = parse_utilisation_annotation("bursty 15m/1h");
  ASSERT_TRUE(bursty.ok()) << bursty.error().message;
  EXPECT_EQ(bursty->burst_seconds, 900);
  EXPECT_EQ(bursty->period_seconds, 3600);
  EXPECT_EQ(parse_utilisation_annotation("busy")->shape, UtilisationShape::kBusy);
  EXPECT_EQ(parse_utilisation_annotation("warmup 20m")->after_seconds, 1200);
  EXPECT_NE(parse_utilisation_annotation("sleepy").error().message.find("'sleepy' is not a utilisation profile"),
            std::string::npos);
  EXPECT_FALSE(parse_utilisation_annotation("idle_after soon").ok());
  EXPECT_FALSE(parse_utilisation_annotation("bursty 2h/1h").ok());
  EXPECT_FALSE(parse_utilisation_annotation("busy 5m").ok());
}

json running_pod(const std::string& name, const std::string& profile, const std::string& devices) {
  return {{"metadata",
           {{"namespace", "ml"},
            {"name", name},
            {"annotations",
             {{"scheduling.tessera.dev/gpu-utilisation", profile}, {"scheduling.tessera.dev/gpu-index", devices}}}}},
          {"spec", {{"nodeName", "node-0"}, {"containers", json::array({{{"name", "main"}}})}}},
          {"status", {{"phase", "Running"}, {"startTime", "2027-01-15T08:00:00Z"}}}};
}

TEST(GpuMetrics, ServesOneSeriesPerDeviceAtTheProfilesUtilisationNow) {
  constexpr double kStarted = 1'800'000'000;  // 2027-01-15T08:00:00Z
  json pending = running_pod("waiting", "busy", "0");
  pending["status"]["phase"] = "Pending";
  const json pods = {
      {"items", json::array({running_pod("nb", "idle_after 1m", "3"), running_pod("train", "busy", "0,1"),
                             running_pod("odd", "sleepy", "2"), pending})}};
  const std::string early = dcgm_utilisation_metrics(pods, kStarted + 30);
  EXPECT_NE(early.find("# TYPE DCGM_FI_DEV_GPU_UTIL gauge"), std::string::npos);
  EXPECT_NE(
      early.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"3\",UUID=\"GPU-node-0-3\",device=\"nvidia3\",modelName=\"simulated\","
                 "Hostname=\"node-0\",container=\"main\",namespace=\"ml\",pod=\"nb\"} 90"),
      std::string::npos)
      << early;
  EXPECT_NE(early.find("pod=\"train\"} 90"), std::string::npos);
  EXPECT_NE(early.find("gpu=\"1\",UUID=\"GPU-node-0-1\""), std::string::npos);  // train's second device
  EXPECT_NE(early.find("# pod ml/odd: 'sleepy' is not a utilisation profile"), std::string::npos);
  EXPECT_EQ(early.find("pod=\"waiting\""), std::string::npos);
  const std::string later = dcgm_utilisation_metrics(pods, kStarted + 90);
  EXPECT_NE(later.find("pod=\"nb\"} 0"), std::string::npos) << later;
}

}  // namespace
}  // namespace tessera::cli
