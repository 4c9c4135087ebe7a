#!/usr/bin/env python3
"""Writes the seed corpus of the frame decoder's fuzz target (tests/data/fuzz/frame/): messages as
fuzz_frame.cpp reads them (byte 0: parts - 1; each part but the last: 2-byte little-endian length
and bytes; the last part: the rest), following docs/PROTOCOL.md. Run it again after a protocol
change: python3 tests/fuzz/make_frame_corpus.py tests/data/fuzz/frame"""
import json
import os
import struct
import sys


def message(parts):
    out = bytes([len(parts) - 1])
    for p in parts[:-1]:
        out += struct.pack("<H", len(p)) + p
    return out + parts[-1]


def header(ok=True, payloads=(), w=4, h=3, **extra):
    hd = {"version": {"major": 1, "minor": 1}, "pair": "front", "sequence": 7,
          "status": "ok" if ok else "error",
          "capture_ns": 1700000000000000000,
          "cameras": [{"name": "left", "capture_ns": 1700000000000000000},
                      {"name": "right", "capture_ns": 1700000000000000100}],
          "complete_ns": 1700000000001000000, "ready_ns": 1700000000009000000,
          "publish_ns": 1700000000009100000,
          "latency_ms": {"sync": 1.0, "queue": 0.1, "engine": 8.0, "total": 9.1},
          "focal_px": 700.5, "baseline_m": 0.12, "doffs_px": 0.0,
          "min_disparity": 0, "max_disparity": 64, "background": True,
          "config_generation": 1, "engine": "cpu", "levels": 3, "payloads": list(payloads)}
    if ok:
        hd.update({"width": w, "height": h, "stride": 2 * w, "encoding": "disp16q4",
                   "invalid": 65535})
    else:
        hd["error"] = "the engine failed"
    hd.update(extra)
    return json.dumps(hd).encode()


def main(out):
    os.makedirs(out, exist_ok=True)
    w, h = 4, 3
    disparity = struct.pack("<%dH" % (w * h), *[16 * i if i % 5 else 65535 for i in range(w * h)])
    mask = bytes([255 if i % 2 else 0 for i in range(w * h)])
    depth = struct.pack("<%dH" % (w * h), *[1000 + i for i in range(w * h)])
    seeds = {
        "ok_disparity": [b"disparity.front", header(), disparity],
        "ok_mask_depth": [b"disparity.front",
                          header(payloads=[
                              {"name": "mask", "width": w, "height": h, "stride": w,
                               "encoding": "mask8"},
                              {"name": "depth", "width": w, "height": h, "stride": 2 * w,
                               "encoding": "depth16mm", "invalid": 0}]),
                          disparity, mask, depth],
        "ok_source_index": [b"disparity.front", header(source_index=42), disparity],
        "failed": [b"disparity.front", header(ok=False)],
        "unknown_payload": [b"disparity.front",
                            header(payloads=[{"name": "future", "width": 2, "height": 2,
                                              "stride": 3, "encoding": "x24"}]),
                            disparity, bytes(6)],
    }
    for name, parts in seeds.items():
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(message(parts))
    # Whole inputs that are JSON reach decode_header and decode_stats directly.
    with open(os.path.join(out, "header.json"), "wb") as f:
        f.write(header())
    stats = {"version": {"major": 1, "minor": 1}, "time_ns": 1700000000000000000,
             "interval_s": 1.0,
             "pairs": {"front": {"frames": 30, "fps": 30.0, "frames_total": 300,
                                 "drops": {"sync": 0, "engine_busy": 1, "send": 0},
                                 "drops_total": {"sync": 2, "engine_busy": 3, "send": 0},
                                 "errors_total": 0, "last_error": "",
                                 "latency_ms": {"engine": {"count": 30, "p50": 6.9, "p90": 7.4,
                                                           "p99": 8.1, "max": 8.3}}}},
             "publisher": {"queued": 0, "queue_capacity": 16, "frames_sent_total": 300,
                           "zero_copy_payloads_total": 0, "copied_payloads_total": 600}}
    with open(os.path.join(out, "stats.json"), "wb") as f:
        f.write(json.dumps(stats).encode())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/fuzz/frame")
