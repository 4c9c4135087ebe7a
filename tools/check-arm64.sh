#!/usr/bin/env bash
# Cross-builds stereod's CPU parts (everything but the CUDA engine) for arm64, the Jetson's CPU,
# against a Debian 12 arm64 root of its own, then runs the CPU test suite under qemu-user.
#
#   tools/check-arm64.sh [CTEST ARGUMENTS...]      e.g. tools/check-arm64.sh -R Matcher
#
# The host's packages are not touched: the arm64 libraries live in $ARM64_DIR/root (made once by
# mmdebstrap, about 1.4 GB), the build in $ARM64_DIR/build. Needs on the host (amd64 packages):
# g++-aarch64-linux-gnu, qemu-user, mmdebstrap, cmake, ninja-build, and network access to a
# Debian mirror for the first run. Environment: ARM64_DIR (default build-arm64), JOBS (default:
# cores), DEBIAN_MIRROR (default http://deb.debian.org/debian).
#
# Every test process runs under qemu-aarch64; the tests that spawn the daemon or stereod-sub run
# those under qemu too (STEREOD_TEST_WRAPPER). It need not run in CI (about 35 minutes on two
# cores: the root once, the cross build, the tests); docs/DEPLOY-JETSON.md records the result.
set -euo pipefail
cd "$(dirname "$0")/.."

ARM64_DIR=${ARM64_DIR:-build-arm64}
ROOT=$(realpath -m "$ARM64_DIR/root")
BUILD=$ARM64_DIR/build
JOBS=${JOBS:-$(nproc)}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

# The libraries of dev.sh's list, for arm64 (CUDA aside).
PACKAGES=(
  libc6-dev libstdc++-12-dev
  libopencv-dev libpng-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev
  libzmq3-dev cppzmq-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good
)

missing=()
for tool in aarch64-linux-gnu-g++ qemu-aarch64 mmdebstrap cmake ninja; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "check-arm64: missing ${missing[*]}; install (amd64 packages, nothing of arm64 on the host):" >&2
  echo "  apt-get install g++-aarch64-linux-gnu qemu-user mmdebstrap cmake ninja-build" >&2
  exit 2
fi

if [ ! -e "$ROOT/.stereod-root-complete" ]; then
  echo "check-arm64: making the arm64 root in $ROOT (once)"
  rm -rf "$ROOT"
  mkdir -p "$(dirname "$ROOT")"
  # extract: the packages and their dependencies unpacked, nothing run (no arm64 code on the host).
  (IFS=,; mmdebstrap --variant=extract --architectures=arm64 --include="${PACKAGES[*]}" \
     bookworm "$ROOT" "$MIRROR")
  # Links that point at absolute paths (/lib/aarch64-linux-gnu/libz.so.1 ...) would resolve on
  # the host: make them relative to the root.
  find "$ROOT" -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$ROOT$target")" "$link"
  done
  # What update-alternatives would link (no maintainer script runs in an extracted root): the
  # reference BLAS and LAPACK that OpenCV needs.
  lib=$ROOT/usr/lib/aarch64-linux-gnu
  for alt in "$lib"/blas/*.so.3 "$lib"/lapack/*.so.3; do
    [ -e "$alt" ] && ln -sfn "${alt#"$lib"/}" "$lib/$(basename "$alt")"
  done
  touch "$ROOT/.stereod-root-complete"
fi

mkdir -p "$BUILD"
cat > "$BUILD/toolchain.cmake" <<EOF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_SYSROOT "$ROOT")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;$ROOT)
set(ENV{PKG_CONFIG_SYSROOT_DIR} "$ROOT")
set(ENV{PKG_CONFIG_LIBDIR} "$ROOT/usr/lib/aarch64-linux-gnu/pkgconfig:$ROOT/usr/share/pkgconfig")
EOF

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTEREOD_WITH_CUDA=OFF \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/$BUILD/toolchain.cmake" \
  -DSTEREOD_ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
cmake --build "$BUILD" -j "$JOBS"

# GStreamer under emulation: plugins from the root, scanned in-process (its scanner helper is an
# arm64 program the host cannot start by itself), and a registry of its own.
export GST_PLUGIN_SYSTEM_PATH_1_0="$ROOT/usr/lib/aarch64-linux-gnu/gstreamer-1.0"
export GST_PLUGIN_SCANNER_1_0=/nonexistent
export GST_REGISTRY_FORK=no
export GST_REGISTRY_1_0="$PWD/$BUILD/gst-registry.bin"
# Programs the tests start (the daemon, stereod-sub, stereod-synth) go through qemu too; the path
# is absolute because the tests start them with execv/posix_spawn, which do not search PATH.
STEREOD_TEST_WRAPPER="$(command -v qemu-aarch64) -L $ROOT"
export STEREOD_TEST_WRAPPER
# By default every test but those that run the daemon itself (labels daemon and fault): their
# frame-rate and latency expectations are a board's, and the emulated daemon runs 5-10 times
# slower (docs/DEPLOY-JETSON.md lists what they do under qemu). `tools/check-arm64.sh -L fault`
# runs them anyway; any arguments replace the default selection.
if [ $# -eq 0 ]; then set -- -LE '^(daemon|fault)$'; fi
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" --timeout 1800 "$@"
