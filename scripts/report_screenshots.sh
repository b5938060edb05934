#!/usr/bin/env bash
# Screenshots of the HTML reports (report.html and compare.html) for the NASA iPSC/860 trace and the
# Lublin trace, taken in headless Chromium, so the pages can be looked at without a browser.
#   scripts/report_screenshots.sh [OUTDIR]     (default out/screenshots; needs build/release/trellis)
# Both traces are the project's own, in data/workloads/ (the NASA trace gzipped).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$root/out/screenshots}")
trellis=${TRELLIS:-$root/build/release/trellis}
chromium=${CHROMIUM:-/usr/bin/chromium}
nasa=$root/data/workloads/NASA-iPSC-1993-3.1-cln.swf.gz
lublin=$root/data/workloads/lublin_256.swf
for f in "$trellis" "$chromium" "$nasa" "$lublin"; do
  [[ -e $f ]] || { echo "report_screenshots: missing $f" >&2; exit 1; }
done
mkdir -p "$out"
runs=$(mktemp -d)
profile=$(mktemp -d)
trap 'rm -rf "$runs" "$profile"' EXIT

# shot PAGE PNG HEIGHT: a 1280-pixel-wide screenshot of the page.
shot() {
  "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
    --hide-scrollbars --virtual-time-budget=20000 --window-size=1280,"$3" \
    --screenshot="$2" "file://$1" >/dev/null 2>&1
  echo "  $2"
}

echo "report_screenshots: running the simulations"
"$trellis" sim --machine torus:16x8 --workload "$nasa" --sched easy --alloc contiguous \
  --quiet --out "$runs/nasa"
"$trellis" sim --machine torus:16x16 --workload "$lublin" --sched easy --alloc contiguous \
  --quiet --out "$runs/lublin"
"$trellis" sim --machine flat:128 --generate thesis:load=0.9 --sched dqt-ffapa --alloc buddy \
  --quiet --out "$runs/gang"
"$trellis" sim-compare --machine torus:16x8 --workload "$nasa" --alloc first-available,contiguous \
  --sched easy --load 1,1.5 --out "$runs/nasa-compare" >/dev/null
"$trellis" sim-compare --machine torus:16x16 --generate lublin:2000 --alloc random,contiguous \
  --sched easy --load 1,1.5 --seed 1,2,3 --out "$runs/lublin-compare" >/dev/null

echo "report_screenshots: writing"
shot "$runs/nasa/report.html" "$out/nasa-report.png" 3600
shot "$runs/lublin/report.html" "$out/lublin-report.png" 3800
shot "$runs/gang/report.html" "$out/gang-report.png" 3000
shot "$runs/nasa-compare/compare.html" "$out/nasa-compare.png" 2600
shot "$runs/lublin-compare/compare.html" "$out/lublin-compare.png" 3000
