#include "gpumem/ledger_report.h"

#include <cinttypes>
#include <cstdio>

namespace tessera::gpumem {
namespace {

void append(std::string& text, const char* format, auto... values) {
  char line[512];
  std::snprintf(line, sizeof(line), format, values...);
  text += line;
}

}  // namespace

std::string ledger_report(Ledger& ledger) {
  LedgerLayout& layout = ledger.layout();
  std::string text;
  const std::int64_t now = monotonic_ns();
  for (int device = 0; device < kMaxDevices; ++device) {
    DeviceRecord& record = layout.devices[device];
    LedgerLock lock(
        record.lock, [](LedgerLayout&, int) {}, layout, device);
    if (record.capacity == 0 && record.used == 0 && record.committed == 0) continue;
    append(text, "device=%d capacity=%" PRIu64 " used=%" PRIu64 " committed=%" PRIu64 " peak_used=%" PRIu64 "\n",
           device, record.capacity, record.used, record.committed, record.peak_used);
    for (const EntryRecord& entry : layout.entries) {
      if (entry.state != kSlotLive || entry.device != device) continue;
      append(text,
             "entry device=%d uid=%s name=%s priority=%d resolver=%s request=%" PRIu64 " limit=%" PRIu64
             " used=%" PRIu64 " peak_used=%" PRIu64 " grants=%" PRIu64 " waits=%" PRIu64 " wait_ooms=%" PRIu64
             " limit_ooms=%" PRIu64 " evictions=%" PRIu64 " in_host=%" PRIu64 " swap_outs=%" PRIu64 " swap_ins=%" PRIu64
             " moved_out=%u idle_s=%" PRId64 "\n",
             device, entry.uid, entry.name, entry.priority, resolver_name(entry.resolver), entry.request, entry.limit,
             entry.used, entry.peak_used, entry.grants, entry.waits, entry.wait_ooms, entry.limit_ooms, entry.evictions,
             entry.in_host, entry.swap_outs, entry.swap_ins, entry.moved_out,
             (now - entry.last_active_ns) / 1000000000);
    }
  }
  int live = 0;
  for (int slot = 0; slot < kMaxProcesses; ++slot) {
    if (layout.processes[slot].state == kSlotLive) ++live;
  }
  append(text, "processes=%d\n", live);
  return text;
}

}  // namespace tessera::gpumem
