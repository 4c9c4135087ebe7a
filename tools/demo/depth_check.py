#!/usr/bin/env python3
"""The demo's depth check (./dev.sh demo): frames received with the Python client, their
depth_m() against the true depth of the synthetic scene the daemon renders.

    PYTHONPATH=tools/python python3 tools/demo/depth_check.py --endpoint E --config FILE \
        --synth build/tools/stereod-synth [--frames 5]

Each frame's header names the scene's frame (source_index); stereod-synth --config renders that
frame's ground truth (depth_NNNNNN.pfm, metres, from the scene's own cameras), and every pixel
that has a disparity is compared. Prints one line per frame and exits 1 when the median error
over all of them is 1 % or more.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

from stereod_client import Frame, Subscriber


def read_pfm(path):
    """A Middlebury PFM file (one channel) as float32 rows top to bottom."""
    with open(path, "rb") as f:
        if f.readline().strip() != b"Pf":
            raise ValueError("%s: not a one-channel PFM file" % path)
        width, height = (int(v) for v in f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), dtype="<f4" if scale < 0 else ">f4")
    return data.reshape(height, width)[::-1]


def truth_depth(synth, config, pair, index):
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([synth, "--config", config, "--pair", pair, "--start", str(index),
                        "--frames", "1", "--out", out], check=True, stdout=subprocess.DEVNULL)
        return read_pfm(os.path.join(out, "depth_%06d.pfm" % index))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--config", required=True, help="the daemon's configuration")
    ap.add_argument("--synth", required=True, help="the stereod-synth program")
    ap.add_argument("--frames", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=30)
    args = ap.parse_args()
    errors = []
    checked = 0
    with Subscriber(args.endpoint) as sub:
        while checked < args.frames:
            msg = sub.receive(timeout_ms=int(args.timeout * 1000))
            if msg is None:
                print("depth check: no frame for %g s" % args.timeout, file=sys.stderr)
                return 1
            if not isinstance(msg, Frame) or not msg.ok or "source_index" not in msg.header:
                continue
            z = msg.depth_m()
            true_z = truth_depth(args.synth, args.config, msg.pair, msg.header["source_index"])
            valid = np.isfinite(z) & np.isfinite(true_z)
            rel = np.abs(z[valid] - true_z[valid]) / true_z[valid]
            if rel.size == 0:
                continue
            checked += 1
            errors.append(rel)
            print("%s #%d (scene frame %d): depth_m() at %d pixels, %.2f to %.2f m: median error "
                  "%.2f %%, %.1f %% of them within 1 %% of the true depth"
                  % (msg.pair, msg.sequence, msg.header["source_index"], rel.size,
                     z[valid].min(), z[valid].max(), 100 * np.median(rel),
                     100 * np.mean(rel < 0.01)), flush=True)
    everything = np.concatenate(errors)
    median = float(np.median(everything))
    print("depth check: median error %.2f %% over %d pixels of %d frames; %.1f %% within 1 %%"
          % (100 * median, everything.size, checked, 100 * np.mean(everything < 0.01)))
    return 0 if median < 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
