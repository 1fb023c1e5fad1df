// The user commands' output: aligned tables with wide-only columns, JSON and YAML of the same data.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/user/output.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

Table two_workloads() {
  Table table{{{"NAME"}, {"STATE"}, {"MESSAGE", true}}, {}};
  table.add_row({"job-train", "Running", "4 of 4 pods bound"}).add_row({"big", "Pending", ""});
  return table;
}

TEST(CliOutput, TablesAlignColumnsAsKubectlDoes) {
  EXPECT_EQ(render_table(two_workloads(), false, "none"),
            "NAME        STATE\n"
            "job-train   Running\n"
            "big         Pending\n");
  // Wide adds its columns; an empty cell reads <none>.
  EXPECT_EQ(render_table(two_workloads(), true, "none"),
            "NAME        STATE     MESSAGE\n"
            "job-train   Running   4 of 4 pods bound\n"
            "big         Pending   <none>\n");
}

TEST(CliOutput, AnEmptyListSaysSoInsteadOfPrintingHeaders) {
  Table table{{{"NAME"}}, {}};
  EXPECT_EQ(render_table(table, false, "No workloads found in namespace ml."), "No workloads found in namespace ml.\n");
}

TEST(CliOutput, ARowOfTheWrongWidthIsABug) {
  Table table{{{"NAME"}, {"STATE"}}, {}};
  EXPECT_THROW(table.add_row({"only-one"}), std::logic_error);
}

TEST(CliOutput, JsonAndYamlCarryTheDataNotTheTable) {
  const json data = {{"kind", "WorkloadList"},
                     {"items", {{{"name", "big"}, {"gpus", "8"}, {"gpuTotal", 8.5}, {"ready", true}, {"owner", ""}}}}};
  EXPECT_EQ(json::parse(render(OutputFormat::kJson, two_workloads(), data, "")), data);
  const std::string yaml = render(OutputFormat::kYaml, two_workloads(), data, "");
  // Strings YAML would read as numbers or nothing stay strings.
  EXPECT_NE(yaml.find("gpus: \"8\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("owner: \"\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("gpuTotal: 8.5"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("ready: true"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("NAME"), std::string::npos) << yaml;
  EXPECT_EQ(render(OutputFormat::kTable, two_workloads(), data, ""), render_table(two_workloads(), false, ""));
}

TEST(CliOutput, OutputNamesAreTheFourKubectlUsersKnow) {
  EXPECT_EQ(parse_output_format("wide"), OutputFormat::kWide);
  EXPECT_EQ(parse_output_format("yaml"), OutputFormat::kYaml);
  EXPECT_FALSE(parse_output_format("jsonpath"));
}

TEST(CliOutput, LongTextIsShortenedOnCharacterBoundaries) {
  EXPECT_EQ(shorten("fits on no node", 40), "fits on no node");
  EXPECT_EQ(shorten("fits on no node (3 nodes: not enough GPUs)", 12), "fits on n...");
  EXPECT_EQ(shorten("äääääää", 6), "äää...");
}

}  // namespace
}  // namespace tessera::cli
