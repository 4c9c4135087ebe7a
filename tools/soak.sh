#!/usr/bin/env bash
# A soak run of the daemon (docs/PERFORMANCE.md): stereod on CONFIG for MINUTES, one subscriber
# receiving everything, the daemon's RSS and CPU every 10 s and a stats message every minute.
# Usage: tools/soak.sh [CONFIG] [MINUTES] [OUT_DIR]   (defaults: config/stereod.yaml, 10, soak-out)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
config=${1:-config/stereod.yaml} minutes=${2:-10} out=${3:-soak-out}
BUILD_DIR=${BUILD_DIR:-build}
mkdir -p "$out"
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
RUNTIME_DIRECTORY=$run "$BUILD_DIR/daemon/stereod" --config "$config" > "$out/log" 2>&1 &
pid=$!
sleep 2
"$BUILD_DIR/tools/stereod-sub" --endpoint "ipc://$run/stereod.sock" --count 0 > "$out/frames.txt" 2>&1 &
sub=$!
start=$(date +%s)
: > "$out/resources.txt"
for ((i = 1; i <= minutes * 6; ++i)); do
  sleep 10
  echo "$(($(date +%s) - start)) s: RSS KiB, CPU %: $(ps -o rss=,pcpu= -p $pid)" >> "$out/resources.txt"
  if ((i % 6 == 0)); then
    "$BUILD_DIR/tools/stereod-sub" --endpoint "ipc://$run/stereod.sock" --stats --count 1 \
      --timeout 5 >> "$out/stats.txt" 2>&1
  fi
done
kill -TERM $sub; wait $sub
kill -TERM $pid; wait $pid
echo "daemon exit $?" >> "$out/resources.txt"
head -n 1 "$out/resources.txt"; tail -n 2 "$out/resources.txt"; tail -n 1 "$out/frames.txt"
grep -o 'latency [0-9.]* ms' "$out/frames.txt" | awk '{print $2}' | sort -n | awk '{a[NR] = $1} END {
  printf "capture -> subscriber over %d frames: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
         NR, a[int(NR * 0.5) + 1], a[int(NR * 0.99)], a[NR] }'
grep "frames published" "$out/log"
