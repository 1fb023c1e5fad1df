#include "apiserver/table_printer.h"

#include <fmt/format.h>

#include <functional>
#include <string>

#include "apiserver/json_path.h"
#include "wire/duration.h"

namespace tessera::apiserver {

namespace {

using nlohmann::json;
using Cells = std::function<json(const json& object, WallClock::time_point now)>;

struct Column {
  PrinterColumn definition;
  Cells cell;
};

const std::string kNameDescription =
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow "
    "a client to request the generation of an appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated.";

const json& field(const json& object, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* current = &object;
  for (const char* step : path) {
    if (!current->is_object()) return kNull;
    auto found = current->find(step);
    if (found == current->end()) return kNull;
    current = &*found;
  }
  return *current;
}

std::string text_or(const json& value, const std::string& fallback) {
  if (value.is_string() && !value.get_ref<const std::string&>().empty()) return value.get<std::string>();
  if (value.is_number() || value.is_boolean()) return value.dump();
  return fallback;
}

std::string age_of(const json& timestamp, WallClock::time_point now) {
  if (!timestamp.is_string()) return "<unknown>";
  Result<WallClock::time_point> time = wire::parse_time_point(timestamp.get<std::string>());
  if (!time) return "<invalid>";
  return wire::human_duration(std::chrono::duration_cast<std::chrono::seconds>(now - *time));
}

Column column(std::string name, std::string type, int priority, std::string description, Cells cell) {
  return Column{PrinterColumn{std::move(name), std::move(type), "", std::move(description), "", priority},
                std::move(cell)};
}

Column name_column() {
  Column name = column("Name", "string", 0, kNameDescription, [](const json& object, WallClock::time_point) {
    return field(object, {"metadata", "name"});
  });
  name.definition.format = "name";
  return name;
}

Column age_column() {
  return column("Age", "string", 0,
                "CreationTimestamp is a timestamp representing the server time when this object was created.",
                [](const json& object, WallClock::time_point now) {
                  return json(age_of(field(object, {"metadata", "creationTimestamp"}), now));
                });
}

// The STATUS column of a pod, as kubectl has always printed it.
std::string pod_status(const json& pod) {
  std::string reason = text_or(field(pod, {"status", "phase"}), "Unknown");
  reason = text_or(field(pod, {"status", "reason"}), reason);
  const json& statuses = field(pod, {"status", "containerStatuses"});
  if (statuses.is_array()) {
    for (const json& status : statuses) {
      const json& waiting = field(status, {"state", "waiting", "reason"});
      const json& terminated = field(status, {"state", "terminated"});
      if (waiting.is_string() && !waiting.get_ref<const std::string&>().empty()) {
        reason = waiting.get<std::string>();
      } else if (terminated.is_object()) {
        reason = text_or(terminated.value("reason", json()), "");
        if (reason.empty()) reason = fmt::format("ExitCode:{}", terminated.value("exitCode", 0));
      }
    }
  }
  if (field(pod, {"metadata", "deletionTimestamp"}).is_string()) {
    reason = field(pod, {"status", "reason"}) == "NodeLost" ? "Unknown" : "Terminating";
  }
  return reason;
}

std::vector<Column> pod_columns() {
  return {
      name_column(),
      column("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic.",
             [](const json& pod, WallClock::time_point) {
               const json& containers = field(pod, {"spec", "containers"});
               const json& statuses = field(pod, {"status", "containerStatuses"});
               size_t ready = 0;
               if (statuses.is_array()) {
                 for (const json& status : statuses) ready += status.value("ready", false) ? 1 : 0;
               }
               return json(fmt::format("{}/{}", ready, containers.is_array() ? containers.size() : 0));
             }),
      column("Status", "string", 0, "The aggregate status of the containers in this pod.",
             [](const json& pod, WallClock::time_point) { return json(pod_status(pod)); }),
      column("Restarts", "integer", 0, "The number of times the containers in this pod have been restarted.",
             [](const json& pod, WallClock::time_point) {
               int64_t restarts = 0;
               const json& statuses = field(pod, {"status", "containerStatuses"});
               if (statuses.is_array()) {
                 for (const json& status : statuses) restarts += status.value("restartCount", int64_t{0});
               }
               return json(restarts);
             }),
      age_column(),
      column("IP", "string", 1, "IP address allocated to the pod. Routable at least within the cluster.",
             [](const json& pod, WallClock::time_point) {
               return json(text_or(field(pod, {"status", "podIP"}), "<none>"));
             }),
      column("Node", "string", 1, "Name of the node the pod is bound to.",
             [](const json& pod, WallClock::time_point) {
               return json(text_or(field(pod, {"spec", "nodeName"}), "<none>"));
             }),
      column("Nominated Node", "string", 1, "Name of the node where the pod is nominated to run.",
             [](const json& pod, WallClock::time_point) {
               return json(text_or(field(pod, {"status", "nominatedNodeName"}), "<none>"));
             }),
      column("Readiness Gates", "string", 1, "The readiness gates of the pod.",
             [](const json&, WallClock::time_point) { return json("<none>"); }),
  };
}

std::vector<Column> node_columns() {
  return {
      name_column(),
      column("Status", "string", 0, "The status of the node",
             [](const json& node, WallClock::time_point) {
               std::string status = "Unknown";
               const json& conditions = field(node, {"status", "conditions"});
               if (conditions.is_array()) {
                 for (const json& condition : conditions) {
                   if (condition.value("type", "") == "Ready") {
                     status = condition.value("status", "") == "True" ? "Ready" : "NotReady";
                   }
                 }
               }
               if (field(node, {"spec", "unschedulable"}) == true) status += ",SchedulingDisabled";
               return json(status);
             }),
      column("Roles", "string", 0, "The roles of the node",
             [](const json& node, WallClock::time_point) {
               std::string roles;
               const json& labels = field(node, {"metadata", "labels"});
               if (labels.is_object()) {
                 for (const auto& [key, value] : labels.items()) {
                   constexpr std::string_view kRole = "node-role.kubernetes.io/";
                   if (key.starts_with(kRole)) roles += (roles.empty() ? "" : ",") + key.substr(kRole.size());
                 }
               }
               return json(roles.empty() ? "<none>" : roles);
             }),
      age_column(),
      column("Version", "string", 0, "Kubelet Version reported by the node.",
             [](const json& node, WallClock::time_point) {
               return json(text_or(field(node, {"status", "nodeInfo", "kubeletVersion"}), ""));
             }),
      column("Internal-IP", "string", 1, "List of internal IPs for the node.",
             [](const json& node, WallClock::time_point) {
               const json& addresses = field(node, {"status", "addresses"});
               if (addresses.is_array()) {
                 for (const json& address : addresses) {
                   if (address.value("type", "") == "InternalIP") return json(address.value("address", ""));
                 }
               }
               return json("<none>");
             }),
      column("OS-Image", "string", 1, "OS image reported by the node.",
             [](const json& node, WallClock::time_point) {
               return json(text_or(field(node, {"status", "nodeInfo", "osImage"}), "<unknown>"));
             }),
  };
}

std::vector<Column> namespace_columns() {
  return {name_column(),
          column("Status", "string", 0, "The status of the namespace",
                 [](const json& object, WallClock::time_point) {
                   return json(text_or(field(object, {"status", "phase"}), ""));
                 }),
          age_column()};
}

std::vector<Column> event_columns() {
  return {
      column("Last Seen", "string", 0, "Time when last this event was observed",
             [](const json& event, WallClock::time_point now) {
               const json& last = field(event, {"lastTimestamp"});
               if (last.is_string()) return json(age_of(last, now));
               const json& event_time = field(event, {"eventTime"});
               if (event_time.is_string())
                 return json(age_of(json(event_time.get<std::string>().substr(0, 19) + "Z"), now));
               return json(age_of(field(event, {"metadata", "creationTimestamp"}), now));
             }),
      column("Type", "string", 0, "Type of this event (Normal, Warning), new types could be added in the future.",
             [](const json& event, WallClock::time_point) { return json(text_or(field(event, {"type"}), "")); }),
      column("Reason", "string", 0, "The reason for the transition into the object's current status.",
             [](const json& event, WallClock::time_point) { return json(text_or(field(event, {"reason"}), "")); }),
      column("Object", "string", 0, "The object that this event is about.",
             [](const json& event, WallClock::time_point) {
               std::string kind = text_or(field(event, {"involvedObject", "kind"}), "");
               std::transform(kind.begin(), kind.end(), kind.begin(),
                              [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
               return json(fmt::format("{}/{}", kind, text_or(field(event, {"involvedObject", "name"}), "")));
             }),
      column("Message", "string", 0, "A human-readable description of the status of this operation.",
             [](const json& event, WallClock::time_point) { return json(text_or(field(event, {"message"}), "")); }),
      column("Name", "string", 1, kNameDescription,
             [](const json& event, WallClock::time_point) {
               return field(event, {"metadata", "name"});
             }),
  };
}

std::vector<Column> pdb_columns() {
  auto or_na = [](const char* key) {
    return [key](const json& pdb, WallClock::time_point) { return json(text_or(field(pdb, {"spec", key}), "N/A")); };
  };
  return {
      name_column(),
      column("Min Available", "string", 0, "The minimum number of pods that must be available.", or_na("minAvailable")),
      column("Max Unavailable", "string", 0, "The maximum number of pods that may be unavailable.",
             or_na("maxUnavailable")),
      column("Allowed Disruptions", "integer", 0, "Calculated number of pods that may be disrupted at this time.",
             [](const json& pdb, WallClock::time_point) {
               const json& allowed = field(pdb, {"status", "disruptionsAllowed"});
               return allowed.is_number() ? allowed : json(0);
             }),
      age_column()};
}

std::vector<Column> deployment_columns() {
  auto count = [](std::initializer_list<const char*> path) {
    return [path](const json& object) {
      const json& value = field(object, path);
      return value.is_number() ? value.get<int64_t>() : int64_t{0};
    };
  };
  return {name_column(),
          column("Ready", "string", 0, "Number of the pod with ready state",
                 [count](const json& deployment, WallClock::time_point) {
                   const json& replicas = field(deployment, {"spec", "replicas"});
                   return json(fmt::format("{}/{}", count({"status", "readyReplicas"})(deployment),
                                           replicas.is_number() ? replicas.get<int64_t>() : 1));
                 }),
          column("Up-to-date", "integer", 0,
                 "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
                 [count](const json& deployment, WallClock::time_point) {
                   return json(count({"status", "updatedReplicas"})(deployment));
                 }),
          column("Available", "integer", 0,
                 "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
                 [count](const json& deployment, WallClock::time_point) {
                   return json(count({"status", "availableReplicas"})(deployment));
                 }),
          age_column()};
}

std::vector<Column> lease_columns() {
  return {name_column(),
          column("Holder", "string", 0, "The holder of the lease.",
                 [](const json& lease, WallClock::time_point) {
                   return json(text_or(field(lease, {"spec", "holderIdentity"}), "<none>"));
                 }),
          age_column()};
}

std::vector<Column> data_columns() {
  return {name_column(),
          column("Data", "integer", 0, "Number of items.",
                 [](const json& object, WallClock::time_point) {
                   size_t items = 0;
                   for (const char* key : {"data", "binaryData"}) {
                     const json& data = field(object, {key});
                     if (data.is_object()) items += data.size();
                   }
                   return json(items);
                 }),
          age_column()};
}

std::vector<Column> crd_columns() {
  return {name_column(), column("Created At", "date", 0, "Time the definition was created.",
                                [](const json& object, WallClock::time_point) {
                                  return field(object, {"metadata", "creationTimestamp"});
                                })};
}

// A custom resource's additionalPrinterColumns, after the Name column the real server adds.
std::vector<Column> custom_columns(const ResourceType& type) {
  std::vector<Column> columns = {name_column()};
  if (type.printer_columns.empty()) {
    columns.push_back(age_column());
    return columns;
  }
  for (const PrinterColumn& printer : type.printer_columns) {
    Column printed{printer, [printer](const json& object, WallClock::time_point now) -> json {
                     // Like the real server: the first value found, converted to the column's type.
                     std::optional<std::vector<json>> values = evaluate_json_path(object, printer.json_path);
                     if (!values || values->empty() || values->front().is_null()) return nullptr;
                     const json& value = values->front();
                     if (printer.type == "string") return value.is_string() ? value : json(value.dump());
                     if (printer.type == "integer") {
                       return value.is_number() ? json(static_cast<int64_t>(value.get<double>())) : json();
                     }
                     if (printer.type == "number") return value.is_number() ? value : json();
                     if (printer.type == "boolean") return value.is_boolean() ? value : json();
                     if (printer.type == "date") return value.is_string() ? json(age_of(value, now)) : json();
                     return nullptr;
                   }};
    printed.definition.json_path.clear();
    columns.push_back(std::move(printed));
  }
  return columns;
}

std::vector<Column> columns_for(const ResourceType& type) {
  if (type.custom()) return custom_columns(type);
  if (type.group.empty()) {
    if (type.plural == "pods") return pod_columns();
    if (type.plural == "nodes") return node_columns();
    if (type.plural == "namespaces") return namespace_columns();
    if (type.plural == "events") return event_columns();
    if (type.plural == "configmaps" || type.plural == "secrets") return data_columns();
  }
  if (type.plural == "poddisruptionbudgets") return pdb_columns();
  if (type.plural == "deployments") return deployment_columns();
  if (type.plural == "leases") return lease_columns();
  if (type.plural == "customresourcedefinitions") return crd_columns();
  return {name_column(), age_column()};
}

}  // namespace

json make_table(const ResourceType& type, const std::vector<const json*>& objects, IncludeObject include,
                WallClock::time_point now) {
  const std::vector<Column> columns = columns_for(type);
  json definitions = json::array();
  for (const Column& column : columns) {
    definitions.push_back({{"name", column.definition.name},
                           {"type", column.definition.type},
                           {"format", column.definition.format},
                           {"description", column.definition.description},
                           {"priority", column.definition.priority}});
  }
  json rows = json::array();
  for (const json* object : objects) {
    json cells = json::array();
    for (const Column& column : columns) cells.push_back(column.cell(*object, now));
    json row = {{"cells", std::move(cells)}};
    if (include == IncludeObject::kObject) {
      row["object"] = *object;
    } else if (include == IncludeObject::kMetadata) {
      row["object"] = {{"kind", "PartialObjectMetadata"},
                       {"apiVersion", "meta.k8s.io/v1"},
                       {"metadata", object->value("metadata", json::object())}};
    }
    rows.push_back(std::move(row));
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", json::object()},
          {"columnDefinitions", std::move(definitions)},
          {"rows", std::move(rows)}};
}

}  // namespace tessera::apiserver
