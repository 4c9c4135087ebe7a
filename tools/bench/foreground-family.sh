#!/usr/bin/env bash
# The foreground family of docs/PERFORMANCE.md (issue 13): synthetic sequences over real
# Middlebury scenes (the static background, both real views and their ground truth), objects
# textured with a photograph of another scene, a soft moving shadow, sensor noise and flicker, at
# several sizes, speeds and stops; each scored by `stereod-bench sequence` from the end of the
# warm-up. Sequences are written once under $WORK and reused.
#   SET     tuning | held | synth | all (default: all)
#   FRAMES  frames per sequence (default 120: 60 of warm-up, 60 scored)
#   BENCH   stereod-bench (default build/tools/stereod-bench), SYNTH stereod-synth
#   DATA    the shared Middlebury data (default ../shared/data, else /work/shared/data)
#   WORK    where the sequences are written (default /tmp/stereod-fg-family)
#   ARGS    extra stereod-bench options, e.g. ARGS="--set background.closing_radius=2"
# Prints one line per sequence (shadowfg: shadow pixels called foreground; visible: share of the
# true foreground the right view shows; bad1vis, missvis, outside: bad 1.0, without disparity and
# outside the mask, over that right-visible foreground), then each set's mean over its sequences.
set -euo pipefail
cd "$(dirname "$0")/../.."
SET=${SET:-all}
FRAMES=${FRAMES:-120}
BENCH=${BENCH:-build/tools/stereod-bench}
SYNTH=${SYNTH:-build/tools/stereod-synth}
DATA=${DATA:-$([ -d ../shared/data ] && echo ../shared/data || echo /work/shared/data)}
WORK=${WORK:-/tmp/stereod-fg-family}
ARGS=${ARGS:-}
M14=$DATA/middlebury2014_Q
M06=$DATA/middlebury2006_third

# name | set | background | object texture | size | max disparity | seed | other synth options
FAMILY=(
  "motorcycle|tuning|$M14/Motorcycle|$M14/Jadeplant|720x486|96|1|"
  "adirondack|tuning|$M14/Adirondack|$M14/ArtL|640x480|96|2|--speed 2 --object-size 0.6 --objects 4"
  "aloe|tuning|$M06/Aloe|$M06/Books|400x360|104|3|--stop-frames 20 --speed 1.5"
  "baby1|tuning|$M06/Baby1|$M06/Dolls|400x360|80|4|--object-size 1.4 --objects 2"
  "piano|held|$M14/Piano|$M14/Motorcycle|640x480|96|5|--speed 1.5"
  "jadeplant|held|$M14/Jadeplant|$M14/Adirondack|640x480|176|6|--object-size 0.7 --objects 4 --stop-frames 15"
  "art|held|$M06/Art|$M06/Cloth1|400x360|104|7|--speed 2"
  "dolls|held|$M06/Dolls|$M06/Aloe|400x360|104|8|--object-size 1.3 --stop-frames 20"
  "synth1|synth|||640x480|64|1|"
  "synth2|synth|||640x480|64|2|"
)

mkdir -p "$WORK"
scores=$(mktemp)
trap 'rm -f "$scores"' EXIT
printf '%-11s %-7s %6s %6s %6s %7s %7s %7s %7s %7s\n' sequence set IoU prec recall shadowfg \
  visible bad1vis missvis outside
for entry in "${FAMILY[@]}"; do
  IFS='|' read -r name set bg tex size dmax seed extra <<<"$entry"
  [ "$SET" = all ] || [ "$SET" = "$set" ] || continue
  dir=$WORK/$name-$FRAMES
  if [ ! -f "$dir/sequence.yaml" ]; then
    opts=(--out "$dir" --size "$size" --max-disparity "$dmax" --seed "$seed" --frames "$FRAMES")
    [ -n "$bg" ] && opts+=(--background "$bg" --object-texture "$tex")
    # shellcheck disable=SC2206
    opts+=($extra)
    "$SYNTH" "${opts[@]}" >/dev/null
  fi
  # shellcheck disable=SC2086
  "$BENCH" sequence --left "$dir/left_%06d.png" --right "$dir/right_%06d.png" \
    --max-disparity "$dmax" --json $ARGS >"$dir/score.json"
  echo "$set $dir/score.json" >>"$scores"
  python3 - "$name" "$set" "$dir/score.json" <<'PY'
import json, sys
name, s, path = sys.argv[1:4]
j = json.load(open(path))
shadow_fg = 1 - j["shadow_called_background"]
print(f'{name:<11} {s:<7} {j["mask_iou"]:6.3f} {j["mask_precision"]:6.3f} {j["mask_recall"]:6.3f} '
      f'{100*shadow_fg:6.2f}% {100*j["right_visible_share"]:6.1f}% {100*j["bad1_right_visible"]:6.2f}% '
      f'{100*j["right_visible_without_disparity"]:6.2f}% {100*j["right_visible_outside_mask"]:6.2f}%')
PY
done
python3 - "$scores" <<'PY'
import json, sys
sets = {}
for line in open(sys.argv[1]):
    s, path = line.split()
    sets.setdefault(s, []).append(json.load(open(path)))
for s, js in sets.items():
    n = len(js)
    mean = lambda k: sum(j[k] for j in js) / n
    print(f'{"mean":<11} {s:<7} {mean("mask_iou"):6.3f} {mean("mask_precision"):6.3f} '
          f'{mean("mask_recall"):6.3f} {100*(1-mean("shadow_called_background")):6.2f}% '
          f'{100*mean("right_visible_share"):6.1f}% {100*mean("bad1_right_visible"):6.2f}% '
          f'{100*mean("right_visible_without_disparity"):6.2f}% '
          f'{100*mean("right_visible_outside_mask"):6.2f}%')
PY
