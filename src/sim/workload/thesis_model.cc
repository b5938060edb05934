#include "sim/workload/thesis_model.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

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
  if (!rest.empty() && rest.front() == ':') rest.remove_prefix(1);
  while (!rest.empty()) {
    std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return fail("generator '" + std::string(spec) + "': '" + std::string(item) +
                  "' is not KEY=VALUE");
    std::string key(item.substr(0, eq));
    std::string value(item.substr(eq + 1));
    auto number = [&](double& out) -> Status {
      try {
        std::size_t used = 0;
        out = std::stod(value, &used);
        if (used != value.size()) throw std::invalid_argument(value);
      } catch (const std::exception&) {
        return fail("generator '" + std::string(spec) + "': " + key + "=" + value +
                    " is not a number");
      }
      return Ok{};
    };
    double x = 0;
    Status ok = Ok{};
    if (key == "sizes") {
      auto d = parse_size_distribution(value);
      if (!d) return d.error();
      m.sizes = *d;
    } else if (key == "service") {
      auto d = parse_service_distribution(value);
      if (!d) return d.error();
      m.service = *d;
    } else if (key == "load") {
      ok = number(m.load);
    } else if (key == "mean") {
      ok = number(m.mean_service);
    } else if (key == "min") {
      ok = number(m.service_min);
    } else if (key == "max") {
      ok = number(m.service_max);
    } else if (key == "duration") {
      ok = number(m.arrival_end);
    } else if (key == "gradient") {
      ok = number(m.gradient_start);
      m.gradient = true;
    } else if (key == "seed" || key == "min_size" || key == "max_size") {
      ok = number(x);
      if (ok && (x < 0 || x != std::floor(x)))
        return fail("generator '" + std::string(spec) + "': " + key + " must be a whole number");
      if (key == "seed") m.seed = static_cast<uint64_t>(x);
      if (key == "min_size") m.min_size = static_cast<int>(x);
      if (key == "max_size") m.max_size = static_cast<int>(x);
    } else {
      return fail("generator '" + std::string(spec) + "': unknown key '" + key +
                  "' (known: load, sizes, service, mean, min, max, duration, seed, gradient, "
                  "min_size, max_size)");
    }
    if (!ok) return ok.error();
  }
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
