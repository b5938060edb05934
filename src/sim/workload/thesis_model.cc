#include "sim/workload/thesis_model.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "core/key_value.h"

namespace trellis::workload {

namespace {

// Uniform in [0, 1) from the top 53 bits: the same numbers on every standard library.
double unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

int effective_max(const ThesisModel& m) {
  return m.max_size > 0 ? m.max_size : m.processors / 2;
}

std::vector<int> sizes_of(const ThesisModel& m) {
  std::vector<int> sizes;
  for (long s = 1; s <= effective_max(m); s *= 2)
    if (s >= m.min_size) sizes.push_back(static_cast<int>(s));
  return sizes;
}

double weight(SizeDistribution d, int size) {
  switch (d) {
    case SizeDistribution::kUniform:
      return 1.0;
    case SizeDistribution::kProportional:
      return size;
    case SizeDistribution::kInverse:
      return 1.0 / size;
  }
  return 1.0;
}

double mean_service(const ThesisModel& m) {
  return m.service == ServiceDistribution::kExponential ? m.mean_service
                                                        : (m.service_min + m.service_max) / 2;
}

}  // namespace

Result<SizeDistribution> parse_size_distribution(std::string_view text) {
  if (text == "uniform") return SizeDistribution::kUniform;
  if (text == "proportional") return SizeDistribution::kProportional;
  if (text == "inverse") return SizeDistribution::kInverse;
  return fail("size distribution '" + std::string(text) +
              "': expected uniform, proportional or inverse");
}

Result<ServiceDistribution> parse_service_distribution(std::string_view text) {
  if (text == "exponential") return ServiceDistribution::kExponential;
  if (text == "uniform") return ServiceDistribution::kUniform;
  return fail("service distribution '" + std::string(text) + "': expected exponential or uniform");
}

std::string_view to_string(SizeDistribution d) {
  switch (d) {
    case SizeDistribution::kUniform:
      return "uniform";
    case SizeDistribution::kProportional:
      return "proportional";
    case SizeDistribution::kInverse:
      return "inverse";
  }
  return "?";
}

std::string_view to_string(ServiceDistribution d) {
  return d == ServiceDistribution::kExponential ? "exponential" : "uniform";
}

Status validate(const ThesisModel& m) {
  if (m.processors < 2)
    return fail("thesis model: processors must be at least 2, got " + std::to_string(m.processors));
  if (m.min_size < 1)
    return fail("thesis model: min size must be at least 1, got " + std::to_string(m.min_size));
  if (effective_max(m) > m.processors)
    return fail("thesis model: max size " + std::to_string(effective_max(m)) +
                " exceeds the machine's " + std::to_string(m.processors) + " processors");
  if (sizes_of(m).empty())
    return fail("thesis model: no power-of-two size between min size " +
                std::to_string(m.min_size) + " and max size " + std::to_string(effective_max(m)));
  if (m.service == ServiceDistribution::kExponential && !(m.mean_service > 0))
    return fail("thesis model: mean service time must be positive");
  if (m.service == ServiceDistribution::kUniform &&
      !(0 < m.service_min && m.service_min <= m.service_max))
    return fail("thesis model: uniform service needs 0 < min <= max");
  if (!m.gradient && !(m.load > 0)) return fail("thesis model: load must be positive");
  if (m.gradient && !(m.gradient_start > 0 && m.gradient_step >= 0 && m.gradient_every > 0 &&
                      m.gradient_every <= 1))
    return fail("thesis model: gradient needs start > 0, step >= 0 and 0 < every <= 1");
  if (!(m.arrival_end > 0)) return fail("thesis model: arrival end must be positive");
  return Ok{};
}

Result<ThesisModel> parse_thesis_spec(std::string_view spec, int processors) {
  const std::string_view prefix = "thesis";
  if (spec.substr(0, prefix.size()) != prefix)
    return fail("generator '" + std::string(spec) + "': expected thesis:KEY=VALUE,...");
  ThesisModel m;
  m.processors = processors;
  std::string_view rest = spec.substr(prefix.size());
  if (!rest.empty() && rest.front() != ':')
    return fail("generator '" + std::string(spec) + "': expected thesis:KEY=VALUE,...");
  if (!rest.empty()) rest.remove_prefix(1);
  auto in_spec = [&](const Error& error) {
    return fail("generator '" + std::string(spec) + "': " + error.message);
  };
  KeyValueOptions options("workload generator");
  if (auto ok = options.add_list(rest); !ok) return in_spec(ok.error());
  if (auto ok = options.only({"load", "sizes", "service", "mean", "min", "max", "duration", "seed",
                              "gradient", "min_size", "max_size"},
                             "thesis");
      !ok)
    return in_spec(ok.error());
  if (auto text = options.get("sizes")) {
    auto d = parse_size_distribution(*text);
    if (!d) return d.error();
    m.sizes = *d;
  }
  if (auto text = options.get("service")) {
    auto d = parse_service_distribution(*text);
    if (!d) return d.error();
    m.service = *d;
  }
  for (auto [key, field] : {std::pair{"load", &m.load},
                            {"mean", &m.mean_service},
                            {"min", &m.service_min},
                            {"max", &m.service_max},
                            {"duration", &m.arrival_end},
                            {"gradient", &m.gradient_start}}) {
    auto value = options.number_above(key, *field, 0);
    if (!value) return in_spec(value.error());
    *field = *value;
  }
  m.gradient = options.get("gradient").has_value();
  auto seed = options.whole_number("seed", static_cast<long>(m.seed), 0);
  auto min_size = options.whole_number("min_size", m.min_size, 1);
  auto max_size = options.whole_number("max_size", m.max_size, 0);
  for (const auto* whole : {&seed, &min_size, &max_size})
    if (!*whole) return in_spec(whole->error());
  m.seed = static_cast<uint64_t>(*seed);
  m.min_size = static_cast<int>(*min_size);
  m.max_size = static_cast<int>(*max_size);
  if (auto valid = validate(m); !valid) return valid.error();
  return m;
}

double mean_size(const ThesisModel& m) {
  double total = 0, weighted = 0;
  for (int s : sizes_of(m)) {
    total += weight(m.sizes, s);
    weighted += weight(m.sizes, s) * s;
  }
  return weighted / total;
}

Result<std::vector<Job>> generate_thesis_workload(const ThesisModel& m) {
  if (auto ok = validate(m); !ok) return ok.error();
  std::mt19937_64 rng(m.seed);
  const std::vector<int> sizes = sizes_of(m);
  std::vector<double> cumulative;
  double total = 0;
  for (int s : sizes) cumulative.push_back(total += weight(m.sizes, s));
  const double demand_per_job = mean_size(m) * mean_service(m);

  auto load_at = [&](double t) {
    if (!m.gradient) return m.load;
    double step = std::floor(t / (m.gradient_every * m.arrival_end));
    return m.gradient_start + m.gradient_step * step;
  };

  std::vector<Job> jobs;
  double t = 0;
  for (JobId id = 1;; ++id) {
    double interval = demand_per_job / (m.processors * load_at(t));
    t += -std::log(1.0 - unit(rng)) * interval;
    if (t >= m.arrival_end) break;
    double pick = unit(rng) * total;
    auto at = std::upper_bound(cumulative.begin(), cumulative.end(), pick) - cumulative.begin();
    int size = sizes[std::min<std::size_t>(static_cast<std::size_t>(at), sizes.size() - 1)];
    double length = m.service == ServiceDistribution::kExponential
                        ? -std::log(1.0 - unit(rng)) * m.mean_service
                        : m.service_min + unit(rng) * (m.service_max - m.service_min);
    Job job;
    job.id = id;
    job.submit = m.whole_units ? std::floor(t) : t;
    job.run_time = m.whole_units ? std::max(1.0, std::round(length)) : length;
    job.time_limit = job.run_time;
    job.request = Request::count(size, PlacementMode::kNonContiguous);
    job.share = true;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace trellis::workload
