#!/usr/bin/env bash
# Everything that needs a GPU, in one go: builds (CUDA engine for this machine's GPU and for
# Jetson Orin), runs every GPU test (the CUDA engine against the CPU reference, bit for bit), then
# the speed table and the daemon's latency table. Usage: tools/gpu/check.sh [BUILD_DIR]   (needs ./dev.sh's packages and nvcc)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${1:-build-gpu}
# Jetson Orin and Hopper, plus this machine's GPU (CMake's "native" needs 3.24; JetPack has 3.22).
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '.' || true)
case $cap in "" | 87 | 90) cap= ;; esac
ARCHS=${CUDA_ARCHS:-"87;90${cap:+;$cap}"}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCHS"
cmake --build "$BUILD_DIR" -j "$(nproc)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
STEREOD_DATA=${DATA:-../shared/data} "$BUILD_DIR/tests/gpu_tests" --gtest_brief=1
# The finest matcher's volume prototype (docs/PERFORMANCE.md, session 24): equal to the CPU engine,
# and its kernels' times, on the benchmark pair and on a real scene.
"$BUILD_DIR/tools/stereod-bench" matcher-volume --set refine=false --size 1280x720 --max-disparity 128
"$BUILD_DIR/tools/stereod-bench" matcher-volume --set refine=false \
  --scene "${DATA:-../shared/data}/middlebury2014_Q/Motorcycle" --iterations 50
BENCH="$BUILD_DIR/tools/stereod-bench" tools/gpu/speed-table.sh
# The daemon on N synthetic rigs: capture-to-subscriber latency, drops, CPU and memory.
for c in "1 1280x720 128 300" "8 640x480 64 900" "8 1280x720 128 900" "16 640x480 64 1200"; do
  # shellcheck disable=SC2086
  STEREOD="$BUILD_DIR/daemon/stereod" STEREOD_SUB="$BUILD_DIR/tools/stereod-sub" \
    tools/gpu/daemon-latency.sh $c
done
