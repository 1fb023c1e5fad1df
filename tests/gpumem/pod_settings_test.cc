#include "gpumem/pod_settings.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace tessera::gpumem {
namespace {

PodSettings read(const std::map<std::string, std::string>& environment) {
  return read_pod_settings([&](const char* name) -> const char* {
    auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  });
}

TEST(PodSettings, ReadsThePodFromTheEnvironmentTesseraWritesAtBinding) {
  const PodSettings settings = read({{"TESSERA_POD_UID", "7d1c"},
                                     {"TESSERA_GPU_MEMORY_LIMIT", "21474836480"},
                                     {"TESSERA_GPU_MEMORY_REQUEST", "10737418240"},
                                     {"TESSERA_GPU_MEMORY_RESOLVER", "priority"},
                                     {"TESSERA_POD_PRIORITY", "1000"},
                                     {"NVIDIA_VISIBLE_DEVICES", "3,5"},
                                     {"TESSERA_GPU_MEMORY_SWAP_SLICE_MS", "2500"},
                                     {"TESSERA_GPUMEM_LEDGER", "/x/ledger"}});
  EXPECT_TRUE(settings.problems.empty());
  EXPECT_EQ(settings.uid, "7d1c");
  EXPECT_EQ(settings.limit, std::uint64_t{21474836480});
  EXPECT_EQ(settings.request, std::uint64_t{10737418240});
  EXPECT_EQ(settings.resolver, Resolver::kPriority);
  EXPECT_EQ(settings.priority, 1000);
  EXPECT_EQ(settings.ledger_path, "/x/ledger");
  EXPECT_EQ(settings.swap_slice_ns, std::int64_t{2500} * 1000000);
  EXPECT_EQ(read({{"TESSERA_GPU_MEMORY_SWAP_SLICE_MS", ""}}).swap_slice_ns, -1);  // an absent annotation: unset
  EXPECT_EQ(node_device(settings, 0), 3);
  EXPECT_EQ(node_device(settings, 1), 5);
}

TEST(PodSettings, WithoutVisibleDeviceIndicesOrdinalsAreNodeIndices) {
  EXPECT_EQ(node_device(read({}), 2), 2);
  EXPECT_EQ(node_device(read({{"NVIDIA_VISIBLE_DEVICES", "all"}}), 1), 1);
  EXPECT_EQ(node_device(read({{"NVIDIA_VISIBLE_DEVICES", "GPU-8e1f,GPU-22aa"}}), 1), 1);
  EXPECT_EQ(read({}).ledger_path, kDefaultLedgerPath);
  EXPECT_FALSE(read({}).limit.has_value());
}

TEST(PodSettings, BadValuesAreReportedByVariableAndIgnored) {
  const PodSettings settings = read({{"TESSERA_GPU_MEMORY_LIMIT", "20Gi"},
                                     {"TESSERA_GPU_MEMORY_RESOLVER", "kill"},
                                     {"TESSERA_GPUMEM_WAIT_TIMEOUT_MS", "-5"}});
  ASSERT_EQ(settings.problems.size(), 3u);
  EXPECT_NE(settings.problems[0].find("TESSERA_GPU_MEMORY_LIMIT=20Gi"), std::string::npos);
  EXPECT_NE(settings.problems[1].find("TESSERA_GPU_MEMORY_RESOLVER=kill"), std::string::npos);
  EXPECT_NE(settings.problems[2].find("TESSERA_GPUMEM_WAIT_TIMEOUT_MS=-5"), std::string::npos);
  EXPECT_FALSE(settings.limit.has_value());
  EXPECT_EQ(settings.resolver, Resolver::kWait);
}

TEST(PodSettings, ARequestAboveTheLimitIsCutToIt) {
  const PodSettings settings = read({{"TESSERA_GPU_MEMORY_LIMIT", "100"}, {"TESSERA_GPU_MEMORY_REQUEST", "200"}});
  EXPECT_EQ(settings.request, 100u);
  EXPECT_EQ(settings.problems.size(), 1u);
}

}  // namespace
}  // namespace tessera::gpumem
