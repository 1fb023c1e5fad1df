#include "adapter/gpu_telemetry.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace tessera::adapter {

std::string utilisation_query(std::string_view query_template, double window_seconds) {
  const std::string window = fmt::format("{}s", std::max<int64_t>(1, std::llround(window_seconds)));
  std::string query(query_template);
  for (size_t at = query.find("$window"); at != std::string::npos; at = query.find("$window", at + window.size()))
    query.replace(at, 7, window);
  return query;
}

Result<std::map<std::string, double>> parse_utilisation(std::string_view body) {
  const nlohmann::json response = nlohmann::json::parse(body, nullptr, false);
  if (response.is_discarded() || !response.is_object()) return Error{"the response is not a JSON object"};
  const std::string status = response.value("status", "");
  if (status != "success") {
    return Error{fmt::format("Prometheus answered {}: {}", status.empty() ? "without a status" : status,
                             response.value("error", "(no message)"))};
  }
  const auto data = response.find("data");
  if (data == response.end() || !data->is_object() || data->value("resultType", "") != "vector" ||
      !data->contains("result") || !(*data)["result"].is_array()) {
    return Error{"the response's data is not an instant vector (expected a query that returns one series per pod)"};
  }
  std::map<std::string, double> by_pod;
  for (const nlohmann::json& series : (*data)["result"]) {
    if (!series.is_object() || !series.contains("metric") || !series.contains("value")) continue;
    const nlohmann::json& metric = series["metric"];
    const nlohmann::json& value = series["value"];
    if (!metric.is_object() || !value.is_array() || value.size() != 2 || !value[1].is_string()) continue;
    const std::string ns = metric.value("namespace", "");
    const std::string pod = metric.value("pod", "");
    if (ns.empty() || pod.empty()) continue;
    char* end = nullptr;
    const std::string text = value[1].get<std::string>();
    const double percent = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(percent)) continue;  // "NaN": no samples in the window
    const std::string key = ns + "/" + pod;
    const auto [entry, added] = by_pod.emplace(key, percent);
    if (!added) entry->second = std::max(entry->second, percent);
  }
  return by_pod;
}

PrometheusClient::PrometheusClient(std::string url, double timeout_seconds)
    : url_(std::move(url)), timeout_seconds_(timeout_seconds) {
  while (!url_.empty() && url_.back() == '/') url_.pop_back();
}

Result<std::map<std::string, double>> PrometheusClient::utilisation(const std::string& query) const {
  httplib::Client client(url_);
  if (!client.is_valid()) return Error{fmt::format("{} is not a Prometheus URL (expected http://HOST:PORT)", url_)};
  const auto timeout = std::chrono::duration<double>(timeout_seconds_);
  client.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  client.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  const httplib::Params params{{"query", query}};
  const auto response = client.Get("/api/v1/query", params, httplib::Headers{});
  if (!response) return Error{fmt::format("{}: {}", url_, httplib::to_string(response.error()))};
  if (response->status != 200 && response->status != 400 && response->status != 422) {
    return Error{fmt::format("{}: HTTP {}", url_, response->status)};
  }
  auto parsed = parse_utilisation(response->body);
  if (!parsed) return Error{fmt::format("{}: {}", url_, parsed.error().message)};
  return parsed;
}

}  // namespace tessera::adapter
