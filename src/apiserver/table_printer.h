// Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for (Accept:
// application/json;as=Table;v=v1;g=meta.k8s.io). Built-in kinds print the columns the real
// server prints (pods: NAME READY STATUS RESTARTS AGE, and IP NODE... with -o wide); custom
// resources print their CRD's additionalPrinterColumns; anything else NAME and AGE.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "apiserver/resource_type.h"
#include "wire/timestamp.h"

namespace tessera::apiserver {

using wire::WallClock;

// What each row carries in `object` (?includeObject=).
enum class IncludeObject { kNone, kMetadata, kObject };

// A Table of `objects` (its metadata left empty for the caller to fill).
nlohmann::json make_table(const ResourceType& type, const std::vector<const nlohmann::json*>& objects,
                          IncludeObject include, WallClock::time_point now);

}  // namespace tessera::apiserver
