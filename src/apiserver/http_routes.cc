#include "apiserver/http_routes.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "apiserver/connection_stream.h"
#include "apiserver/content_negotiation.h"
#include "apiserver/discovery.h"
#include "apiserver/table_printer.h"
#include "apiserver/watch_stream.h"
#include "apiserver/wire_json.h"
#include "apiserver/yaml_json.h"
#include "wire/timestamp.h"

namespace tessera::apiserver {

namespace {

using nlohmann::json;

void send_json(httplib::Response& response, int code, const std::string& body) {
  response.status = code;
  response.set_header("Cache-Control", "no-cache, private");
  response.set_content(body, "application/json");
}

void send_error(httplib::Response& response, const ApiError& error) {
  if (error.retry_after_seconds > 0) response.set_header("Retry-After", std::to_string(error.retry_after_seconds));
  send_json(response, error.code, wire_json(error.to_status()));
}

std::string param(const httplib::Request& request, const char* name) {
  return request.has_param(name) ? request.get_param_value(name) : "";
}

bool truthy(const std::string& value) { return value == "1" || value == "true" || value == "True"; }

IncludeObject include_object(const httplib::Request& request) {
  const std::string value = param(request, "includeObject");
  if (value == "None") return IncludeObject::kNone;
  if (value == "Object") return IncludeObject::kObject;
  return IncludeObject::kMetadata;
}

json partial_metadata(const ObjectPtr& object, const std::string& meta_version) {
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/" + meta_version},
          {"metadata", object->value("metadata", json::object())}};
}

// One object in the form asked for.
json present(const ResourceType& type, const ObjectPtr& object, const Output& output, IncludeObject include) {
  switch (output.form) {
    case OutputForm::kObject:
      return *ResourceApi::as_served(type, object);
    case OutputForm::kMetadata:
      return partial_metadata(object, output.meta_version);
    case OutputForm::kTable: {
      json table = make_table(type, {object.get()}, include, wire::WallClock::now());
      table["apiVersion"] = "meta.k8s.io/" + output.meta_version;
      table["metadata"]["resourceVersion"] = meta_string(*object, "resourceVersion");
      return table;
    }
  }
  return *object;
}

std::string list_metadata(const ListPage& page) {
  json metadata = {{"resourceVersion", std::to_string(page.revision)}};
  if (!page.continue_token.empty()) metadata["continue"] = page.continue_token;
  if (page.remaining_item_count) metadata["remainingItemCount"] = *page.remaining_item_count;
  return wire_json(metadata);
}

std::string encode_list(const ResourceType& type, const ListPage& page, const Output& output, IncludeObject include) {
  if (output.form == OutputForm::kTable) {
    std::vector<const json*> objects;
    objects.reserve(page.items.size());
    for (const ObjectPtr& object : page.items) objects.push_back(object.get());
    json table = make_table(type, objects, include, wire::WallClock::now());
    table["apiVersion"] = "meta.k8s.io/" + output.meta_version;
    table["metadata"] = json::parse(list_metadata(page));
    return wire_json(table);
  }
  // Items are appended as text: a list may hold thousands of objects.
  std::string body =
      output.form == OutputForm::kMetadata
          ? fmt::format(R"({{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/{}",)", output.meta_version)
          : fmt::format(R"({{"kind":"{}","apiVersion":"{}",)", type.list_kind, type.api_version());
  body += R"("metadata":)" + list_metadata(page) + R"(,"items":[)";
  for (size_t i = 0; i < page.items.size(); ++i) {
    if (i > 0) body += ',';
    body += output.form == OutputForm::kMetadata ? wire_json(partial_metadata(page.items[i], output.meta_version))
                                                 : wire_json(*page.items[i]);
  }
  body += "]}";
  return body;
}

ApiResult<json> parse_body(const httplib::Request& request) {
  std::optional<BodyFormat> format = body_format(request.get_header_value("Content-Type"));
  if (!format) return unsupported_media_type(kBodyContentTypes);
  if (*format == BodyFormat::kYaml) {
    Result<json> parsed = yaml_to_json(request.body);
    if (!parsed)
      return bad_request(fmt::format("couldn't get version/kind; yaml parse error: {}", parsed.error().message));
    return *parsed;
  }
  try {
    return json::parse(request.body);
  } catch (const json::exception& error) {
    return bad_request(fmt::format("couldn't get version/kind; json parse error: {}", error.what()));
  }
}

ApiResult<bool> dry_run(const httplib::Request& request) {
  const std::string value = param(request, "dryRun");
  if (value.empty()) return false;
  if (value == "All") return true;
  return bad_request(fmt::format("dryRun: Unsupported value: \"{}\": supported values: \"All\"", value));
}

ApiResult<ListOptions> list_options(const httplib::Request& request) {
  ListOptions options;
  options.label_selector = param(request, "labelSelector");
  options.field_selector = param(request, "fieldSelector");
  options.continue_token = param(request, "continue");
  options.resource_version = param(request, "resourceVersion");
  options.resource_version_match = param(request, "resourceVersionMatch");
  const std::string limit = param(request, "limit");
  if (!limit.empty()) {
    try {
      options.limit = std::stoll(limit);
    } catch (const std::exception&) {
      return bad_request(fmt::format("limit: Invalid value: \"{}\": must be an integer", limit));
    }
  }
  return options;
}

bool allows(const ResourceType& type, const char* verb) {
  return std::find(type.verbs.begin(), type.verbs.end(), verb) != type.verbs.end();
}

bool is_watch(const httplib::Request& request) {
  std::optional<ResourcePath> path = parse_resource_path(request.path);
  return (path && path->legacy_watch) || truthy(param(request, "watch"));
}

// An answer in place of the request, which is not applied. 503 and 429 as the real server's
// overload protection sends them, so that clients back off as they would there; the 429 has no
// DisruptionBudget cause, which would tell an evicting client that a budget refused.
ApiError injected_error(Fault fault) {
  if (fault == Fault::kServiceUnavailable) {
    ApiError error;
    error.code = 503;
    error.reason = "ServiceUnavailable";
    error.message = "the server is currently unable to handle the request";
    error.retry_after_seconds = 1;
    return error;
  }
  if (fault == Fault::kTooManyRequests) {
    ApiError error = too_many_requests("Too many requests, please try again later.", {});
    error.retry_after_seconds = 1;
    return error;
  }
  return internal_error("injected fault");
}

// Keeps a watch counted while its stream lives.
class WatchSlot {
 public:
  explicit WatchSlot(std::atomic<size_t>& open) : open_(open) {}
  ~WatchSlot() { --open_; }
  WatchSlot(const WatchSlot&) = delete;
  WatchSlot& operator=(const WatchSlot&) = delete;

 private:
  std::atomic<size_t>& open_;
};

}  // namespace

HttpRoutes::HttpRoutes(ResourceApi& api, WatchLimits limits, std::string server_address, FaultInjector* faults)
    : api_(api), limits_(limits), server_address_(std::move(server_address)), faults_(faults) {}

void HttpRoutes::install(httplib::Server& server) {
  auto handler = [this](const httplib::Request& request, httplib::Response& response) { serve(request, response); };
  server.Get(".*", handler);
  server.Post(".*", handler);
  server.Put(".*", handler);
  server.Patch(".*", handler);
  server.Delete(".*", handler);
  server.Options(
      ".*", [](const httplib::Request&, httplib::Response& response) { send_error(response, method_not_allowed()); });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr failure) {
    std::string what = "unexpected failure";
    try {
      if (failure) std::rethrow_exception(failure);
    } catch (const std::exception& error) {
      what = error.what();
    } catch (...) {
    }
    send_error(response, internal_error(what));
  });
}

void HttpRoutes::serve(const httplib::Request& request, httplib::Response& response) {
  if (request.path.starts_with("/debug/")) return handle_debug(request, response);
  const std::optional<Fault> fault =
      faults_ != nullptr ? faults_->draw_for_request(is_watch(request), request.get_header_value("User-Agent"))
                         : std::nullopt;
  if (!fault) return handle(request, response);
  switch (*fault) {
    case Fault::kDropBeforeApplying:
      response.set_header(std::string(kCloseWithoutResponseHeader), "1");
      return;
    case Fault::kDropAfterApplying:
      handle(request, response);
      response.set_header(std::string(kCloseWithoutResponseHeader), "1");
      return;
    case Fault::kInternalError:
    case Fault::kServiceUnavailable:
    case Fault::kTooManyRequests:
      return send_error(response, injected_error(*fault));
    case Fault::kIdleClose:
      break;
  }
  handle(request, response);
}

void HttpRoutes::handle_debug(const httplib::Request& request, httplib::Response& response) {
  if (request.path != "/debug/faults") return send_error(response, path_not_found());
  if (request.method != "GET") return send_error(response, method_not_allowed());
  send_json(response, 200, wire_json(faults_ != nullptr ? faults_->counts() : FaultInjector({}).counts()));
}

void HttpRoutes::handle(const httplib::Request& request, httplib::Response& response) {
  try {
    if (std::optional<ResourcePath> path = parse_resource_path(request.path)) {
      handle_resource(request, response, *path);
    } else {
      handle_discovery(request, response);
    }
  } catch (const json::type_error& error) {
    // A field of a request body with the wrong JSON type, met while handling it: what the real
    // server's decoder rejects before anything else.
    send_error(response, bad_request(fmt::format("the object provided is unrecognized: {}", error.what())));
  }
}

void HttpRoutes::handle_discovery(const httplib::Request& request, httplib::Response& response) {
  const std::string& path = request.path;
  if (path == "/healthz" || path == "/livez" || path == "/readyz") {
    if (request.method != "GET") return send_error(response, method_not_allowed());
    response.set_content("ok", "text/plain; charset=utf-8");
    return;
  }
  std::optional<json> body;
  if (path == "/version") {
    body = version_info();
  } else if (path == "/api") {
    body = core_api_versions(server_address_);
  } else if (path == "/apis") {
    body = api_group_list(api_.registry());
  } else if (path == "/openapi/v2") {
    if (request.method != "GET") return send_error(response, method_not_allowed());
    const std::string accept = request.get_header_value("Accept");
    if (accept.find("protobuf") != std::string::npos) {
      // Served as application/octet-stream, as kube-openapi did: Go's MIME parser, which
      // client-go runs on every response, rejects the '@' of the protobuf media type.
      response.set_content(openapi_v2_protobuf(), "application/octet-stream");
    } else {
      send_json(response, 200, wire_json(openapi_v2_json()));
    }
    return;
  } else if (path.starts_with("/api/") || path.starts_with("/apis/")) {
    std::vector<std::string> segments;
    for (size_t start = 1; start <= path.size();) {
      size_t end = path.find('/', start);
      if (end == std::string::npos) end = path.size();
      if (end > start) segments.push_back(path.substr(start, end - start));
      start = end + 1;
    }
    if (segments.size() == 2 && segments[0] == "api") body = api_resource_list(api_.registry(), "", segments[1]);
    if (segments.size() == 2 && segments[0] == "apis") body = api_group(api_.registry(), segments[1]);
    if (segments.size() == 3 && segments[0] == "apis") {
      body = api_resource_list(api_.registry(), segments[1], segments[2]);
    }
  }
  if (!body) return send_error(response, path_not_found());
  if (request.method != "GET") return send_error(response, method_not_allowed());
  send_json(response, 200, wire_json(*body));
}

void HttpRoutes::handle_resource(const httplib::Request& request, httplib::Response& response,
                                 const ResourcePath& path) {
  std::optional<ResourceType> type = api_.registry().find(path.group, path.version, path.resource);
  if (!type) return send_error(response, path_not_found());
  // Scope: a cluster-scoped resource has no namespace in its path; a namespaced one needs it
  // for anything but a collection read.
  if (!path.namespace_name.empty() && !type->namespaced) return send_error(response, path_not_found());
  if (path.namespace_name.empty() && type->namespaced && (!path.name.empty() || request.method != "GET")) {
    return send_error(response, path_not_found());
  }
  if (!path.subresource.empty()) {
    const bool known = (path.subresource == "status" && type->has_status()) ||
                       (type->has_subresource(path.subresource) && path.subresource != "status");
    if (!known) return send_error(response, path_not_found());
  }
  const std::string& method = request.method;
  const bool watch = path.legacy_watch || truthy(param(request, "watch"));
  if (method == "GET") {
    if (!allows(*type, watch ? "watch" : path.name.empty() ? "list" : "get")) {
      return send_error(response, method_not_allowed());
    }
    if (!path.subresource.empty() && path.subresource != "status") return send_error(response, method_not_allowed());
    if (watch) return handle_watch(request, response, *type, path);
    return handle_read(request, response, *type, path);
  }
  if (method == "DELETE") {
    if (!path.subresource.empty() || !allows(*type, path.name.empty() ? "deletecollection" : "delete")) {
      return send_error(response, method_not_allowed());
    }
    return handle_delete(request, response, *type, path);
  }
  return handle_write(request, response, *type, path);
}

void HttpRoutes::handle_read(const httplib::Request& request, httplib::Response& response, const ResourceType& type,
                             const ResourcePath& path) {
  std::optional<Output> output = negotiate_output(request.get_header_value("Accept"));
  if (!output) return send_error(response, not_acceptable("application/json, application/yaml"));
  const IncludeObject include = include_object(request);
  if (!path.name.empty()) {
    ApiResult<ObjectPtr> object = api_.get(type, path.namespace_name, path.name);
    if (!object) return send_error(response, object.error());
    return send_json(response, 200, wire_json(present(type, *object, *output, include)));
  }
  ApiResult<ListOptions> options = list_options(request);
  if (!options) return send_error(response, options.error());
  ApiResult<ListPage> page = api_.list(type, path.namespace_name, *options);
  if (!page) return send_error(response, page.error());
  send_json(response, 200, encode_list(type, *page, *output, include));
}

void HttpRoutes::handle_watch(const httplib::Request& request, httplib::Response& response, const ResourceType& type,
                              const ResourcePath& path) {
  std::optional<Output> output = negotiate_output(request.get_header_value("Accept"));
  if (!output) return send_error(response, not_acceptable("application/json"));
  if (!path.name.empty()) return send_error(response, method_not_allowed());
  WatchOptions options;
  options.namespace_name = path.namespace_name;
  ApiResult<LabelSelector> labels = LabelSelector::parse(param(request, "labelSelector"));
  if (!labels) return send_error(response, labels.error());
  ApiResult<FieldSelector> fields = FieldSelector::parse(param(request, "fieldSelector"), type);
  if (!fields) return send_error(response, fields.error());
  options.labels = std::move(*labels);
  options.fields = std::move(*fields);
  const std::string version = param(request, "resourceVersion");
  if (!version.empty() && version != "0") {
    // Digits only, as Go's strconv.ParseUint reads it: std::stoull would take "-1" for 2^64-1.
    uint64_t parsed = 0;
    auto [end, error] = std::from_chars(version.data(), version.data() + version.size(), parsed);
    if (error != std::errc() || end != version.data() + version.size()) {
      return send_error(response, bad_request(fmt::format("invalid resource version: \"{}\"", version)));
    }
    options.resource_version = parsed;
    const uint64_t current = api_.store().revision();
    if (*options.resource_version > current) {
      ApiError error = server_timeout(
          fmt::format("Too large resource version: {}, current: {}", *options.resource_version, current));
      error.causes.push_back(StatusCause{"ResourceVersionTooLarge", "Too large resource version", ""});
      error.retry_after_seconds = 1;
      return send_error(response, error);
    }
  }
  if (open_watches_.fetch_add(1) >= limits_.max_open) {
    --open_watches_;
    ApiError error = too_many_requests("Too many open watches, please try again later.", {});
    error.retry_after_seconds = 1;
    return send_error(response, error);
  }
  auto slot = std::make_shared<WatchSlot>(open_watches_);
  options.bookmarks = truthy(param(request, "allowWatchBookmarks"));
  options.bookmark_interval = limits_.bookmark_interval;
  std::chrono::seconds duration = limits_.max_duration;
  const std::string timeout = param(request, "timeoutSeconds");
  if (!timeout.empty()) {
    try {
      duration = std::min(duration, std::chrono::seconds(std::max<int64_t>(0, std::stoll(timeout))));
    } catch (const std::exception&) {
      return send_error(response, bad_request(fmt::format("timeoutSeconds: Invalid value: \"{}\"", timeout)));
    }
  }
  options.deadline = std::chrono::steady_clock::now() + duration;
  const IncludeObject include = include_object(request);
  const Output form = *output;
  auto stream = std::make_shared<WatchStream>(api_.store(), type, std::move(options),
                                              [form, include](const ResourceType& served, const ObjectPtr& object) {
                                                return present(served, object, form, include);
                                              });
  response.status = 200;
  response.set_header("Cache-Control", "no-cache, private");
  // "application/json" with a parameter, which httplib does not compress: a compressing stream
  // would hold events back in its buffer.
  response.set_chunked_content_provider("application/json;stream=watch",
                                        [this, stream, slot](size_t, httplib::DataSink& sink) {
                                          if (stopping_) {
                                            sink.done();
                                            return true;
                                          }
                                          std::string lines;
                                          const bool more = stream->next(lines, limits_.poll);
                                          if (!lines.empty() && !sink.write(lines.data(), lines.size())) return false;
                                          // A quiet watch whose client went: end it, and free its slot.
                                          if (lines.empty() && more && !sink.is_writable()) return false;
                                          if (!more) sink.done();
                                          return true;
                                        });
}

void HttpRoutes::handle_write(const httplib::Request& request, httplib::Response& response, const ResourceType& type,
                              const ResourcePath& path) {
  const std::string& method = request.method;
  ApiResult<bool> is_dry_run = dry_run(request);
  if (!is_dry_run) return send_error(response, is_dry_run.error());
  if (method == "PATCH") {
    if (path.name.empty() || (!path.subresource.empty() && path.subresource != "status") || !allows(type, "patch")) {
      return send_error(response, method_not_allowed());
    }
    std::optional<PatchType> patch_type = patch_type_for(request.get_header_value("Content-Type"));
    if (!patch_type) return send_error(response, unsupported_media_type(std::string(kPatchContentTypes)));
    ApiResult<ObjectPtr> patched = api_.patch(type, path.namespace_name, path.name, *patch_type, request.body,
                                              path.subresource == "status", *is_dry_run);
    if (!patched) return send_error(response, patched.error());
    return send_json(response, 200, wire_json(**patched));
  }
  ApiResult<json> body = parse_body(request);
  if (!body) return send_error(response, body.error());
  if (method == "POST") {
    if (path.subresource == "binding" || (path.name.empty() && type.plural == "bindings" && type.group.empty())) {
      const std::string pod = path.name.empty() ? body->value("metadata", json::object()).value("name", "") : path.name;
      ApiResult<Ok> bound = api_.bind(path.namespace_name, pod, *body);
      if (!bound) return send_error(response, bound.error());
      return send_json(response, 201, wire_json(success_status(201)));
    }
    if (path.subresource == "eviction") {
      ApiResult<Ok> evicted = api_.evict(path.namespace_name, path.name, *body);
      if (!evicted) return send_error(response, evicted.error());
      return send_json(response, 201, wire_json(success_status(201)));
    }
    if (!path.name.empty() || !allows(type, "create")) return send_error(response, method_not_allowed());
    ApiResult<ObjectPtr> created = api_.create(type, path.namespace_name, std::move(*body), *is_dry_run);
    if (!created) return send_error(response, created.error());
    return send_json(response, 201, wire_json(**created));
  }
  if (method == "PUT") {
    if (path.name.empty() || (!path.subresource.empty() && path.subresource != "status") || !allows(type, "update")) {
      return send_error(response, method_not_allowed());
    }
    ApiResult<ObjectPtr> updated =
        api_.update(type, path.namespace_name, path.name, std::move(*body), path.subresource == "status", *is_dry_run);
    if (!updated) return send_error(response, updated.error());
    return send_json(response, 200, wire_json(**updated));
  }
  send_error(response, method_not_allowed());
}

void HttpRoutes::handle_delete(const httplib::Request& request, httplib::Response& response, const ResourceType& type,
                               const ResourcePath& path) {
  DeleteOptions options;
  ApiResult<bool> is_dry_run = dry_run(request);
  if (!is_dry_run) return send_error(response, is_dry_run.error());
  options.dry_run = *is_dry_run;
  if (!request.body.empty()) {
    ApiResult<json> body = parse_body(request);
    if (!body) return send_error(response, body.error());
    if (!body->is_object()) return send_error(response, bad_request("the body of a delete must be DeleteOptions"));
    if (body->contains("gracePeriodSeconds") && (*body)["gracePeriodSeconds"].is_number_integer()) {
      options.grace_period_seconds = (*body)["gracePeriodSeconds"].get<int64_t>();
    }
    const json preconditions = body->value("preconditions", json::object());
    if (preconditions.is_object()) {
      options.precondition_uid = preconditions.value("uid", "");
      options.precondition_resource_version = preconditions.value("resourceVersion", "");
    }
    if (body->contains("dryRun") && (*body)["dryRun"].is_array() && !(*body)["dryRun"].empty()) options.dry_run = true;
  }
  const std::string grace = param(request, "gracePeriodSeconds");
  if (!grace.empty()) {
    try {
      options.grace_period_seconds = std::stoll(grace);
    } catch (const std::exception&) {
      return send_error(response, bad_request(fmt::format("gracePeriodSeconds: Invalid value: \"{}\"", grace)));
    }
  }
  if (path.name.empty()) {
    ApiResult<ListOptions> selection = list_options(request);
    if (!selection) return send_error(response, selection.error());
    ApiResult<std::vector<ObjectPtr>> deleted = api_.remove_collection(type, path.namespace_name, *selection, options);
    if (!deleted) return send_error(response, deleted.error());
    ListPage page;
    page.items = std::move(*deleted);
    page.revision = api_.store().revision();
    return send_json(response, 200, encode_list(type, page, Output{}, IncludeObject::kMetadata));
  }
  ApiResult<DeleteOutcome> outcome = api_.remove(type, path.namespace_name, path.name, options);
  if (!outcome) return send_error(response, outcome.error());
  send_json(response, outcome->removed ? 200 : 202, wire_json(*outcome->object));
}

}  // namespace tessera::apiserver
