#!/bin/sh
# Test: `cmake --install` into a scratch DESTDIR, twice. The configuration must land where the
# installed unit looks for it, and an edited configuration must survive the second install.
# Usage: check-install.sh CMAKE BUILD_DIR CONFIG_PATH BINARY_PATH UNIT_DIR
set -eu
cmake=$1 build=$2 config=$3 binary=$4 unit_dir=$5
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
DESTDIR=$d "$cmake" --install "$build" >/dev/null
unit=$d$unit_dir/stereod.service
grep -qx "ExecStart=$binary --config $config" "$unit" || {
  echo "the unit does not start $binary --config $config:"; grep '^Exec' "$unit"; exit 1; }
test -x "$d$binary" || { echo "no binary at $binary"; exit 1; }
test -f "$d$config" || { echo "no configuration at $config"; find "$d" -name stereod.yaml; exit 1; }
echo '# edited by the operator' >>"$d$config"
DESTDIR=$d "$cmake" --install "$build" >/dev/null
tail -n 1 "$d$config" | grep -qx '# edited by the operator' || {
  echo "the second install replaced the edited $config"; exit 1; }
echo "install OK: $binary, $unit_dir/stereod.service, $config (kept on reinstall)"
