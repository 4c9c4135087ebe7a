#!/usr/bin/env bash
# stereod developer entry point, complete on a fresh Debian 12 or Ubuntu 22.04+ machine:
#   ./dev.sh demo   install what is missing, build what the demo runs, run the daemon on the
#                   default configuration, receive its frames (pictures and point clouds in
#                   $BUILD_DIR/demo) and check their depth against the synthetic scene's
#   ./dev.sh test   install what is missing, build, run the whole test suite
# Both are idempotent: packages already present are not touched, the build is incremental.
# Environment: BUILD_DIR (default build), JOBS (default: cores), STEREOD_CMAKE_ARGS (extra
# configure arguments, e.g. -DSTEREOD_WITH_CUDA=OFF or -DCMAKE_CUDA_ARCHITECTURES=90).
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

# Distribution packages (the same names on Debian 12 and Ubuntu 22.04). libboost-dev: Boost.Beast
# for stereod-view's web server; python3-selenium (with chromium, below): its browser test.
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libopencv-dev libpng-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev
  libzmq3-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-tools
  python3 python3-zmq python3-numpy python3-pip python3-setuptools
  libboost-dev
  systemd
  python3-selenium
)
# Header-only C++ binding for ZeroMQ: its own package on Debian 12 / Ubuntu 23.04+, part of
# libzmq3-dev on Ubuntu 22.04.
OPTIONAL_PACKAGES=(cppzmq-dev
  # clang's libFuzzer for the coverage-guided fuzz tests (tests/CMakeLists.txt); without it they
  # run the seeded mutation driver only. Debian 12 splits the runtime off into libclang-rt-14-dev.
  clang libclang-rt-14-dev
  # Chromium and its driver for stereod-view's browser test: Debian's packages (on Ubuntu,
  # chromium is a snap: the test then skips itself).
  chromium chromium-driver)

install_packages() {
  local missing=() p sudo=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  for p in "${OPTIONAL_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("?$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "dev.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  echo "dev.sh: installing ${missing[*]//\?/}"
  "${sudo[@]}" apt-get update -qq
  local required=() optional=()
  for p in "${missing[@]}"; do
    case $p in \?*) optional+=("${p#\?}") ;; *) required+=("$p") ;; esac
  done
  if [ ${#required[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${required[@]}"
  fi
  for p in "${optional[@]}"; do
    if apt-cache show "$p" >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$p"
    fi
  done
}

# build [TARGET...]: configure, then build the targets named (default: everything, tests too).
build() {
  # shellcheck disable=SC2086
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ${STEREOD_CMAKE_ARGS:-}
  if [ $# -gt 0 ]; then
    cmake --build "$BUILD_DIR" -j "$JOBS" --target "$@"
  else
    cmake --build "$BUILD_DIR" -j "$JOBS"
  fi
}

case ${1:-} in
  demo)
    install_packages
    # Only what the demo runs: not the test suite (nor its sanitizer build).
    build stereod stereod-sub stereod-synth
    # The main job on the embedded default: the daemon on config/stereod.yaml (a synthetic camera
    # rig; the CUDA engine when a GPU is usable, else the CPU engine) publishing to a private
    # socket; stereod-sub receiving FRAMES frames and saving them (pictures with color bars in
    # metres, the left image, point clouds); then the Python client's depth_m() against the
    # synthetic scene's true depth.
    out="$BUILD_DIR/demo"
    rundir=$(mktemp -d)
    rm -rf "$out"
    RUNTIME_DIRECTORY="$rundir" "$BUILD_DIR/daemon/stereod" --config config/stereod.yaml &
    pid=$!
    trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$rundir"' EXIT
    "$BUILD_DIR/tools/stereod-sub" --endpoint "ipc://$rundir/stereod.sock" \
      --count "${FRAMES:-90}" --timeout 30 --save "$out"
    # The distribution's python3 has the pyzmq and numpy installed above (one earlier on PATH,
    # e.g. pyenv's, may not).
    python=python3
    [ -x /usr/bin/python3 ] && python=/usr/bin/python3
    PYTHONPATH=tools/python "$python" tools/demo/depth_check.py \
      --endpoint "ipc://$rundir/stereod.sock" --config config/stereod.yaml \
      --synth "$BUILD_DIR/tools/stereod-synth" --frames 3
    "$BUILD_DIR/tools/stereod-sub" --endpoint "ipc://$rundir/stereod.sock" --stats --count 1 \
      --timeout 5
    kill -TERM "$pid"
    wait "$pid"
    trap 'rm -rf "$rundir"' EXIT
    saved=("$out"/*_disparity.png)
    last=${saved[-1]%_disparity.png}
    echo "dev.sh: the daemon published; the last frame is ${last}_*: _color.png (disparity)," \
         "_depth_color.png (depth, color bar in metres), _left.png, _mask.png, _points.ply" \
         "(stereod-sub --help lists them all)"
    ;;
  test)
    install_packages
    build
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
    ;;
  *)
    echo "usage: $0 demo|test" >&2
    exit 2
    ;;
esac
