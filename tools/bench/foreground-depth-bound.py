#!/usr/bin/python3
"""What a depth check could do for the foreground mask (issue 13; docs/PERFORMANCE.md, "Depth
against the static scene"): for sequences of tools/bench/foreground-family.sh, scores the mask
`stereod-bench sequence --out` wrote as it is, and as it would be if every foreground pixel whose
disparity is not nearer than the static scene (by more than MARGIN pixels) were called background.
The static scene's disparity comes from the ground truth (per pixel, the median over the frames
whose true mask shows no object there), so this is the upper bound of such a check with a perfect
background depth, applied to the output only (no feedback into the model).

usage: foreground-depth-bound.py WORK OUT NAME... [--margin 1.5] [--from 60]
  WORK: the family's sequences (NAME-120 folders), OUT: folders OUT/NAME written by
  `stereod-bench sequence --out OUT/NAME` on them. Needs numpy and PIL (python3-numpy,
  python3-pil)."""
import argparse

import numpy as np
from PIL import Image


def read_pfm(path):
    with open(path, "rb") as f:
        if f.readline().strip() != b"Pf":
            raise ValueError(path + ": not a one-channel PFM")
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), dtype="<f4" if scale < 0 else ">f4").reshape(h, w)
    return np.flipud(data)  # rows are stored bottom to top


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work")
    ap.add_argument("out")
    ap.add_argument("names", nargs="+")
    ap.add_argument("--margin", type=float, default=1.5)
    ap.add_argument("--from", dest="first", type=int, default=60)
    ap.add_argument("--frames", type=int, default=120)
    a = ap.parse_args()
    for name in a.names:
        seq, out = f"{a.work}/{name}-{a.frames}", f"{a.out}/{name}"
        truth = np.stack([read_pfm(f"{seq}/disparity_{i:06d}.pfm") for i in range(a.frames)])
        masks = np.stack([np.array(Image.open(f"{seq}/mask_{i:06d}.png")) for i in range(a.frames)])
        with np.errstate(all="ignore"):
            static = np.nanmedian(np.where(masks == 255, np.nan, truth), axis=0)
        known = np.isfinite(static)
        tp = fp = fn = tp_removed = fp_removed = 0
        for i in range(a.first, a.frames):
            d = read_pfm(f"{out}/disparity_{i:06d}.pfm")
            fg = np.array(Image.open(f"{out}/foreground_{i:06d}.png")) > 0
            true_fg = masks[i] == 255
            with np.errstate(invalid="ignore"):
                not_nearer = np.isfinite(d) & (d >= 0) & known & (d <= static + a.margin)
            tp += (fg & true_fg).sum()
            fp += (fg & ~true_fg).sum()
            fn += (~fg & true_fg).sum()
            tp_removed += (fg & true_fg & not_nearer).sum()
            fp_removed += (fg & ~true_fg & not_nearer).sum()
        iou = tp / max(1, tp + fp + fn)
        iou_checked = (tp - tp_removed) / max(1, tp + fp - fp_removed + fn)
        print(f"{name:11s} IoU {iou:.3f} -> {iou_checked:.3f}  false foreground removed "
              f"{fp_removed / max(1, fp):6.1%}  true foreground removed {tp_removed / max(1, tp):6.2%}")


if __name__ == "__main__":
    main()
