#!/usr/bin/env bash
# Each kernel's duration in a stereod-bench run, as Nsight Compute times it (clocks left alone,
# kernels serialised: their sum exceeds a pipelined frame, where two frames' kernels overlap), in
# launch order; docs/PERFORMANCE.md's per-kernel tables.
#   kernel-times.sh SKIP COUNT [stereod-bench speed options...]
#   e.g. kernel-times.sh 3000 40 --engine cuda --size 1024x768 --max-disparity 256 --frames 400
#   BENCH  the stereod-bench to run (default build/tools/stereod-bench; a bundle's bin/ copy needs
#          its lib/ in LD_LIBRARY_PATH)
#   OUT    folder for the raw CSV (default: a temporary one)
# SKIP launches are passed over first (the warm-up), then COUNT are timed. Kernels that are nodes
# of a graph with conditional nodes (the gated graphs of an empty scene) are not timed by ncu.
set -euo pipefail
cd "$(dirname "$0")/../.."
skip=$1 count=$2
shift 2
BENCH=${BENCH:-build/tools/stereod-bench}
out=${OUT:-$(mktemp -d)}
ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip "$skip" \
  --launch-count "$count" --csv --page raw "$BENCH" speed "$@" >"$out/kernel-times.csv" \
  2>"$out/kernel-times.err"
python3 - "$out/kernel-times.csv" <<'PY'
import csv, sys
rows = list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
if not rows:
    sys.exit("kernel-times.sh: ncu wrote no kernel rows (see kernel-times.err)")
head = rows[0]
name, grid, time = head.index("Kernel Name"), head.index("Grid Size"), head.index("gpu__time_duration.sum")
unit = rows[1][time]  # the units row
for r in rows[2:]:
    print(f"{r[name][:60]:60s} {r[grid]:>14s} {float(r[time].replace(',', '')):10.0f} {unit}")
PY
