// tessera-gpumem-ledger: prints a node's GPU memory ledger, after reclaiming what dead processes
// held (`--no-reclaim` leaves it as it is). Depends on libc only, like the interposer, so that it
// can be built wherever the interposer is.
//   tessera-gpumem-ledger [--no-reclaim] [LEDGER_PATH]
#include <cstdio>
#include <cstring>
#include <string>

#include "gpumem/ledger_report.h"
#include "gpumem/pod_settings.h"

int main(int argc, char** argv) {
  bool reclaim = true;
  std::string path = tessera::gpumem::kDefaultLedgerPath;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-reclaim") == 0)
      reclaim = false;
    else
      path = argv[i];
  }
  std::string error;
  auto ledger = tessera::gpumem::Ledger::open(path, &error);
  if (!ledger) {
    std::fprintf(stderr, "tessera-gpumem-ledger: %s\n", error.c_str());
    return 1;
  }
  if (reclaim) std::printf("reclaimed=%llu\n", static_cast<unsigned long long>(ledger->reclaim_dead_processes()));
  std::fputs(tessera::gpumem::ledger_report(*ledger).c_str(), stdout);
  return 0;
}
