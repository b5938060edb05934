#include "alloc/linear/ring_packing.h"

#include <algorithm>
#include <cassert>

namespace trellis {

std::vector<FreeInterval> free_intervals(const NodeSet& free_ranks, bool ring) {
  const int n = free_ranks.size();
  std::vector<FreeInterval> runs;
  for (int r = free_ranks.next(0); r >= 0 && r < n;) {
    int end = free_ranks.next_absent(r);
    runs.push_back({r, end - r});
    if (end >= n) break;
    r = free_ranks.next(end);
  }
  if (ring && runs.size() >= 2 && runs.front().start == 0 &&
      runs.back().start + runs.back().length == n) {
    runs.back().length += runs.front().length;
    runs.erase(runs.begin());
  }
  return runs;  // already sorted by start: the merged run keeps its high start, last
}

std::optional<FreeInterval> choose_interval(const std::vector<FreeInterval>& intervals, int k,
                                            IntervalFit fit) {
  // Sum of squares after a placement changes only in the counts of the chosen interval's size L
  // and of its remainder m = L - k, so keep a histogram and evaluate each candidate in O(1).
  std::vector<long> histogram;
  long sum_squares = 0;
  if (fit == IntervalFit::kSumOfSquares) {
    int longest = 0;
    for (const auto& iv : intervals) longest = std::max(longest, iv.length);
    histogram.assign(longest + 1, 0);
    for (const auto& iv : intervals) ++histogram[iv.length];
    for (long h : histogram) sum_squares += h * h;
  }
  std::optional<FreeInterval> best;
  long best_cost = 0;
  for (const auto& iv : intervals) {  // in start order: strict '<' keeps the lowest start
    if (iv.length < k) continue;
    long cost = 0;
    switch (fit) {
      case IntervalFit::kFirst:
        return iv;
      case IntervalFit::kBest:
        cost = iv.length - k;
        break;
      case IntervalFit::kSumOfSquares: {
        long h = histogram[iv.length];
        cost = sum_squares - h * h + (h - 1) * (h - 1);
        int m = iv.length - k;
        if (m > 0) {
          long hm = histogram[m];  // m != L since k >= 1
          cost += (hm + 1) * (hm + 1) - hm * hm;
        }
        break;
      }
    }
    if (!best || cost < best_cost) {
      best = iv;
      best_cost = cost;
    }
  }
  return best;
}

std::vector<int> place_in_interval(const FreeInterval& interval, int k, int n) {
  std::vector<int> ranks(k);
  for (int j = 0; j < k; ++j) ranks[j] = (interval.start + j) % n;
  return ranks;
}

std::vector<int> min_span(const NodeSet& free_ranks, int k, bool ring) {
  const int n = free_ranks.size();
  std::vector<int> f = free_ranks.to_vector();
  const int m = static_cast<int>(f.size());
  assert(k >= 1 && k <= m);
  // Window i holds free ranks f[i..i+k-1], wrapping past the seam on a ring.
  const int windows = ring && k < m ? m : m - k + 1;
  int best_i = 0, best_span = -1;
  for (int i = 0; i < windows; ++i) {
    int j = i + k - 1;
    int last = j < m ? f[j] : f[j - m] + n;
    int span = last - f[i];
    if (best_span < 0 || span < best_span) {  // i ascends, so ties keep the lowest first rank
      best_span = span;
      best_i = i;
    }
  }
  std::vector<int> ranks(k);
  for (int t = 0; t < k; ++t) ranks[t] = f[(best_i + t) % m];
  return ranks;
}

int curve_span(const std::vector<int>& ranks, int n, bool ring) {
  if (ranks.empty()) return 0;
  std::vector<int> r = ranks;
  std::sort(r.begin(), r.end());
  int line = r.back() - r.front();
  if (!ring) return line;
  // The shortest arc holding all ranks leaves out the largest gap between neighbours.
  int largest_gap = n - r.back() + r.front();  // the gap through the seam
  for (size_t i = 1; i < r.size(); ++i) largest_gap = std::max(largest_gap, r[i] - r[i - 1]);
  return n - largest_gap;
}

}  // namespace trellis
