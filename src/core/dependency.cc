#include "core/dependency.h"

#include <charconv>

namespace trellis {
namespace {

constexpr DependencyKind kKinds[] = {DependencyKind::kAfter, DependencyKind::kAfterAny,
                                     DependencyKind::kAfterOk, DependencyKind::kAfterNotOk,
                                     DependencyKind::kSingleton};

// The most targets one dependency may name, so that a request cannot make evaluation costly.
constexpr size_t kMaxTargets = 1024;

Result<int64_t> number(std::string_view text, std::string_view what, std::string_view in) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value <= 0 ||
      value > (int64_t{1} << 53))
    return fail("--dependency: '" + std::string(in) + "': " + std::string(what) + " '" +
                std::string(text) + "' is not a positive number");
  return value;
}

Result<DependencyTarget> parse_target(std::string_view text, std::string_view term) {
  if (text.find('+') != std::string_view::npos)
    return fail("--dependency: '" + std::string(term) +
                "': a time offset (+MINUTES) is not supported");
  DependencyTarget target;
  size_t underscore = text.find('_');
  Result<int64_t> job = number(text.substr(0, underscore), "job id", term);
  if (!job) return job.error();
  target.job = *job;
  if (underscore != std::string_view::npos) {
    std::string_view task = text.substr(underscore + 1);
    if (task != "*") {
      int value = 0;
      auto [end, ec] = std::from_chars(task.data(), task.data() + task.size(), value);
      if (task.empty() || ec != std::errc() || end != task.data() + task.size() || value < 0)
        return fail("--dependency: '" + std::string(term) + "': array task '" + std::string(task) +
                    "' is not a number >= 0 (or *)");
      target.task = value;
    }
  }
  return target;
}

}  // namespace

std::string_view to_string(DependencyKind kind) {
  switch (kind) {
    case DependencyKind::kAfter:
      return "after";
    case DependencyKind::kAfterAny:
      return "afterany";
    case DependencyKind::kAfterOk:
      return "afterok";
    case DependencyKind::kAfterNotOk:
      return "afternotok";
    case DependencyKind::kSingleton:
      return "singleton";
  }
  return "?";
}

Result<Dependency> parse_dependency(std::string_view text) {
  Dependency out;
  if (text.empty()) return out;
  bool comma = text.find(',') != std::string_view::npos;
  bool question = text.find('?') != std::string_view::npos;
  if (comma && question)
    return fail("--dependency: '" + std::string(text) +
                "' joins terms with both ',' (all) and '?' (any); use one of them");
  out.any = question;
  const char separator = question ? '?' : ',';
  size_t targets = 0;
  for (size_t from = 0; from <= text.size();) {
    size_t end = text.find(separator, from);
    std::string_view term =
        text.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from);
    from = end == std::string_view::npos ? text.size() + 1 : end + 1;
    if (term.empty()) return fail("--dependency: an empty term in '" + std::string(text) + "'");
    size_t colon = term.find(':');
    std::string_view name = term.substr(0, colon);
    DependencyTerm parsed;
    bool known = false;
    for (DependencyKind kind : kKinds)
      if (to_string(kind) == name) {
        parsed.kind = kind;
        known = true;
      }
    if (!known)
      return fail("--dependency: '" + std::string(name) +
                  "' is not a supported dependency type (after, afterany, afterok, afternotok, "
                  "singleton)");
    if (parsed.kind == DependencyKind::kSingleton) {
      if (colon != std::string_view::npos) return fail("--dependency: singleton takes no job ids");
      out.terms.push_back(std::move(parsed));
      continue;
    }
    if (colon == std::string_view::npos || colon + 1 == term.size())
      return fail("--dependency: '" + std::string(term) + "' names no job (e.g. " +
                  std::string(name) + ":12)");
    for (size_t at = colon + 1; at <= term.size();) {
      size_t next = term.find(':', at);
      std::string_view id =
          term.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at);
      at = next == std::string_view::npos ? term.size() + 1 : next + 1;
      Result<DependencyTarget> target = parse_target(id, term);
      if (!target) return target.error();
      parsed.targets.push_back(*target);
      if (++targets > kMaxTargets)
        return fail("--dependency: more than " + std::to_string(kMaxTargets) + " jobs named");
    }
    out.terms.push_back(std::move(parsed));
  }
  return out;
}

std::string format_dependency(const Dependency& dependency) {
  std::string out;
  for (const DependencyTerm& term : dependency.terms) {
    if (!out.empty()) out += dependency.any ? '?' : ',';
    out += to_string(term.kind);
    for (const DependencyTarget& target : term.targets) {
      out += ':' + std::to_string(target.job);
      if (target.task >= 0) out += '_' + std::to_string(target.task);
    }
  }
  return out;
}

DependencyState evaluate_dependency(
    const Dependency& dependency,
    const std::function<std::vector<DependencyJob>(const DependencyTarget&)>& jobs_of,
    const std::function<bool()>& singleton_clear) {
  auto term_state = [&](const DependencyTerm& term) {
    if (term.kind == DependencyKind::kSingleton)
      return singleton_clear() ? DependencyState::kSatisfied : DependencyState::kWaiting;
    DependencyState state = DependencyState::kSatisfied;
    for (const DependencyTarget& target : term.targets) {
      std::vector<DependencyJob> jobs = jobs_of(target);
      if (jobs.empty()) return DependencyState::kNeverSatisfied;
      bool all_started = true, all_ended = true, any_failed = false;
      for (const DependencyJob& job : jobs) {
        all_started = all_started && (job.started || job.ended);
        all_ended = all_ended && job.ended;
        any_failed = any_failed || (job.ended && !job.succeeded);
      }
      switch (term.kind) {
        case DependencyKind::kAfter:
          if (!all_started) state = DependencyState::kWaiting;
          break;
        case DependencyKind::kAfterAny:
          if (!all_ended) state = DependencyState::kWaiting;
          break;
        case DependencyKind::kAfterOk:
          if (any_failed) return DependencyState::kNeverSatisfied;
          if (!all_ended) state = DependencyState::kWaiting;
          break;
        case DependencyKind::kAfterNotOk:
          if (!all_ended) {
            state = DependencyState::kWaiting;
          } else if (!any_failed) {
            return DependencyState::kNeverSatisfied;
          }
          break;
        case DependencyKind::kSingleton:
          break;
      }
    }
    return state;
  };
  if (dependency.empty()) return DependencyState::kSatisfied;
  bool waiting = false;
  for (const DependencyTerm& term : dependency.terms) {
    DependencyState state = term_state(term);
    if (dependency.any) {
      if (state == DependencyState::kSatisfied) return DependencyState::kSatisfied;
      waiting = waiting || state == DependencyState::kWaiting;
    } else {
      if (state == DependencyState::kNeverSatisfied) return DependencyState::kNeverSatisfied;
      waiting = waiting || state == DependencyState::kWaiting;
    }
  }
  if (dependency.any) return waiting ? DependencyState::kWaiting : DependencyState::kNeverSatisfied;
  return waiting ? DependencyState::kWaiting : DependencyState::kSatisfied;
}

}  // namespace trellis
