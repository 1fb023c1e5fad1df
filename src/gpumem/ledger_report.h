// The ledger as text, for people and scripts: a `key=value` line per device and per entry.
#pragma once

#include <string>

#include "gpumem/ledger.h"

namespace tessera::gpumem {

// Reads under the locks, so each device's and entry's numbers are consistent with themselves.
std::string ledger_report(Ledger& ledger);

}  // namespace tessera::gpumem
