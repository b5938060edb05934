#include "sched/gang/slurm_gang.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace trellis::gang {

Result<std::unique_ptr<SlurmGang>> SlurmGang::make(std::string name, int processors,
                                                   int max_jobs_per_node) {
  if (processors < 1 || !std::has_single_bit(static_cast<unsigned>(processors)))
    return fail("slurm-gang: the machine must have a power-of-two number of processors, got " +
                std::to_string(processors));
  if (max_jobs_per_node < 1)
    return fail("slurm-gang: max jobs per node must be at least 1, got " +
                std::to_string(max_jobs_per_node));
  return std::unique_ptr<SlurmGang>(new SlurmGang(std::move(name), processors, max_jobs_per_node));
}

SlurmGang::SlurmGang(std::string name, int processors, int max_jobs_per_node)
    : name_(std::move(name)),
      processors_(processors),
      max_jobs_per_node_(max_jobs_per_node),
      jobs_on_(processors, 0),
      row_nodes_(processors) {}

Status SlurmGang::submit(JobId job, int size) {
  if (size < 1 || size > processors_)
    return fail("job " + std::to_string(job) + ": size " + std::to_string(size) +
                " is outside 1.." + std::to_string(processors_) + " processors");
  pending_.emplace_back(job, static_cast<int>(std::bit_ceil(static_cast<unsigned>(size))));
  admit_pending();
  return Ok{};
}

int SlurmGang::choose_block(int block) const {
  int best = -1;
  int best_load = max_jobs_per_node_;
  for (int first = 0; first < processors_; first += block) {
    int busiest = *std::max_element(jobs_on_.begin() + first, jobs_on_.begin() + first + block);
    if (busiest < best_load) {
      best = first;
      best_load = busiest;
    }
  }
  return best;
}

void SlurmGang::add_load(int first, int size, int delta) {
  for (int p = first; p < first + size; ++p) jobs_on_[p] += delta;
  auto [lo, hi] = std::minmax_element(jobs_on_.begin(), jobs_on_.end());
  load_ = LoadIndex{*hi, *lo};
}

void SlurmGang::admit_pending() {
  while (!pending_.empty()) {
    auto [job, block] = pending_.front();
    int first = choose_block(block);
    if (first < 0) return;  // FIFO: the head waits, and everything behind it
    pending_.pop_front();
    admitted_[job] = Admitted{first, block, false};
    add_load(first, block, +1);
    rotation_.push_back(job);
  }
}

const std::vector<SlotJob>& SlurmGang::next_slot() {
  row_.clear();
  row_nodes_.clear();
  std::deque<JobId> left_out;
  std::deque<JobId> ran;
  for (JobId job : rotation_) {
    const Admitted& a = admitted_.at(job);
    NodeId hit = row_nodes_.next(a.first);
    if (hit >= 0 && hit < a.first + a.size) {
      left_out.push_back(job);
      continue;
    }
    row_nodes_.set_range(a.first, a.first + a.size);
    row_.push_back(SlotJob{job, a.first, a.size});
    ran.push_back(job);
  }
  rotation_ = std::move(left_out);
  rotation_.insert(rotation_.end(), ran.begin(), ran.end());
  std::sort(row_.begin(), row_.end(),
            [](const SlotJob& a, const SlotJob& b) { return a.first < b.first; });
  return row_;
}

void SlurmGang::finish(JobId job) {
  auto it = admitted_.find(job);
  assert(it != admitted_.end() && "finish() of a job that was never admitted");
  add_load(it->second.first, it->second.size, -1);
  if (!it->second.suspended) rotation_.erase(std::find(rotation_.begin(), rotation_.end(), job));
  admitted_.erase(it);
  admit_pending();
}

bool SlurmGang::suspend(JobId job) {
  auto& a = admitted_.at(job);
  assert(!a.suspended);
  a.suspended = true;
  rotation_.erase(std::find(rotation_.begin(), rotation_.end(), job));
  return true;
}

void SlurmGang::resume(JobId job) {
  auto& a = admitted_.at(job);
  assert(a.suspended);
  a.suspended = false;
  rotation_.push_front(job);  // its input has arrived: run it at the next slice if it fits
}

LoadIndex SlurmGang::load() const {
  return load_;
}

}  // namespace trellis::gang
