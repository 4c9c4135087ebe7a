#!/usr/bin/python3
"""Cues beyond appearance for the foreground mask, measured offline (issue 13; docs/PERFORMANCE.md,
"Depth against the static scene"), on sequences of tools/bench/foreground-family.sh and what
`stereod-bench sequence --out OUT/NAME` wrote for them (each frame's disparity PFM and mask PNG;
during the warm-up every pixel is matched).

  foreground-cues.py depth-bound  WORK OUT NAME...   the mask with a perfect static depth
  foreground-cues.py static-depth WORK OUT NAME...   how good a static depth learned from the
                                                     warm-up's disparities is
  foreground-cues.py rules        WORK OUT NAME...   removal rules with the learned static depth
  foreground-cues.py edges        WORK OUT NAME...   do ghost blobs' outlines follow image edges?

WORK holds the family's sequences (NAME-FRAMES folders), OUT the folders OUT/NAME. The static
scene's true disparity is the ground truth's median over the frames whose true mask shows no
object at a pixel. Options: --frames (120), --warmup (60: the scored frames follow it), --margin
(1.5 pixels). Needs numpy, PIL and scipy (python3-numpy, python3-pil, python3-scipy)."""
import argparse
import warnings

import numpy as np
from PIL import Image
from scipy import ndimage

warnings.filterwarnings("ignore", category=RuntimeWarning)  # all-NaN pixels are expected


def read_pfm(path):
    with open(path, "rb") as f:
        if f.readline().strip() != b"Pf":
            raise ValueError(path + ": not a one-channel PFM")
        w, h = map(int, f.readline().split())
        scale = float(f.readline())
        data = np.frombuffer(f.read(), dtype="<f4" if scale < 0 else ">f4").reshape(h, w)
    return np.flipud(data)  # rows are stored bottom to top


def read_png(path):
    return np.array(Image.open(path))


class Sequence:
    def __init__(self, a, name):
        self.a, self.name = a, name
        self.seq = f"{a.work}/{name}-{a.frames}"
        self.out = f"{a.out}/{name}"
        self.masks = np.stack([read_png(f"{self.seq}/mask_{i:06d}.png") for i in range(a.frames)])
        truth = np.stack([read_pfm(f"{self.seq}/disparity_{i:06d}.pfm") for i in range(a.frames)])
        self.static = np.nanmedian(np.where(self.masks == 255, np.nan, truth), axis=0)

    def disparity(self, i):
        d = read_pfm(f"{self.out}/disparity_{i:06d}.pfm")
        return np.where(np.isfinite(d) & (d >= 0), d, np.nan)

    def output_mask(self, i):
        return read_png(f"{self.out}/foreground_{i:06d}.png") > 0

    def scored(self):
        return range(self.a.warmup, self.a.frames)

    def warmup_disparities(self):
        return np.stack([self.disparity(i) for i in range(self.a.warmup)])


def score(seq, keep):
    """IoU, precision and recall of the output mask after keep(i, mask, disparity)."""
    tp = fp = fn = 0
    for i in seq.scored():
        m = keep(i, seq.output_mask(i), seq.disparity(i))
        t = seq.masks[i] == 255
        tp += (m & t).sum()
        fp += (m & ~t).sum()
        fn += (~m & t).sum()
    return tp / max(1, tp + fp + fn), tp / max(1, tp + fp), tp / max(1, tp + fn)


def not_nearer(d, static, margin):
    return np.isfinite(d) & np.isfinite(static) & (d <= static + margin)


def depth_bound(a, seq):
    base = score(seq, lambda i, m, d: m)
    checked = score(seq, lambda i, m, d: m & ~not_nearer(d, seq.static, a.margin))
    print(f"{seq.name:11s} IoU {base[0]:.3f} -> {checked[0]:.3f}  precision {base[1]:.3f} -> "
          f"{checked[1]:.3f}  recall {base[2]:.3f} -> {checked[2]:.3f}")


def learned_static(warm, kind):
    if kind == "farthest":
        return np.nanmin(warm, axis=0)
    if kind == "10th percentile":
        return np.nanpercentile(warm, 10, axis=0)
    # "agreed by K": the smallest value that K of the warm-up's values match within 2 pixels.
    k = int(kind.split()[-1])
    ordered = np.sort(np.where(np.isfinite(warm), warm, np.inf), axis=0)
    s = np.full(warm.shape[1:], np.nan)
    for j in range(0, warm.shape[0] - k + 1):
        ok = np.isfinite(ordered[j + k - 1]) & (ordered[j + k - 1] - ordered[j] <= 2.0) & np.isnan(s)
        s[ok] = ordered[j][ok]
    return s


def static_depth(a, seq):
    warm = seq.warmup_disparities()
    parts = []
    for kind in ("farthest", "10th percentile", "agreed by 3", "agreed by 6"):
        s = learned_static(warm, kind)
        ok = np.isfinite(s) & np.isfinite(seq.static)
        e = s[ok] - seq.static[ok]
        parts.append(f"{kind}: within {np.mean(np.abs(e) <= a.margin):.0%}, too far "
                     f"{np.mean(e < -a.margin):.0%}, too near {np.mean(e > a.margin):.0%}")
    print(f"{seq.name:11s} " + " | ".join(parts))


def rules(a, seq):
    warm = seq.warmup_disparities()
    far = learned_static(warm, "farthest")
    agree = (np.abs(warm - far[None]) <= 1.0).sum(axis=0)
    confirmed = np.where(agree >= 40, far, np.nan)

    def blobs(i, m, d):
        lab, n = ndimage.label(m)
        if n == 0:
            return m
        index = np.arange(1, n + 1)
        at = ndimage.sum(not_nearer(d, far, a.margin), lab, index=index)
        near = ndimage.sum(np.isfinite(d) & np.isfinite(far) & (d > far + a.margin), lab, index=index)
        drop = np.zeros(n + 1, bool)
        drop[1:] = (at + near > 0) & (at >= 0.5 * (at + near))
        return m & ~drop[lab]

    results = {
        "as published": score(seq, lambda i, m, d: m),
        "pixels, farthest": score(seq, lambda i, m, d: m & ~not_nearer(d, far, a.margin)),
        "pixels, confirmed": score(seq, lambda i, m, d: m & ~not_nearer(d, confirmed, a.margin)),
        "blobs, farthest": score(seq, blobs),
    }
    print(f"{seq.name:11s} " + "  ".join(f"{k} {v[0]:.3f}" for k, v in results.items()))


def edges(a, seq):
    ghost, real = [], []
    for i in list(seq.scored())[::3]:
        m = seq.output_mask(i)
        t = seq.masks[i] == 255
        g = read_png(f"{seq.seq}/left_{i:06d}.png")
        g = (g.mean(axis=2) if g.ndim == 3 else g).astype(np.float32)
        strong = ndimage.maximum_filter(np.hypot(ndimage.sobel(g, 0), ndimage.sobel(g, 1)), size=3) > 80
        lab, n = ndimage.label(m)
        outline = m & ~ndimage.binary_erosion(m)
        for k in range(1, n + 1):
            b = lab == k
            if b.sum() < 50:
                continue
            share = strong[outline & b].mean() if (outline & b).any() else 0.0
            false_share = (b & ~t).sum() / b.sum()
            if false_share > 0.8:
                ghost.append(share)
            elif false_share < 0.2:
                real.append(share)
    med = lambda v: np.median(v) if v else float("nan")
    print(f"{seq.name:11s} outline on an edge, median over blobs: mostly false foreground "
          f"{med(ghost):.2f} ({len(ghost)} blobs), mostly true {med(real):.2f} ({len(real)} blobs)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["depth-bound", "static-depth", "rules", "edges"])
    ap.add_argument("work")
    ap.add_argument("out")
    ap.add_argument("names", nargs="+")
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--warmup", type=int, default=60)
    ap.add_argument("--margin", type=float, default=1.5)
    a = ap.parse_args()
    run = {"depth-bound": depth_bound, "static-depth": static_depth, "rules": rules, "edges": edges}
    for name in a.names:
        run[a.what](a, Sequence(a, name))


if __name__ == "__main__":
    main()
