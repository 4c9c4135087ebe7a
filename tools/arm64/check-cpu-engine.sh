#!/usr/bin/env bash
# Cross-compiles the CPU matcher for arm64 (the Jetson's instruction set: its vector loops become
# NEON) with the naive oracle, and runs it under qemu: bit-exact on random cases, no board needed.
# Needs g++-aarch64-linux-gnu and qemu-user (apt). Usage: tools/arm64/check-cpu-engine.sh [CASES]
set -euo pipefail
cd "$(dirname "$0")/../.."
cxx=${CXX_AARCH64:-aarch64-linux-gnu-g++}
command -v "$cxx" >/dev/null || { echo "check-cpu-engine: $cxx not found" >&2; exit 2; }
command -v qemu-aarch64 >/dev/null || { echo "check-cpu-engine: qemu-aarch64 not found" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$cxx" -std=c++17 -O3 -static -pthread -Ipipeline -Itests/unit -Itools/common \
  tools/arm64/naive_check.cpp tests/unit/cpu_cases.cpp tests/unit/naive_matcher.cpp \
  tools/common/plane_scenes.cpp pipeline/stereo/*.cpp pipeline/thread_pool.cpp \
  pipeline/cpu_features.cpp -o "$out/naive_check"
qemu-aarch64 "$out/naive_check" "${1:-100}"
