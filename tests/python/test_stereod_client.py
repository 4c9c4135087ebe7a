"""The Python client (tools/python/stereod_client.py): decoding, validation, and a live stream.

Run by CTest with the distribution's python3 (pyzmq and numpy from its packages):
    PYTHONPATH=tools/python /usr/bin/python3 -m unittest -v test_stereod_client
"""

import copy
import json
import random
import unittest

import numpy as np
import zmq

import stereod_client as sc


def header(width=4, height=3, stride=None, pair="front", sequence=7):
    """A valid header for a width x height frame with a mask, as docs/PROTOCOL.md shows."""
    return {
        "version": {"major": 1, "minor": 3},
        "pair": pair, "sequence": sequence, "status": "ok",
        "width": width, "height": height, "stride": stride or 2 * width,
        "encoding": "disp16q4", "invalid": 65535,
        "capture_ns": 1700000000000000000,
        "cameras": [{"name": "left", "capture_ns": 1700000000000000000},
                    {"name": "right", "capture_ns": 1700000000000100000}],
        "complete_ns": 1700000000001000000, "ready_ns": 1700000000009000000,
        "publish_ns": 1700000000009100000,
        "latency_ms": {"sync": 1.0, "engine": 8.0, "publish": 0.1, "total": 9.1},
        "focal_px": 1000.0, "baseline_m": 0.1, "doffs_px": 2.0,
        "fy_px": 1000.0, "cx_px": 1.5, "cy_px": 1.0,
        "min_disparity": 0, "max_disparity": 64, "background": False,
        "config_generation": 1, "engine": "cpu", "levels": 3,
        "payloads": [{"name": "mask", "encoding": "mask8", "width": width, "height": height,
                      "stride": width}],
    }


def message(h=None, disparity=None, mask=None):
    """The parts of a frame message for header `h` with matching payloads."""
    h = h or header()
    if disparity is None:
        disparity = np.arange(h["height"] * h["stride"] // 2, dtype="<u2") * 16
    if mask is None:
        mask = np.zeros(h["height"] * h["width"], dtype="u1")
    return [b"disparity." + h["pair"].encode(), json.dumps(h).encode(),
            np.asarray(disparity, dtype="<u2").tobytes(), np.asarray(mask, dtype="u1").tobytes()]


def v13_message():
    """A 4 x 3 frame with the payloads protocol 1.3 added: confidence, an RGB left image and a
    colored point cloud."""
    h = header()
    h["payloads"] = [
        {"name": "confidence", "encoding": "confidence8", "width": 4, "height": 3, "stride": 4,
         "invalid": 0},
        {"name": "left", "encoding": "rgb8", "width": 4, "height": 3, "stride": 12},
        {"name": "points", "encoding": "xyzrgb32f", "width": 4, "height": 3, "stride": 64}]
    d = np.full((3, 4), 16 * 12, dtype="<u2")  # d = 12 px: Z = 1000 * 0.1 / (12 - 2) = 10 m
    d[0, 0] = 0xFFFF
    confidence = np.arange(12, dtype="u1").reshape(3, 4)
    rgb = np.arange(36, dtype="u1").reshape(3, 4, 3)
    points = np.zeros((3, 4, 4), dtype="<f4")
    points[:, :, :3] = 1.5
    points[:, :, 3] = np.array([0x00102030], dtype="<u4").view("<f4")[0]
    return h, [b"disparity.front", json.dumps(h).encode(), d.tobytes(), confidence.tobytes(),
               rgb.tobytes(), points.tobytes()]


class Decode(unittest.TestCase):
    def assertRefused(self, parts, fragment):
        with self.assertRaises(sc.ProtocolError) as ctx:
            sc.decode_frame(parts)
        self.assertIn(fragment, str(ctx.exception))

    def test_valid_frame_gives_numpy_views(self):
        d = np.array([[16, 32, 0xFFFF, 48], [1, 2, 3, 4], [5, 6, 7, 8]], dtype="<u2")
        f = sc.decode_frame(message(disparity=d))
        self.assertTrue(f.ok)
        self.assertEqual((f.pair, f.sequence), ("front", 7))
        self.assertEqual(f.disparity.shape, (3, 4))
        np.testing.assert_array_equal(f.disparity, d)
        self.assertEqual(f.mask.shape, (3, 4))
        self.assertIsNone(f.depth)
        px = f.disparity_px()
        self.assertEqual(px[0, 1], 2.0)
        self.assertTrue(np.isnan(px[0, 2]))
        z = f.depth_m()  # 1000 * 0.1 / (d - 2)
        self.assertTrue(np.isnan(z[0, 0]))  # d = 1 <= doffs
        self.assertAlmostEqual(float(z[0, 3]), 100.0, places=4)

    def test_frame_line_counts_foreground_without_disparity_where_sent(self):
        h = header()
        d = np.array([[16, 32, 0xFFFF, 48], [1, 2, 3, 4], [5, 6, 7, 8]], dtype="<u2")
        line = sc._frame_line(sc.decode_frame(message(h, disparity=d)), h["capture_ns"])
        self.assertEqual(line, "front #7  latency 0.0 ms  valid 91.7 %  d 0.06..3.00 px")
        h["foreground_without_disparity"] = 5
        line = sc._frame_line(sc.decode_frame(message(h, disparity=d)), h["capture_ns"])
        self.assertTrue(line.endswith("  fg without d 5"), line)

    def test_v13_payloads_decode_to_arrays(self):
        _, parts = v13_message()
        f = sc.decode_frame(parts)
        self.assertEqual(f.confidence.shape, (3, 4))
        self.assertEqual(int(f.confidence[2, 3]), 11)
        self.assertEqual(f.left.shape, (3, 4, 3))
        self.assertEqual(list(f.left[0, 1]), [3, 4, 5])
        self.assertEqual(f.points.shape, (3, 4, 4))
        self.assertEqual(f.points.dtype, np.dtype("<f4"))
        np.testing.assert_array_equal(f.xyz(), np.full((3, 4, 3), 1.5, np.float32))
        self.assertEqual(list(f.point_colors()[1, 2]), [0x10, 0x20, 0x30])

    def test_xyz_from_the_disparity_and_the_camera_model(self):
        h, parts = v13_message()
        h["payloads"] = []
        f = sc.decode_frame([parts[0], json.dumps(h).encode(), parts[2]])
        xyz = f.xyz()
        self.assertTrue(np.isnan(xyz[0, 0]).all())
        # Z = 10 m; X = (x - 1.5) Z / 1000, Y = (y - 1.0) Z / 1000 (cx_px, cy_px, fy_px of header())
        np.testing.assert_allclose(xyz[2, 3], [0.015, 0.01, 10.0], rtol=1e-6)
        self.assertIsNone(f.point_colors())

    def test_headers_before_1_3_get_square_pixels_and_the_centre(self):
        h = header(width=5, height=4)
        h["version"]["minor"] = 2
        h["payloads"] = []
        for key in ("fy_px", "cx_px", "cy_px"):
            del h[key]
        f = sc.decode_frame([b"disparity.front", json.dumps(h).encode(), bytes(40)])
        self.assertEqual((f.header["fy_px"], f.header["cx_px"], f.header["cy_px"]),
                         (1000.0, 2.0, 1.5))
        h["version"]["minor"] = 3
        self.assertRefused([b"disparity.front", json.dumps(h).encode(), bytes(40)],
                           "header.fy_px: missing")

    def test_confidence_marks_none_with_zero(self):
        h, parts = v13_message()
        h["payloads"][0]["invalid"] = 255
        parts[1] = json.dumps(h).encode()
        self.assertRefused(parts, "confidence8 marks missing values with 0")
        h, parts = v13_message()
        h["payloads"][2]["stride"] = 62
        parts[1] = json.dumps(h).encode()
        self.assertRefused(parts, "header.payloads[2].stride")

    def test_strided_rows(self):
        h = header(width=3, height=2, stride=8)
        d = np.array([1, 2, 3, 999, 4, 5, 6, 999], dtype="<u2")
        f = sc.decode_frame(message(h, disparity=d, mask=np.zeros(6)))
        np.testing.assert_array_equal(f.disparity, [[1, 2, 3], [4, 5, 6]])

    def test_newer_minor_and_unknown_fields_and_payloads(self):
        h = header()
        h["version"]["minor"] = 5
        h["something_new"] = [1, 2]
        h["payloads"].append({"name": "confidence", "encoding": "conf4", "width": 4, "height": 3,
                              "stride": 2})
        parts = message(h) + [b"\x01" * 6]
        f = sc.decode_frame(parts)
        self.assertEqual(f.payloads["confidence"], b"\x01" * 6)

    def test_failed_frame(self):
        h = header()
        h["status"] = "error"
        h["error"] = "engine failed"
        h["payloads"] = []
        for key in ("width", "height", "stride", "encoding", "invalid"):
            del h[key]
        f = sc.decode_frame([b"disparity.front", json.dumps(h).encode()])
        self.assertFalse(f.ok)
        self.assertIsNone(f.disparity)

    def test_wrong_version(self):
        h = header()
        h["version"]["major"] = 2
        self.assertRefused(message(h), "protocol 2.3 is not supported")
        self.assertRefused([b"disparity.front", b'{"version": {"major": 3, "minor": 0}}'],
                           "protocol 3.0 is not supported")

    def test_missing_parts(self):
        parts = message()
        self.assertRefused(parts[:1], "1 part(s)")
        self.assertRefused(parts[:3], "3 parts, the header names 2 payload(s) so 4 were expected")
        self.assertRefused(parts + [b"x"], "5 parts")

    def test_truncated_and_oversized_payloads(self):
        parts = message()
        parts[2] = parts[2][:-1]
        self.assertRefused(parts, "part 3 (disparity): 23 bytes, the header says 3 rows of 8 = 24")
        parts = message()
        parts[3] += b"zz"
        self.assertRefused(parts, "part 4 (mask): 14 bytes")

    def test_bad_json(self):
        parts = message()
        for text, fragment in ((b"{", "not valid JSON"), (b"[]", "expected a JSON object"),
                               (b"\xff\xfe", "not valid JSON"), (b"[" * 30000, "not valid JSON"),
                               (b'{"version": NaN}', "not a JSON number"),
                               (b" " * (65 * 1024), "more than the")):
            parts[1] = text
            self.assertRefused(parts, fragment)

    def test_sizes_and_fields_are_named(self):
        cases = [
            (lambda h: h.update(width=5), "header.stride: 8 bytes does not fit"),
            (lambda h: h.update(stride=9), "whole number of 2-byte"),
            (lambda h: h.update(width="4"), "header.width: expected an integer"),
            (lambda h: h.update(height=True), "header.height"),
            (lambda h: h.pop("sequence"), "header.sequence: missing"),
            (lambda h: h.update(invalid=0), "header.invalid"),
            (lambda h: h.update(encoding="f32"), "header.encoding"),
            (lambda h: h.update(focal_px=-1), "header.focal_px: negative"),
            (lambda h: h["cameras"][1].pop("name"), "header.cameras[1].name: missing"),
            (lambda h: h["latency_ms"].update(engine="x"), "header.latency_ms.engine"),
            (lambda h: h["payloads"][0].update(name="disparity"), "appears twice"),
            (lambda h: h.update(max_disparity=-1), "header.max_disparity"),
        ]
        for edit, fragment in cases:
            h = header()
            edit(h)
            parts = message(header())
            parts[1] = json.dumps(h).encode()
            self.assertRefused(parts, fragment)

    def test_topic_must_match(self):
        parts = message()
        parts[0] = b"disparity.rear"
        self.assertRefused(parts, "does not match the header's pair")

    def test_randomized_corruption_raises_only_protocol_errors(self):
        rng = random.Random(20240611)
        valid = message()
        decoded = refused = 0
        for _ in range(3000):
            parts = [bytearray(p) for p in copy.deepcopy(valid)]
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(parts))
                kind = rng.randrange(5)
                if kind == 0 and parts[i]:
                    parts[i][rng.randrange(len(parts[i]))] = rng.randrange(256)
                elif kind == 1:
                    del parts[i][rng.randrange(len(parts[i]) + 1):]
                elif kind == 2 and len(parts) > 1:
                    del parts[i]
                elif kind == 3:
                    parts.insert(i, bytearray(parts[i]))
                else:
                    token = rng.choice([b"-1", b"1e999", b"null", b"[]", b"{}", b'"', b"9" * 30])
                    at = rng.randrange(len(parts[1 if len(parts) > 1 else 0]) + 1)
                    parts[1 if len(parts) > 1 else 0][at:at] = token
            try:
                f = sc.decode_frame([bytes(p) for p in parts])
                decoded += 1
                if f.disparity is not None:
                    int(f.disparity.sum())  # every pixel readable
            except sc.ProtocolError:
                refused += 1
        self.assertGreater(decoded, 50)
        self.assertGreater(refused, 1000)

    def test_stats(self):
        doc = {"version": {"major": 1, "minor": 0}, "time_ns": 5, "interval_s": 1.0,
               "pairs": {"front": {"frames": 30, "fps": 30.0, "frames_total": 30,
                                   "drops": {"sync": 0, "engine_busy": 1, "send": 0},
                                   "drops_total": {"sync": 0, "engine_busy": 1, "send": 0},
                                   "errors_total": 0, "last_error": "",
                                   "latency_ms": {"engine": {"count": 30, "p50": 8.0, "p90": 9.0,
                                                             "p99": 9.5, "max": 10.0}}}},
               "publisher": {"queued": 0, "queue_capacity": 16, "frames_sent_total": 30,
                             "zero_copy_payloads_total": 30, "copied_payloads_total": 0}}
        s = sc.decode_stats([b"stats", json.dumps(doc).encode()])
        self.assertEqual(s["pairs"]["front"]["drops"]["engine_busy"], 1)
        del doc["pairs"]["front"]["drops"]["send"]
        with self.assertRaises(sc.ProtocolError) as ctx:
            sc.decode_stats([b"stats", json.dumps(doc).encode()])
        self.assertIn("stats.pairs.front.drops.send: missing", str(ctx.exception))


class Live(unittest.TestCase):
    def test_malformed_then_valid_over_zmq(self):
        ctx = zmq.Context()
        pub = ctx.socket(zmq.PUB)
        pub.setsockopt(zmq.LINGER, 0)
        pub.bind("tcp://127.0.0.1:*")
        endpoint = pub.getsockopt(zmq.LAST_ENDPOINT).decode()
        errors, frames = [], []
        with sc.Subscriber(endpoint, context=ctx) as sub:
            for seq in range(400):
                bad = message(header(sequence=seq))
                bad[2] = bad[2][:5]
                pub.send_multipart(bad)
                pub.send_multipart(message(header(sequence=seq)))
                for _ in range(2):
                    try:
                        msg = sub.receive(10)
                        if msg is not None:
                            frames.append(msg)
                    except sc.ProtocolError as e:
                        errors.append(str(e))
                if errors and frames:
                    break
        pub.close()
        ctx.term()
        self.assertTrue(errors and "part 3 (disparity): 5 bytes" in errors[0], errors[:1])
        self.assertTrue(frames)
        self.assertEqual(frames[-1].disparity.shape, (3, 4))

    def test_sequence_tracker(self):
        t = sc.SequenceTracker()
        self.assertEqual(t.next("a", 5), (0, False))
        self.assertEqual(t.next("a", 8), (2, False))
        self.assertEqual(t.next("a", 1), (0, True))
        self.assertEqual(t.lost_total, 2)


if __name__ == "__main__":
    unittest.main()
