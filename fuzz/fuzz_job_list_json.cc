// The JSON job list of `trellis sim --workload jobs.json` (sim/workload.h): any text parses or
// gets an error, and the jobs of a parsed list are sorted and sane.
#include "fuzz_support.h"
#include "sim/workload.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<Workload> workload =
      parse_job_list_json(std::string(fuzz::as_text(data, size)), "fuzz.json");
  if (!workload) {
    FUZZ_CHECK(!workload.error().message.empty(), "an error with no message");
    return 0;
  }
  for (size_t i = 0; i < workload->jobs.size(); ++i) {
    const Job& job = workload->jobs[i];
    FUZZ_CHECK(job.request.nodes >= 1, "job " + std::to_string(job.id) + " asks for no nodes");
    FUZZ_CHECK(job.run_time >= 0, "job " + std::to_string(job.id) + " has a negative run time");
    if (i > 0) {
      const Job& before = workload->jobs[i - 1];
      FUZZ_CHECK(before.submit < job.submit || (before.submit == job.submit && before.id < job.id),
                 "jobs out of order at " + std::to_string(i));
    }
  }
  return 0;
}
