#include "admission/admission_review.h"

#include <fmt/format.h>

#include "wire/base64.h"

namespace tessera::admission {

Result<nlohmann::json> review_gpu_memory(const nlohmann::json& review, const GpuMemoryLayout& layout) {
  using nlohmann::json;
  if (!review.is_object()) return Error{"AdmissionReview: the body is not a JSON object"};
  if (review.value("apiVersion", "") != "admission.k8s.io/v1" || review.value("kind", "") != "AdmissionReview") {
    return Error{fmt::format("AdmissionReview: apiVersion/kind are {}/{}, expected admission.k8s.io/v1/AdmissionReview",
                             review.value("apiVersion", "(none)"), review.value("kind", "(none)"))};
  }
  auto request = review.find("request");
  if (request == review.end() || !request->is_object()) return Error{"AdmissionReview: no request object"};
  auto uid = request->find("uid");
  if (uid == request->end() || !uid->is_string() || uid->get<std::string>().empty()) {
    return Error{"AdmissionReview: request.uid is missing"};
  }

  json response{{"uid", *uid}, {"allowed", true}};
  const json kind = request->value("kind", json::object());
  const bool pod_create = request->value("operation", "") == "CREATE" && kind.value("group", "x").empty() &&
                          kind.value("kind", "") == "Pod";
  if (pod_create) {
    auto object = request->find("object");
    if (object == request->end() || !object->is_object()) {
      return Error{"AdmissionReview: request.object is missing for a Pod CREATE"};
    }
    Injection injection = gpu_memory_injection(*object, layout);
    if (!injection.patch.empty()) {
      response["patchType"] = "JSONPatch";
      response["patch"] = wire::encode_base64(injection.patch.dump());
    }
    if (!injection.warnings.empty()) response["warnings"] = injection.warnings;
  }
  return json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"response", std::move(response)}};
}

}  // namespace tessera::admission
