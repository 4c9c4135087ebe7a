#!/usr/bin/env bash
# The speed table of docs/PERFORMANCE.md, measured on this machine's GPU. BENCH is the command
# that runs stereod-bench (default: build/tools/stereod-bench); DATA the Middlebury folder for the
# accuracy check (default: ../shared/data, else tests/data).
set -euo pipefail
cd "$(dirname "$0")/../.."
BENCH=${BENCH:-build/tools/stereod-bench}
DATA=${DATA:-$( [ -d ../shared/data ] && echo ../shared/data || echo tests/data )}

echo "== 1024x768, D=256, defaults (L=4), background off: target >= 5000 frames/s per pair"
$BENCH speed --engine cuda --size 1024x768 --max-disparity 256 --frames 3000 --warmup 100 --profile
echo "== 1920x1080, D=256: target >= 2000 frames/s"
$BENCH speed --engine cuda --size 1920x1080 --max-disparity 256 --frames 2000 --warmup 100 --profile
echo "== 8 pairs of 1280x720, D=128 at once: target >= 10000 pair-frames/s in total"
$BENCH speed --engine cuda --size 1280x720 --max-disparity 128 --frames 500 --warmup 20 --pairs 8
echo "== 1024x768, D=256, background modeling on: time against the share of foreground"
echo "   (--objects 3, the default, is about 15 %; 0 objects: nothing left to match after warm-up)"
for n in 0 1 2 3 6; do
  echo "-- --objects $n"
  $BENCH speed --engine cuda --size 1024x768 --max-disparity 256 --frames 1000 --warmup 100 \
    --background --objects "$n"
done
echo "== 1920x1080, D=256, background modeling on, --objects 3"
$BENCH speed --engine cuda --size 1920x1080 --max-disparity 256 --frames 1000 --warmup 100 --background
echo "== accuracy of the CUDA engine (must equal the CPU engine's table)"
$BENCH accuracy --engine cuda --data "$DATA" --no-sgbm
