#!/usr/bin/env bash
# The daemon's latency table of docs/PERFORMANCE.md: N synthetic rigs (two color cameras each, at
# FPS, background modeling on), the daemon on them, and stereod-sub's capture-to-receive latency
# over FRAMES frames of all pairs, then the daemon's own stats and its exit summary.
# Usage: tools/gpu/daemon-latency.sh RIGS WIDTHxHEIGHT MAX_DISPARITY FRAMES [FPS] [ENGINE]
# STEREOD and STEREOD_SUB name the commands (default: the build tree's binaries); EXTRA_YAML is
# appended to the configuration (e.g. EXTRA_YAML='gpu: {watch_ends: false}').
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
rigs=$1 size=$2 disparity=$3 frames=$4 fps=${5:-30} engine=${6:-cuda}
w=${size%x*} h=${size#*x}
STEREOD=${STEREOD:-build/daemon/stereod}
STEREOD_SUB=${STEREOD_SUB:-build/tools/stereod-sub}
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
{
  echo "engine: $engine"
  echo "cameras:"
  for ((i = 0; i < rigs; ++i)); do
    for side in left right; do
      echo "  - {name: ${side:0:1}$i, source: 'synthetic://$side?objects=3&seed=$((i + 1))&max_disparity=$disparity', width: $w, height: $h, fps: $fps, color: true}"
    done
  done
  echo "rigs:"
  for ((i = 0; i < rigs; ++i)); do echo "  - {name: rig$i, cameras: [l$i, r$i]}"; done
  echo "pairs:"
  for ((i = 0; i < rigs; ++i)); do
    echo "  - {name: pair$i, left: l$i, right: r$i, stereo: {max_disparity: $disparity}}"
  done
  echo "publish: {endpoint: 'ipc://$run/stereod.sock'}"
  [ -n "${EXTRA_YAML:-}" ] && echo "$EXTRA_YAML"
} > "$run/config.yaml"
$STEREOD --config "$run/config.yaml" > "$run/log" 2>&1 &
pid=$!
sleep 4  # start-up and the background model's warm-up
$STEREOD_SUB --endpoint "ipc://$run/stereod.sock" --count 60 --timeout 20 > /dev/null
$STEREOD_SUB --endpoint "ipc://$run/stereod.sock" --count "$frames" --timeout 60 > "$run/sub" 2>&1
echo "$rigs x ${w}x$h, D=$disparity, $fps frames/s, engine $engine"
tail -n 1 "$run/sub"
ps -o pcpu=,rss= -p $pid | awk '{printf "daemon: %s %% CPU (of one core), RSS %.0f MiB\n", $1, $2 / 1024}'
grep -o 'latency [0-9.]* ms' "$run/sub" | awk '{print $2}' | sort -n | awk '{a[NR] = $1} END {
  printf "capture -> subscriber over %d frames: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
         NR, a[int(NR * 0.5) + 1], a[int(NR * 0.99)], a[NR] }'
$STEREOD_SUB --endpoint "ipc://$run/stereod.sock" --stats --count 1 --timeout 5
kill -TERM $pid
wait $pid
echo "daemon exit $?"
grep -E "frames published|error" "$run/log"
