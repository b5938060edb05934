#include "core/task_binding.h"

#include <algorithm>
#include <set>

#include "core/id_ranges.h"
#include "core/key_value.h"

namespace trellis {
namespace {

// Splits "a,b,c" at commas that are not inside a map list: "verbose,map_cpu:0,2" is {"verbose",
// "map_cpu:0,2"} (a map's list runs to the end).
std::vector<std::string> bind_words(std::string_view text) {
  std::vector<std::string> words;
  while (!text.empty()) {
    if (text.starts_with("map_cpu:")) {
      words.emplace_back(text);
      break;
    }
    size_t comma = text.find(',');
    words.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return words;
}

std::string joined(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

std::string ranges(const std::vector<int>& ids) {
  return format_id_ranges(std::vector<int64_t>(ids.begin(), ids.end()));
}

}  // namespace

Result<CpuBind> parse_cpu_bind(std::string_view text) {
  CpuBind bind;
  for (const std::string& word : bind_words(text)) {
    if (word.empty() || word == "q" || word == "quiet" || word == "v" || word == "verbose")
      continue;
    if (word == "none" || word == "no") {
      bind.kind = CpuBind::Kind::kNone;
    } else if (word == "cores") {
      bind.kind = CpuBind::Kind::kCores;
    } else if (word == "threads") {
      bind.kind = CpuBind::Kind::kThreads;
    } else if (word.starts_with("map_cpu:")) {
      bind.kind = CpuBind::Kind::kMapCpu;
      std::string_view list = std::string_view(word).substr(8);
      while (!list.empty()) {
        size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        Result<long> cpu = parse_whole_number(std::string(item));
        if (!cpu || *cpu < 0 || *cpu > 1 << 20)
          return fail("--cpu-bind: map_cpu: '" + std::string(item) + "' is not a CPU id");
        bind.map.push_back(static_cast<int>(*cpu));
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
      if (bind.map.empty()) return fail("--cpu-bind: map_cpu: names no CPU");
    } else {
      return fail("--cpu-bind: '" + word +
                  "' is not taken (none, cores, threads, map_cpu:LIST; quiet, verbose)");
    }
  }
  return bind;
}

Result<GpuBind> parse_gpu_bind(std::string_view text) {
  GpuBind bind;
  for (const std::string& word : bind_words(text)) {
    if (word.empty() || word == "verbose") continue;
    if (word == "none") {
      bind.kind = GpuBind::Kind::kNone;
    } else if (word == "closest") {
      bind.kind = GpuBind::Kind::kClosest;
    } else if (word.starts_with("per_task:")) {
      Result<long> n = parse_whole_number(word.substr(9));
      if (!n || *n < 1 || *n > 1024)
        return fail("--gpu-bind: per_task: '" + word.substr(9) + "' is not a GPU count");
      bind.kind = GpuBind::Kind::kPerTask;
      bind.per_task = static_cast<int>(*n);
    } else {
      return fail("--gpu-bind: '" + word + "' is not taken (none, closest, per_task:N; verbose)");
    }
  }
  return bind;
}

std::string cpu_bind_text(const CpuBind& bind) {
  switch (bind.kind) {
    case CpuBind::Kind::kAuto:
      return "";
    case CpuBind::Kind::kNone:
      return "none";
    case CpuBind::Kind::kCores:
      return "cores";
    case CpuBind::Kind::kThreads:
      return "threads";
    case CpuBind::Kind::kMapCpu:
      return "map_cpu:" + joined(bind.map);
  }
  return "";
}

std::string gpu_bind_text(const GpuBind& bind) {
  switch (bind.kind) {
    case GpuBind::Kind::kAuto:
      return "";
    case GpuBind::Kind::kNone:
      return "none";
    case GpuBind::Kind::kClosest:
      return "closest";
    case GpuBind::Kind::kPerTask:
      return "per_task:" + std::to_string(bind.per_task);
  }
  return "";
}

Result<std::vector<TaskPlacement>> place_tasks(const NodeInventory& node, const NodeGrant& grant,
                                               const BindingRequest& request,
                                               std::string_view node_name) {
  const int tasks = std::max(request.tasks, 1);
  const int per_task = std::max(request.cpus_per_task, 1);
  const int threads = std::max(node.threads_per_core, 1);
  const std::string on = " on " + std::string(node_name);
  std::vector<TaskPlacement> placed(static_cast<size_t>(tasks));

  // The job's CPUs here, core by core.
  std::vector<int> job_cpus;
  for (int core : grant.cores)
    for (int t = 0; t < threads; ++t) job_cpus.push_back(core * threads + t);

  CpuBind::Kind cpu = request.cpu.kind;
  if (cpu == CpuBind::Kind::kAuto)
    cpu = !request.whole_node && tasks * per_task <= static_cast<int>(grant.cores.size())
              ? CpuBind::Kind::kCores
              : CpuBind::Kind::kNone;
  switch (cpu) {
    case CpuBind::Kind::kAuto:
    case CpuBind::Kind::kNone:
      break;
    case CpuBind::Kind::kCores: {
      const int have = static_cast<int>(grant.cores.size());
      if (tasks * per_task > have)
        return fail("--cpu-bind=cores: " + std::to_string(tasks) + " tasks x " +
                    std::to_string(per_task) + " cores, the job has " + std::to_string(have) + on);
      for (int i = 0; i < tasks; ++i)
        for (int k = 0; k < per_task; ++k)
          for (int t = 0; t < threads; ++t)
            placed[i].cpus.push_back(grant.cores[i * per_task + k] * threads + t);
      break;
    }
    case CpuBind::Kind::kThreads: {
      const int have = static_cast<int>(job_cpus.size());
      if (tasks * per_task > have)
        return fail("--cpu-bind=threads: " + std::to_string(tasks) + " tasks x " +
                    std::to_string(per_task) + " threads, the job has " + std::to_string(have) +
                    on);
      for (int i = 0; i < tasks; ++i)
        for (int k = 0; k < per_task; ++k) placed[i].cpus.push_back(job_cpus[i * per_task + k]);
      break;
    }
    case CpuBind::Kind::kMapCpu: {
      const std::set<int> mine(job_cpus.begin(), job_cpus.end());
      for (int id : request.cpu.map)
        if (!mine.count(id))
          return fail("--cpu-bind=map_cpu: CPU " + std::to_string(id) + " is not one of the job's" +
                      on + " (" + ranges(job_cpus) + ")");
      for (int i = 0; i < tasks; ++i)
        placed[i].cpus.push_back(request.cpu.map[i % request.cpu.map.size()]);
      break;
    }
  }

  GpuBind gpu = request.gpu;
  if (gpu.kind == GpuBind::Kind::kAuto)
    gpu = request.gpus_per_task > 0 ? GpuBind{GpuBind::Kind::kPerTask, request.gpus_per_task}
                                    : GpuBind{GpuBind::Kind::kNone, 0};
  const std::vector<int>& gpus = grant.gpus;
  for (int i = 0; i < tasks; ++i) {
    TaskPlacement& p = placed[i];
    if (gpus.empty() || gpu.kind == GpuBind::Kind::kNone) {
      p.gpus = gpus;
    } else if (gpu.kind == GpuBind::Kind::kPerTask) {
      std::set<int> chosen;
      const int take = std::min<int>(gpu.per_task, static_cast<int>(gpus.size()));
      for (int k = 0; k < take; ++k)
        chosen.insert(gpus[static_cast<size_t>(i * gpu.per_task + k) % gpus.size()]);
      p.gpus.assign(chosen.begin(), chosen.end());
    } else {  // closest: the GPUs on the NUMA node of the task's first core
      const int first_core = !p.cpus.empty() ? p.cpus.front() / threads
                                             : (grant.cores.empty() ? 0 : grant.cores.front());
      const int numa = node.numa_of(first_core);
      for (int g : gpus)
        if (g >= 0 && g < static_cast<int>(node.gpus.size()) && node.gpus[g].numa == numa)
          p.gpus.push_back(g);
      if (p.gpus.empty()) p.gpus = gpus;
    }
  }
  return placed;
}

std::string encode_task_sets(const std::vector<std::vector<int>>& sets) {
  std::string out;
  for (size_t i = 0; i < sets.size(); ++i) {
    if (i > 0) out += '/';
    out += ranges(sets[i]);
  }
  return out;
}

Result<std::vector<std::vector<int>>> decode_task_sets(std::string_view text) {
  std::vector<std::vector<int>> sets;
  for (size_t task = 0;; ++task) {
    const size_t slash = text.find('/');
    Result<std::vector<int>> ids = parse_id_ranges(text.substr(0, slash), 1 << 16);
    if (!ids) return fail("task " + std::to_string(task) + ": " + ids.error().message);
    sets.push_back(std::move(*ids));
    if (slash == std::string_view::npos) break;
    text.remove_prefix(slash + 1);
  }
  return sets;
}

}  // namespace trellis
