#!/usr/bin/env bash
# Runs every libFuzzer target of fuzz/ for a while each, from a corpus seeded with the bundled
# traces and the documented examples. The targets are built by the fuzz preset (clang, ASan and
# UBSan, with the fuzzer's coverage) into build/fuzz; only what they need is built.
#
#   scripts/fuzz.sh SECONDS [TARGET...]      each target for SECONDS (default: all targets)
#   scripts/fuzz.sh --runs N [TARGET...]     each target for N inputs
#
# Corpora grow in build/fuzz/corpus/TARGET, crashes are kept in build/fuzz/crashes/, and each
# run's log is build/fuzz/logs/TARGET.log. The last line per target gives the inputs run,
# the coverage reached and the result. Exits non-zero if any target found a crash, leak, hang or
# broken invariant; the reproducer is named in the log (run build/fuzz/TARGET on it).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="$here/build/fuzz"
build="$bin"

limit=(-max_total_time=60)
if [ "${1:-}" = "--runs" ]; then
  limit=(-runs="$2"); shift 2
elif [ -n "${1:-}" ]; then
  limit=(-max_total_time="$1"); shift
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for src in "$here"/fuzz/fuzz_*.cc; do targets+=("$(basename "$src" .cc)"); done
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "${JOBS:-2}"

# Seeds: a few files per surface from the repository's own inputs.
seed() {  # seed TARGET FILE...
  local dir="$build/corpus/$1"; shift
  mkdir -p "$dir"
  for f in "$@"; do [ -f "$f" ] && head -c 65536 "$f" > "$dir/seed-$(basename "$f")"; done
  return 0
}
seed_text() {  # seed_text TARGET TEXT...
  local dir="$build/corpus/$1" i=0; shift
  mkdir -p "$dir"
  for t in "$@"; do printf '%s' "$t" > "$dir/seed-text-$i"; i=$((i + 1)); done
}
seed fuzz_swf "$here"/data/workloads/*.swf
seed_text fuzz_tres 'cpu=64,mem=256G,node=4,gres/gpu=8' 'node=-1,billing=10'
seed_text fuzz_sacctmgr $'add account science\nadd account physics Parent=science Fairshare=40\nadd user alice Account=physics,science DefaultAccount=physics\nmodify user alice where account=physics set Fairshare=7 GrpTRES=node=4\ndelete user alice where account=science\nmodify account science set parent=physics\ndelete account science\n' \
  $'add account physics\nadd user alice Account=physics\nadd qos high Priority=100\nmodify qos high set MaxJobsPerUser=2 MaxSubmitJobsPerUser=3 MaxTRESPerUser=node=2 GrpTRES=node=4 MaxWall=01:00:00 UsageFactor=2 Flags=DenyOnLimit\nmodify user alice set qos+=high defaultqos=high\nmodify account physics set qos+=high\nmodify user alice set qos-=high\ndelete qos high\n'
seed_text fuzz_shares $'# site shares\ng12 40\nu7 2\ng13 60  # the rest\n' $'u1 0\nu2 1e9\n'
# A gzip-compressed trace too: the target decompresses what starts with gzip's magic.
head -c 4096 "$here"/data/workloads/lublin_256.swf | gzip -c > "$build/corpus/fuzz_swf/seed-gz"
seed_text fuzz_job_list_json \
  '{"jobs": [{"id": 7, "submit": 5, "run": 60, "nodes": 4}, {"id": 3, "submit": 1, "run": 10, "limit": 20, "shape": "2x2", "mode": "mesh"}]}'
seed_text fuzz_cluster_config $'[cluster]\nmachine = "torus:4x4x4"\nstore = "sqlite:/srv/trellis/state.db"\ncontrollers = ["127.0.0.1:6817"]\nmunge_socket = ""\n\n[controller]\nlisten = "127.0.0.1:6817"\npolicy = "easy"\nallocator = ""\nheartbeat_interval = 1.0\nheartbeat_misses = 3\nnode_failure = "requeue"\ndefault_time_limit = 3600\nmax_time_limit = 0\nkill_grace = 5.0\nadmins = [0]\nscheduler_lease = 0.5\n' \
  $'[cluster]\nmachine = "flat:4"\nstore = "sqlite:/tmp/x.db"\n[controller]\nadmins = [0, 1000]\n' \
  $'[cluster]\nmachine = "flat:4"\n[[nodetype]]\nname = "gpu"\nnodes = "n[0-1]"\nresources = "cores=8,mem=16G,gpus=4"\n[[nodetype]]\nname = "cpu"\nnodes = ""\nresources = "cores=4"\n'
seed_text fuzz_hostlist $'\x10n[0-3,8]' $'\x40n[0-15],n20' $'\x01n0'
seed_text fuzz_node_names 'n[0-63]' 'n[0-2,5],gpu1,login' 'n[00-10]'
seed_text fuzz_request $'\x004x2x2' $'\x0264' $'\x05 8x8 '
seed_text fuzz_machine 'torus:8x8x8' 'mesh:27x16x24:wrap=z' 'fattree:4,4,4' 'flat:64'
seed_text fuzz_routing_rules 'recommended' 'literal,table=B' 'prior-art' 'dor' 'table=C,phase=earliest'
seed_text fuzz_batch_directives $'#!/bin/sh\n#SBATCH -N 3 --time=5   # three nodes\n#TRELLIS --shape 2x2x2\n#SBATCH -J "a b" -o \'out %j\'\nsrun ./app\n' \
  $'#!/bin/bash\n\n#SBATCH --array=1-10%2\n# a comment\n#SBATCHX not one\necho\n'
seed_text fuzz_job_array $'\x101-100%10' $'\x400,3,7' $'\x201-99:2' $'\x051-5,10%2'
seed_text fuzz_dependency 'afterok:12:13,afternotok:9' 'afterany:4?after:5_2' 'singleton' \
  'afterok:7_*,singleton'
seed_text fuzz_pmi1 $'\x9acmd=init pmi_version=1 pmi_subversion=1\n' \
  $'\x3ecmd=put kvsname=12.0 key=k value=a b=c\n\x1bcmd=barrier_in\n\x1ccmd=barrier_in\n' \
  $'\x14mcmd=spawn\nendcmd\n'
# Resources: the first byte picks the surface (0 node type, 1 options, 2 stored text, 3 grants,
# 4 a binding: CPU_BIND|GPU_BIND|tasks).
seed_text fuzz_resources $'\x00sockets=2,cores=64,threads=2,numa=4,mem=256G,gpus=a100:4,gres=license:2,features=ib+gpu' \
  $'\x01cpus-per-task=4\nmem=2G\ngres=gpu:a100:2,license:1\nexclusive=user\nconstraint=ib&fast' \
  $'\x02cpus_per_task=4 mem=0 gpus_per_task=1 gpu_type=a100 gres=license:2 sharing=user' \
  $'\x033:c=0-3,8;m=2048;g=1-2;r=license:1 5:c=7' $'\x04cores|per_task:1|\x02' \
  $'\x04verbose,map_cpu:2,4,10|closest|\x05'
for t in fuzz_shepherd_plan fuzz_agent_requests fuzz_controller; do mkdir -p "$build/corpus/$t"; done
# A ping for a tree of two agents, framed as a tree port reads it (daemon/tree/tree_wire.h).
mkdir -p "$build/corpus/fuzz_tree_message"
printf '\x22\x00\x00\x00\x01\x01\x00\x00\x00\x00\x00\x00\x00\x0a\x17\x0a\x03a:1\x0a\x03b:1\x10\x02\x19\x00\x00\x00\x00\x00\x00\xf0\x3f\x6a\x00' \
  > "$build/corpus/fuzz_tree_message/seed-ping"

mkdir -p "$build/logs" "$build/crashes"
status=0
for t in "${targets[@]}"; do
  log="$build/logs/$t.log"
  if "$bin/$t" "${limit[@]}" -rss_limit_mb=4096 -timeout=20 -max_len=8192 \
      -artifact_prefix="$build/crashes/$t-" -print_final_stats=1 \
      "$build/corpus/$t" >"$log" 2>&1; then
    result=clean
  else
    result="FAILED (see $log)"
    status=1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  printf '%-22s %10s inputs  coverage %6s  %s\n' "$t" "$runs" "$cov" "$result"
done
exit $status
