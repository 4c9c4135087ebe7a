#!/bin/sh
# Test: the installed clients work for programs outside stereod's tree. `cmake --install` into a
# scratch prefix; a small C++ program built against it through find_package(stereod_client), and
# again through pkg-config; the Python package imported from where it was installed.
# Usage: client_package_test.sh CMAKE GENERATOR MAKE_PROGRAM CXX BUILD_DIR SOURCE_DIR PYTHON
set -eu
cmake=$1 generator=$2 make_program=$3 cxx=$4 build=$5 source=$6 python=$7
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
prefix=$d/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$d/install.log" 2>&1 || {
  cat "$d/install.log"; exit 1; }

# C++ through the CMake package.
"$cmake" -S "$source/tests/install/consumer" -B "$d/cmake" -G "$generator" \
  -DCMAKE_MAKE_PROGRAM="$make_program" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$d/configure.log" 2>&1 || { cat "$d/configure.log"; exit 1; }
"$cmake" --build "$d/cmake" >"$d/build.log" 2>&1 || { cat "$d/build.log"; exit 1; }
out=$("$d/cmake/consumer")
[ "$out" = "depth 10.000 m, points xyz32f" ] || { echo "CMake consumer printed: $out"; exit 1; }
echo "find_package(stereod_client): $out"

# C++ through pkg-config.
pc_dir=$(dirname "$(find "$prefix" -name stereod_client.pc)")
flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs stereod_client)
# shellcheck disable=SC2086  # the flags are words
"$cxx" -std=c++17 "$source/tests/install/consumer/consumer.cpp" -o "$d/pc-consumer" $flags
out=$("$d/pc-consumer")
[ "$out" = "depth 10.000 m, points xyz32f" ] || { echo "pkg-config consumer printed: $out"; exit 1; }
echo "pkg-config stereod_client: $out"

# Python: the package where site_dir.py says, with its metadata (numpy and pyzmq).
site=$("$python" "$source/tools/python/site_dir.py" "$prefix")
PYTHONPATH=$site "$python" - "$prefix" <<'PY'
import importlib.metadata as metadata
import os
import sys

import stereod_client

prefix = os.path.realpath(sys.argv[1])
where = os.path.realpath(stereod_client.__file__)
assert where.startswith(prefix + os.sep), "imported %s, not the installed one" % where
requires = sorted(r.split()[0] for r in metadata.requires("stereod-client"))
assert requires == ["numpy", "pyzmq"], requires
assert callable(stereod_client.Subscriber) and callable(stereod_client.decode_frame)
print("python: stereod-client %s from %s, requires %s"
      % (metadata.version("stereod-client"), os.path.relpath(where, prefix), ", ".join(requires)))
PY
