#!/usr/bin/env bash
# The CUDA engine's speed table of docs/PERFORMANCE.md, measured on this machine's GPU, with the
# libSGM baseline in the same run when SGM names a folder holding ../shared/tools/libsgm-bench.
#   BENCH  command that runs stereod-bench (default: build/tools/stereod-bench)
#   BASE   an older stereod-bench to time beside it (optional; only options both know are used)
#   SGM    libsgm-bench folder (optional)
#   DATA   Middlebury folder for the CUDA accuracy check (default: ../shared/data, else tests/data)
#   EXTRA  options added to every speed run of both builds, e.g. EXTRA="--set refine=false" for
#          issue 11's configuration (the window alone) after the defaults gained the refinement
set -uo pipefail
cd "$(dirname "$0")/../.."
BENCH=${BENCH:-build/tools/stereod-bench}
DATA=${DATA:-$([ -d ../shared/data ] && echo ../shared/data || echo tests/data)}
S="speed --engine cuda ${EXTRA:-}"
run() { echo "== $*"; $BENCH $S "$@" 2>&1; }
base() { [ -n "${BASE:-}" ] && { echo "== (before) $*"; $BASE $S "$@" 2>&1; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null

echo "#### 1024x768, D=256, background off (target >= 3000 frames/s; beyond: 5000)"
run --size 1024x768 --max-disparity 256 --frames 3000 --warmup 100 --profile
# Four frames in flight: with three or more a pair's frames are matched side by side.
run --size 1024x768 --max-disparity 256 --frames 3000 --warmup 100 --inflight 4
base --size 1024x768 --max-disparity 256 --frames 3000 --warmup 100
echo "#### latency, one frame at a time (target: median <= 0.6 ms)"
run --size 1024x768 --max-disparity 256 --frames 1000 --warmup 100 --latency
run --size 1024x768 --max-disparity 256 --frames 1000 --warmup 100 --latency --busy-poll
base --size 1024x768 --max-disparity 256 --frames 1000 --warmup 100 --inflight 1
echo "#### background on: 0 % foreground (target >= 10000) and ~15 % (target >= 5000)"
for n in 0 3; do
  run --size 1024x768 --max-disparity 256 --frames 2000 --warmup 100 --background --objects $n --profile
  run --size 1024x768 --max-disparity 256 --frames 2000 --warmup 100 --background --objects $n --color-only
  run --size 1024x768 --max-disparity 256 --frames 2000 --warmup 100 --background --objects $n \
    --set background.color=false
  # Frames kept coming (4 in flight) and as cameras deliver them (NV12).
  run --size 1024x768 --max-disparity 256 --frames 3000 --warmup 100 --background --objects $n \
    --set background.color=false --inflight 4
  run --size 1024x768 --max-disparity 256 --frames 3000 --warmup 100 --background --objects $n \
    --inflight 4
  run --size 1024x768 --max-disparity 256 --frames 3000 --warmup 100 --background --objects $n \
    --yuv nv12 --inflight 4
  base --size 1024x768 --max-disparity 256 --frames 1000 --warmup 100 --background --objects $n
  base --size 1024x768 --max-disparity 256 --frames 3000 --warmup 100 --background --objects $n \
    --set background.color=false --inflight 4
done
echo "#### 16 % foreground with six frames in flight (the row's setting since session 16)"
run --size 1024x768 --max-disparity 256 --frames 3000 --warmup 100 --background --objects 3 --inflight 6
echo "#### 1920x1080, D=256 (target >= 1200 frames/s)"
run --size 1920x1080 --max-disparity 256 --frames 1000 --warmup 100
run --size 1920x1080 --max-disparity 256 --frames 1000 --warmup 100 --inflight 4
base --size 1920x1080 --max-disparity 256 --frames 1000 --warmup 100
echo "#### 1280x720, D=128: one pair, and 8 pairs at once (target >= 8000 pair-frames/s)"
run --size 1280x720 --max-disparity 128 --frames 2000 --warmup 100
run --size 1280x720 --max-disparity 128 --frames 1000 --warmup 20 --pairs 8
run --size 1280x720 --max-disparity 128 --frames 1000 --warmup 20 --pairs 8 --no-batch
run --size 1280x720 --max-disparity 128 --frames 1000 --warmup 20 --pairs 8 --inflight 4
run --size 1280x720 --max-disparity 128 --frames 1000 --warmup 20 --pairs 8 --inflight 4 --no-batch
base --size 1280x720 --max-disparity 128 --frames 500 --warmup 20 --pairs 8
# With the model: pairs that keep frames in flight share batches (docs/PERFORMANCE.md, "Batches
# that fill before they go"); a camera that stopped must not hold them up (eight pairs, one
# stalled, against seven).
run --size 1280x720 --max-disparity 128 --frames 1000 --warmup 100 --pairs 8 --inflight 4 \
  --background --objects 3
run --size 1280x720 --max-disparity 128 --frames 1000 --warmup 100 --pairs 16 --inflight 2 \
  --background --objects 3
run --size 1280x720 --max-disparity 128 --frames 1000 --warmup 100 --pairs 8 --stalled 1 \
  --inflight 4 --background --objects 3
run --size 1280x720 --max-disparity 128 --frames 1000 --warmup 100 --pairs 7 --inflight 4 \
  --background --objects 3
echo "#### 640x480, D=128"
run --size 640x480 --max-disparity 128 --frames 2000 --warmup 100
echo "#### real scenes: each Middlebury scene under DATA at its own size and range, each view on its"
echo "#### own (the default), then with the finest level shared (why that is off: docs/PERFORMANCE.md)"
for scene in "$DATA"/*/*/; do
  # A scene folder holds its ground truth (2001: truedisp or disp2, 2003/2006: disp2,
  # 2014: disp0GT.pfm); other folders (tests/data's fuzz corpora) are skipped.
  compgen -G "$scene/disp*" >/dev/null || compgen -G "$scene/truedisp*" >/dev/null || continue
  run --scene "$scene" --frames 3000 --warmup 200 --inflight 4
  STEREOD_CUDA_SHARED_FINEST=1 run --scene "$scene" --frames 3000 --warmup 200 --inflight 4
done
echo "#### L-shaped trinocular rig (issue 17), 1280x720, D=128: fused against the horizontal pair alone"
$BENCH trinocular --speed --engine cuda --size 1280x720 --max-disparity 128 --frames 500 2>&1
echo "#### trinocular accuracy on the CUDA engine (must equal docs/PERFORMANCE.md's CPU table)"
for t in any hstripes vbars mixed; do
  $BENCH trinocular --engine cuda --texture $t --size 640x480 --max-disparity 64 --frames 20 2>&1 | tail -4
done
if [ -n "${SGM:-}" ]; then
  echo "#### libSGM 3.1 (census 9x7, subpixel, LR check), same GPU, same run"
  ITERS=${ITERS:-300} "$SGM/run.sh" 9x7
fi
echo "#### accuracy of the CUDA engine (must equal the CPU engine's table)"
$BENCH accuracy --engine cuda --data "$DATA" --no-sgbm 2>&1 | tail -6
