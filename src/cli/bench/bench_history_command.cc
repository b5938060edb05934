// trellis bench history: accounting queries on a store of a million finished jobs against a scan
// of the same store (bench/history_bench.h).
#include <iostream>

#include "bench/history_bench.h"
#include "cli/commands.h"

namespace trellis::cli {

void add_bench_history_command(CLI::App& app, int& status) {
  CLI::App* bench = &bench_family(app);
  auto options = std::make_shared<bench::HistoryBenchOptions>();
  auto* h = bench->add_subcommand(
      "history",
      "sacct's one-user one-day query over a store of finished jobs (1,000,000 by default), with\n"
      "the accounting indexes and without them (a scan), on SQLite and with --postgres also on a\n"
      "private PostgreSQL server.");
  h->add_option("--jobs", options->jobs, "Finished jobs in the store")
      ->check(CLI::Range(1000L, 100000000L));
  h->add_option("--users", options->users, "Users they belong to")->check(CLI::Range(1, 100000));
  h->add_option("--days", options->days, "Days they were submitted over")
      ->check(CLI::Range(2, 100000));
  h->add_option("--queries", options->queries, "Timed queries")->check(CLI::Range(1, 10000));
  h->add_flag("--postgres", options->postgres, "Also on PostgreSQL");
  h->callback([options, &status] { status = bench::run_history_bench(*options, std::cout); });
}

}  // namespace trellis::cli
