#include "core/task_request.h"

#include <sstream>

#include "core/key_value.h"
#include "core/task_binding.h"

namespace trellis {

std::string encode_task_request(const TaskRequest& r) {
  std::string out;
  auto add = [&](std::string_view key, const std::string& value) {
    if (!out.empty()) out += ' ';
    out += key;
    out += '=';
    out += value;
  };
  if (r.ntasks != 0) add("ntasks", std::to_string(r.ntasks));
  if (r.per_node != 0) add("per_node", std::to_string(r.per_node));
  if (r.distribution != Distribution::kBlock)
    add("distribution", std::string(distribution_name(r.distribution)));
  if (!r.mpi.empty()) add("mpi", r.mpi);
  if (r.label) add("label", "1");
  if (!r.cpu_bind.empty()) add("cpu_bind", r.cpu_bind);
  if (!r.gpu_bind.empty()) add("gpu_bind", r.gpu_bind);
  return out;
}

Result<TaskRequest> decode_task_request(std::string_view text) {
  TaskRequest r;
  std::istringstream tokens{std::string(text)};
  for (std::string token; tokens >> token;) {
    size_t eq = token.find('=');
    if (eq == std::string::npos) return fail("task request: '" + token + "' is not key=value");
    std::string key = token.substr(0, eq), value = token.substr(eq + 1);
    auto whole = [&](int& into) -> Status {
      Result<long> n = parse_whole_number(value);
      if (!n || *n < 0 || *n > kMaxTasks)
        return fail("task request: " + key + "='" + value + "' is not a count");
      into = static_cast<int>(*n);
      return Ok{};
    };
    if (key == "ntasks") {
      if (Status s = whole(r.ntasks); !s) return s.error();
    } else if (key == "per_node") {
      if (Status s = whole(r.per_node); !s) return s.error();
    } else if (key == "distribution") {
      Result<Distribution> d = parse_distribution(value);
      if (!d) return fail("task request: " + d.error().message);
      r.distribution = *d;
    } else if (key == "mpi") {
      r.mpi = value;
    } else if (key == "label") {
      r.label = value == "1";
    } else if (key == "cpu_bind") {
      Result<CpuBind> bind = parse_cpu_bind(value);
      if (!bind) return fail("task request: " + bind.error().message);
      r.cpu_bind = cpu_bind_text(*bind);
    } else if (key == "gpu_bind") {
      Result<GpuBind> bind = parse_gpu_bind(value);
      if (!bind) return fail("task request: " + bind.error().message);
      r.gpu_bind = gpu_bind_text(*bind);
    } else {
      return fail("task request: unknown field '" + key + "'");
    }
  }
  return r;
}

}  // namespace trellis
