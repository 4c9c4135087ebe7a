#!/usr/bin/env bash
# The capacity table of docs/PERFORMANCE.md: for each count N, N rigs of two color cameras
# replayed from memory (synthetic://...&replay=R: the scene's frames rendered once at start-up,
# then served in a loop with fresh capture times, so the scene generator costs nothing while
# measuring), one pair each with the background model on, the daemon on them, and over DURATION
# seconds after a warm-up:
#   frames delivered per pair (per second), drops by cause (sync / engine_busy / send, from the
#   daemon's stats), capture -> publish and capture -> subscriber p50/p99/max (every frame's
#   header, as stereod-sub --brief receives it), the daemon's CPU (of one core) per pair, its RSS
#   per pair (and the replayed frames it holds, once for all rigs), GPU busy % (nvidia-smi).
# Usage: tools/gpu/capacity.sh N...            e.g. tools/gpu/capacity.sh 1 8 16 32 48
# Environment: SIZE (1280x720), FPS (30), D (128), DURATION (60 s), WARMUP (5 s), REPLAY (30 frames),
# ENGINE (cuda), DEVICES (gpu.devices, e.g. "0, 1"; default: the config's default, device 0),
# INFLIGHT (2), MASK (false: the mask output), STEREOD / STEREOD_SUB (the commands), KEEP (a folder
# to keep each run's config, logs and subscriber output in), SOURCE: replay (the default), or
# gst-FORMAT (e.g. gst-UYVY, gst-NV12, gst-RGB): each camera a live videotestsrc (pattern ball)
# delivering FORMAT at SIZE and FPS, as a real camera would, to measure what conversion costs per
# camera. CONVERT (gst-UYVY and gst-NV12 only): engine (the default: the cameras' raw_format is
# FORMAT, their frames go to the engine as they are and it converts them, on the GPU with the CUDA
# engine) or gstreamer (no raw_format: videoconvert converts each frame to RGB on the CPU, as
# before raw formats existed).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
SIZE=${SIZE:-1280x720} FPS=${FPS:-30} D=${D:-128} SECONDS_=${DURATION:-60} WARMUP=${WARMUP:-5}
REPLAY=${REPLAY:-30} ENGINE=${ENGINE:-cuda} DEVICES=${DEVICES:-} INFLIGHT=${INFLIGHT:-2}
MASK=${MASK:-false} SOURCE=${SOURCE:-replay} CONVERT=${CONVERT:-engine}
STEREOD=${STEREOD:-build/daemon/stereod}
STEREOD_SUB=${STEREOD_SUB:-build/tools/stereod-sub}
w=${SIZE%x*} h=${SIZE#*x}
[ $# -ge 1 ] || { echo "usage: $0 N..." >&2; exit 2; }
hz=$(getconf CLK_TCK)
have_smi=0
command -v nvidia-smi > /dev/null && nvidia-smi > /dev/null 2>&1 && have_smi=1

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The sum over pairs of a drop reason's since-start count in a stats message.
drops_total() { grep -o "since start[^)]*" "$1" | grep -o "$2=[0-9]*" | cut -d= -f2 |
  awk '{s += $1} END {print s + 0}'; }
percentiles() {  # reads numbers, prints "p50 / p99 / max"
  sort -n | awk '{a[NR] = $1} END { if (NR == 0) { print "-"; exit }
    i = int(NR * 0.99); if (i < 1) i = 1
    printf "%.1f / %.1f / %.1f", a[int(NR * 0.5) + 1], a[i], a[NR] }'
}

echo "| pairs | frames/s per pair: mean (slowest-fastest) | drops sync / busy / send | capture -> publish p50 / p99 / max (ms) | capture -> subscriber p50 / p99 / max (ms) | daemon CPU per pair | RSS per pair (replay frames held) | GPU busy % |"
echo "|---|---|---|---|---|---|---|---|"
for n in "$@"; do
  run=$(mktemp -d)
  {
    echo "engine: $ENGINE"
    echo "cameras:"
    for ((i = 0; i < n; ++i)); do
      for side in left right; do
        if [ "$SOURCE" = replay ]; then
          # One seed for every rig: the replayed frames are made once and shared.
          src="synthetic://$side?objects=3&seed=1&max_disparity=$D&replay=$REPLAY"
        else
          src="gst://videotestsrc is-live=true pattern=ball ! video/x-raw,format=${SOURCE#gst-},width=$w,height=$h,framerate=$FPS/1"
        fi
        raw=""
        case "$SOURCE:$CONVERT" in
          gst-UYVY:engine | gst-NV12:engine) raw=", raw_format: ${SOURCE#gst-}" ;;
        esac
        echo "  - {name: ${side:0:1}$i, source: '$src', width: $w, height: $h, fps: $FPS, color: true$raw}"
      done
    done
    echo "rigs:"
    for ((i = 0; i < n; ++i)); do echo "  - {name: rig$i, cameras: [l$i, r$i]}"; done
    echo "pairs:"
    for ((i = 0; i < n; ++i)); do
      echo "  - {name: pair$i, left: l$i, right: r$i, stereo: {max_disparity: $D}, background: {enabled: true}}"
    done
    echo "publish: {endpoint: 'ipc://$run/stereod.sock', outputs: {mask: $MASK, depth: false}}"
    if [ -n "$DEVICES" ]; then
      echo "gpu: {devices: [$DEVICES], inflight: $INFLIGHT}"
    else
      echo "gpu: {inflight: $INFLIGHT}"
    fi
  } > "$run/config.yaml"
  $STEREOD --config "$run/config.yaml" > "$run/log" 2>&1 &
  pid=$!
  # Ready once every pair publishes; then the warm-up (the background model, the GPU's clocks).
  $STEREOD_SUB --endpoint "ipc://$run/stereod.sock" --brief --count $((n * 2)) --timeout 180 \
    > /dev/null 2>&1
  sleep "$WARMUP"
  $STEREOD_SUB --endpoint "ipc://$run/stereod.sock" --stats --count 1 --timeout 10 > "$run/stats0"
  t0=$(cpu_ticks $pid)
  if [ $have_smi = 1 ]; then
    nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -lms 500 \
      > "$run/smi" 2> /dev/null &
    smi=$!
  fi
  timeout -s INT "$SECONDS_" $STEREOD_SUB --endpoint "ipc://$run/stereod.sock" --brief \
    --timeout 30 > "$run/sub" 2> "$run/sub.err"
  t1=$(cpu_ticks $pid)
  rss_kib=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  [ $have_smi = 1 ] && kill $smi 2> /dev/null
  $STEREOD_SUB --endpoint "ipc://$run/stereod.sock" --stats --count 1 --timeout 10 > "$run/stats1"
  kill -TERM $pid
  wait $pid
  echo "daemon exit $?" >> "$run/log"

  # Frames received per pair per second: the mean, and the slowest and fastest pair.
  per_pair=$(grep -o '^pair[0-9]* #[0-9]' "$run/sub" | cut -d' ' -f1 | sort | uniq -c |
    awk -v s="$SECONDS_" -v n="$n" 'NR == 1 {lo = $1; hi = $1} {lo = $1 < lo ? $1 : lo; hi = $1 > hi ? $1 : hi; c++; t += $1}
      END {if (c < n) lo = 0; printf "%.1f (%.1f-%.1f)", t / n / s, lo / s, hi / s}')
  lost=$(grep -o 'pair[0-9]*: [0-9]* frame(s) lost' "$run/sub" | awk '{s += $2} END {print s + 0}')
  drops=""
  for reason in sync engine_busy send; do
    d=$(( $(drops_total "$run/stats1" $reason) - $(drops_total "$run/stats0" $reason) ))
    drops="$drops${drops:+ / }$d"
  done
  pub=$(grep -o 'publish [0-9.]* ms' "$run/sub" | awk '{print $2}' | percentiles)
  rcv=$(grep -o 'latency [0-9.-]* ms' "$run/sub" | awk '{print $2}' | percentiles)
  cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$SECONDS_" -v n="$n" \
    'BEGIN {printf "%.1f %%", (b - a) / hz / s * 100 / n}')
  replay_mib=$(grep -o 'for replay in [0-9.]* s ([0-9]* MiB)' "$run/log" | grep -o '[0-9]* MiB' |
    awk '{s += $1} END {print s + 0}')
  rss=$(awk -v k="$rss_kib" -v n="$n" -v r="$replay_mib" \
    'BEGIN {printf "%.0f MiB (%d MiB); %.0f MiB without them", k / 1024 / n, r, (k / 1024 - r) / n}')
  gpu="-"
  if [ -s "$run/smi" ]; then
    gpu=$(awk -F', *' '{s[$1] += $2; c[$1]++} END {for (d in s) printf "%sGPU%s %.0f", (o++ ? ", " : ""), d, s[d] / c[d]}' "$run/smi")
  fi
  echo "| $n | $per_pair; $lost lost at the subscriber | $drops | $pub | $rcv | $cpu | $rss | $gpu |"
  if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP/$n" && cp "$run"/config.yaml "$run"/log "$run"/stats0 "$run"/stats1 "$KEEP/$n/"
    cp "$run"/sub.err "$KEEP/$n/" 2> /dev/null
    [ -s "$run/smi" ] && cp "$run/smi" "$KEEP/$n/"
    tail -n 200 "$run/sub" > "$KEEP/$n/sub.tail"
  fi
  rm -rf "$run"
done
echo
[ "$SOURCE" = replay ] && source_text="replay of $REPLAY frames" || source_text="source $SOURCE"
echo "$SIZE at $FPS frames/s, D=$D, background on, $source_text, engine $ENGINE, inflight $INFLIGHT, ${SECONDS_} s after ${WARMUP} s of warm-up; $(nproc) CPU cores"
[ $have_smi = 1 ] && nvidia-smi --query-gpu=index,name --format=csv,noheader
