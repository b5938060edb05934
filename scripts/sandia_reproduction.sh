#!/usr/bin/env bash
# Reproduction of the Sandia allocator comparison (issue 12 item 5; docs/sandia-reproduction.md):
# first-available (lowest node ids, i.e. Cplant's old sorted free list: no space-filling curve)
# against the sorted free list ordered along a curve (snake = seed 004's number line, Hilbert) and
# against best-fit interval packing with the span-minimising fallback on the same curves, under
# EASY, with the run-time models trace, hop-bytes and congestion, on Red-Storm-like meshes that
# keep the z wrap. Prints per model and allocator: makespan, throughput (jobs per hour over the
# makespan and its change against first-available), mean response, mean wait, mean bounded
# slowdown and utilization, and writes them to OUTDIR/tables.md. One more column, "work saved",
# is first-available's node-hours held (utilization x makespan x nodes, run times as inflated)
# over the allocator's, minus 1: the capacity the placement saves, which unlike the makespan does
# not hinge on when the last long job happens to start.
#
#   scripts/sandia_reproduction.sh [TRELLIS] [OUTDIR]     (defaults build/release/trellis, out/sandia)
#
# Environment:
#   SANDIA_OFFERED=1.0   offered load every setting is scaled to (see "Load" below)
#   SANDIA_FULL=1        also run the full Red Storm mesh 27x16x24 with generated Lublin workloads
#                        (0 skips it; it is most of the run time)
#   SANDIA_SEEDS=1,2,3   seeds of the generated Red Storm workloads
#   SANDIA_RS_JOBS=2000  jobs per generated Red Storm workload
#
# Load: `--load F` divides the trace's inter-arrival times by F, and the offered load
# (summary.json `offered_load`, recorded run times, no inflation) grows in proportion. The traces'
# own offered loads differ (HPC2N sample 0.43, NASA iPSC 0.47, a Lublin workload on 10,368 nodes
# between 0.3 and 1.5 by seed), so each setting is first simulated once at --load 1 to read its
# offered load, and then run at F = SANDIA_OFFERED / offered: every setting is offered the same
# work per unit of capacity. Throughput only depends on the allocator when the machine is
# saturated; below that the makespan is the last arrival plus its run time for every allocator.
#
# Every simulation runs alone (sim-compare --jobs 1). Every command is logged in OUTDIR/commands.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
trellis=$(realpath -m "${1:-$root/build/release/trellis}")
out=$(realpath -m "${2:-$root/out/sandia}")
offered=${SANDIA_OFFERED:-1.0}
full=${SANDIA_FULL:-1}
seeds=${SANDIA_SEEDS:-1,2,3}
rs_jobs=${SANDIA_RS_JOBS:-2000}
workloads=$root/data/workloads
hpc2n=$workloads/HPC2N-2002-2.2-cln.first3171.swf.gz
nasa=$workloads/NASA-iPSC-1993-3.1-cln.swf.gz
for f in "$trellis" "$hpc2n" "$nasa"; do
  [[ -e $f ]] || { echo "sandia_reproduction: missing $f" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "sandia_reproduction: needs python3" >&2; exit 1; }
mkdir -p "$out"
log=$out/commands.txt
: >"$log"
start_time=$(date +%s)

# Allocators. first-available = the lowest node ids = row-major order (x fastest), which is what
# sorting Cplant's free list by node id gave; sorted-free-list-rowmajor is the same order through
# the linear allocator's code (a check: it must give the same schedule).
small_allocs=first-available,sorted-free-list-rowmajor,sorted-free-list-snake,sorted-free-list-hilbert,linear-bestfit-rowmajor,linear-bestfit-snake,linear-bestfit-hilbert,mc1x1
rs_allocs=first-available,sorted-free-list-snake,sorted-free-list-hilbert,linear-bestfit-rowmajor,linear-bestfit-snake,linear-bestfit-hilbert

run() {
  echo "$*" >>"$log"
  "$@"
}

# load_for OFFERED_AT_1: the --load factor that gives the target offered load.
load_for() {
  python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.4f}')" "$offered" "$1"
}

# calibrate DIR SIM-ARGS...: the offered load of the workload at --load 1.
calibrate() {
  local dir=$1
  shift
  run "$trellis" sim "$@" --alloc first-available --runtime-model trace --load 1 \
    --metrics-only --quiet --out "$dir" >&2
  python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['metrics']['offered_load'])" \
    "$dir/summary.json"
}

# compare DIR LOAD ALLOCS MODEL [OPTS] -- COMMON-ARGS...: one sim-compare (alloc x load grid).
compare() {
  local dir=$1 load=$2 allocs=$3 model=$4 opts=$5
  shift 6
  local extra=()
  [[ -n $opts ]] && extra=(--runtime-opt "$opts")
  run "$trellis" sim-compare "$@" --sched easy --alloc "$allocs" --load "$load" \
    --runtime-model "$model" "${extra[@]}" --no-kill-at-limit --metrics-only --jobs 1 --quiet \
    --out "$dir" >/dev/null
}

# The models and the options of each run; "name:model:options".
models=("trace:trace:" "hop-bytes:hop-bytes:" "congestion:congestion:")
sensitivity=("hop-bytes-a1:hop-bytes:a=1" "congestion-comm0.5:congestion:comm=0.5")

# setting NAME ALLOCS SIM-ARGS...: calibrate, then every model and the sensitivity runs.
setting() {
  local name=$1 allocs=$2
  shift 2
  local at1 load
  at1=$(calibrate "$out/$name/calibration" "$@")
  load=$(load_for "$at1")
  echo "$name: offered load $at1 at --load 1, running at --load $load" >&2
  echo "$load" >"$out/$name/load"
  for m in "${models[@]}" "${sensitivity[@]}"; do
    IFS=: read -r tag model opts <<<"$m"
    compare "$out/$name/$tag" "$load" "$allocs" "$model" "$opts" -- "$@"
  done
}

# 1. HPC2N (real trace, 120 dual-processor nodes) on mesh 5x4x6 with the z wrap: Red Storm's
#    27x16x24 scaled by about 1/5 per axis (x odd as Red Storm's 27, y and z even), 120 nodes.
setting hpc2n "$small_allocs" --machine mesh:5x4x6:wrap=z --workload "$hpc2n" --procs-per-node 2

# 1b. Load sweep on the same setting: throughput against the offered load.
sweep_loads=()
hpc2n_at1=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['metrics']['offered_load'])" \
  "$out/hpc2n/calibration/summary.json")
for o in 0.6 0.8 1.0 1.2 1.5; do
  sweep_loads+=("$(python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.4f}')" "$o" "$hpc2n_at1")")
done
sweep_csv=$(IFS=,; echo "${sweep_loads[*]}")
for m in "hop-bytes:hop-bytes:" "congestion:congestion:"; do
  IFS=: read -r tag model opts <<<"$m"
  compare "$out/hpc2n-sweep/$tag" "$sweep_csv" \
    first-available,sorted-free-list-snake,linear-bestfit-snake "$model" "$opts" -- \
    --machine mesh:5x4x6:wrap=z --workload "$hpc2n" --procs-per-node 2
done

# 2. NASA iPSC/860 (real trace, 128 nodes, power-of-two sizes) on mesh 8x4x4 with the z wrap.
setting nasa "$small_allocs" --machine mesh:8x4x4:wrap=z --workload "$nasa"

# 3. Red Storm itself, 27x16x24 with the z wrap (10,368 nodes), generated Lublin workloads (no
#    real trace of that size ships with Trellis): one calibration and one sim-compare per seed,
#    because the generated workloads' offered loads differ by seed.
if [[ $full != 0 ]]; then
  IFS=, read -r -a seed_list <<<"$seeds"
  for s in "${seed_list[@]}"; do
    at1=$(calibrate "$out/redstorm/calibration-seed$s" --machine mesh:27x16x24:wrap=z \
      --generate "lublin:$rs_jobs:$s")
    # sim-compare --seed S turns lublin:JOBS into lublin:JOBS:S (and records the seed).
    args=(--machine mesh:27x16x24:wrap=z --generate "lublin:$rs_jobs" --seed "$s")
    load=$(load_for "$at1")
    echo "redstorm seed $s: offered load $at1 at --load 1, running at --load $load" >&2
    for m in "${models[@]}"; do
      IFS=: read -r tag model opts <<<"$m"
      compare "$out/redstorm/$tag/seed$s" "$load" "$rs_allocs" "$model" "$opts" -- "${args[@]}"
    done
  done
fi

elapsed=$(($(date +%s) - start_time))

# Tables: per setting and model, one row per allocator; throughput = jobs per hour of makespan,
# its change against first-available in the same run grid (same load, same seed), and for best
# fit its change against the sorted free list on the same curve (row-major: first-available).
python3 - "$out" "$elapsed" <<'EOF' | tee "$out/tables.md"
import glob, json, os, statistics, sys

out, elapsed = sys.argv[1], int(sys.argv[2])

def runs(path):
    """Every run of every compare.json under path, with its seed and load."""
    rows = []
    for f in sorted(glob.glob(os.path.join(path, "**", "compare.json"), recursive=True)):
        for r in json.load(open(f))["runs"]:
            rows.append(r)
    return rows

def thr(m):
    return m["jobs"] / (m["makespan_s"] / 3600.0)

def work(m):
    """Node-seconds held by the jobs (inflated run times) per node: utilization x makespan."""
    return m["utilization"] * m["makespan_s"]

step_base = {
    "linear-bestfit-rowmajor": "first-available",
    "linear-bestfit-snake": "sorted-free-list-snake",
    "linear-bestfit-hilbert": "sorted-free-list-hilbert",
}

def pct(a, b):
    return 100.0 * (a / b - 1.0)

def fmt_change(values):
    if not values:
        return ""
    mean = statistics.mean(values)
    if len(values) == 1:
        return f"{mean:+.1f}"
    return f"{mean:+.1f} ({min(values):+.1f}..{max(values):+.1f})"

def table(title, path, note=""):
    rs = runs(path)
    if not rs:
        return
    # Group runs into grids keyed by (load, seed): changes are taken within a grid.
    grids = {}
    for r in rs:
        grids.setdefault((r["load"], r["seed"]), {})[r["allocator"]] = r["metrics"]
    allocs = []
    for r in rs:
        if r["allocator"] not in allocs:
            allocs.append(r["allocator"])
    loads = sorted({k[0] for k in grids})
    seeds = sorted({k[1] for k in grids})
    print(f"### {title}\n")
    info = f"load factor(s) {', '.join(f'{l:g}' for l in loads)}"
    offered = sorted({round(m['offered_load'], 3) for g in grids.values() for m in g.values()})
    info += f"; offered load {', '.join(f'{o:g}' for o in offered)}"
    if seeds != [-1]:
        info += f"; seeds {', '.join(str(s) for s in seeds)} (means over seeds; changes: mean (min..max))"
    print(info + (f". {note}" if note else "") + "\n")
    print("| allocator | jobs | makespan (h) | throughput (jobs/h) | vs first-available (%) "
          "| best fit vs its sorted free list (%) | work saved vs first-available (%) "
          "| mean response (h) | mean wait (h) | mean bsld | utilization |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for a in allocs:
        ms = [g[a] for g in grids.values() if a in g]
        vs_fa = [pct(thr(g[a]), thr(g["first-available"])) for g in grids.values()
                 if a in g and "first-available" in g]
        base = step_base.get(a)
        vs_step = [pct(thr(g[a]), thr(g[base])) for g in grids.values()
                   if base and a in g and base in g]
        saved = [pct(work(g["first-available"]), work(g[a])) for g in grids.values()
                 if a in g and "first-available" in g]
        mean = lambda k: statistics.mean(m[k] for m in ms)
        print(f"| {a} | {mean('jobs'):.0f} | {mean('makespan_s') / 3600:.1f} "
              f"| {statistics.mean(thr(m) for m in ms):.3f} | {fmt_change(vs_fa)} "
              f"| {fmt_change(vs_step)} | {fmt_change(saved)} "
              f"| {mean('mean_response_s') / 3600:.1f} "
              f"| {mean('mean_wait_s') / 3600:.1f} | {mean('mean_bounded_slowdown'):.1f} "
              f"| {mean('utilization'):.3f} |")
    print()

def sweep(title, path):
    rs = runs(path)
    if not rs:
        return
    grids = {}
    for r in rs:
        grids.setdefault(r["load"], {})[r["allocator"]] = r["metrics"]
    print(f"### {title}\n")
    print("| load factor | offered load | first-available thr (jobs/h) "
          "| sorted-free-list-snake vs FA (%) | linear-bestfit-snake vs FA (%) "
          "| bestfit-snake vs SFL-snake (%) | mean wait FA / SFL-snake / BF-snake (h) |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for load in sorted(grids):
        g = grids[load]
        fa, sfl, bf = g["first-available"], g["sorted-free-list-snake"], g["linear-bestfit-snake"]
        print(f"| {load:g} | {fa['offered_load']:.2f} | {thr(fa):.3f} | {pct(thr(sfl), thr(fa)):+.1f} "
              f"| {pct(thr(bf), thr(fa)):+.1f} | {pct(thr(bf), thr(sfl)):+.1f} "
              f"| {fa['mean_wait_s'] / 3600:.1f} / {sfl['mean_wait_s'] / 3600:.1f} / "
              f"{bf['mean_wait_s'] / 3600:.1f} |")
    print()

settings = [
    ("hpc2n", "HPC2N (first 3,171 records, 120 nodes x 2 processors) on mesh:5x4x6:wrap=z, EASY"),
    ("nasa", "NASA iPSC/860 1993 (18,239 jobs, 128 nodes) on mesh:8x4x4:wrap=z, EASY"),
    ("redstorm", "Red Storm mesh:27x16x24:wrap=z (10,368 nodes), generated Lublin workloads, EASY"),
]
models = [
    ("trace", "run-time model trace"),
    ("hop-bytes", "run-time model hop-bytes (a=0.5, b=1, c=0: the defaults)"),
    ("congestion", "run-time model congestion (comm=0.3: the default)"),
    ("hop-bytes-a1", "sensitivity: hop-bytes with a=1"),
    ("congestion-comm0.5", "sensitivity: congestion with comm=0.5"),
]
print(f"## Sandia reproduction: results ({out})\n")
for s, sdesc in settings:
    for m, mdesc in models:
        table(f"{sdesc}; {mdesc}", os.path.join(out, s, m))
    if s == "hpc2n":
        sweep("HPC2N on mesh:5x4x6:wrap=z: throughput against the offered load, hop-bytes (defaults)",
              os.path.join(out, "hpc2n-sweep", "hop-bytes"))
        sweep("HPC2N on mesh:5x4x6:wrap=z: throughput against the offered load, congestion (defaults)",
              os.path.join(out, "hpc2n-sweep", "congestion"))
print(f"Simulations took {elapsed} s of wall time (one at a time); commands in {out}/commands.txt.")
EOF
