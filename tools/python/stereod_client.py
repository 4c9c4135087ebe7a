#!/usr/bin/env python3
"""Receive stereod's disparity stream (docs/PROTOCOL.md) with pyzmq and numpy.

    from stereod_client import Subscriber, Frame
    with Subscriber("ipc:///run/stereod/stereod.sock") as sub:
        msg = sub.receive(timeout_ms=1000)      # a Frame, a Stats, or None on timeout
        if isinstance(msg, Frame) and msg.ok:
            d = msg.disparity                   # H x W uint16, 16*d, 0xFFFF = none (read-only)
            z = msg.depth_m()                   # float32 metres from the header's calibration
            xyz = msg.xyz()                     # H x W x 3 float32 metres, left camera frame

Every message is validated; a malformed one raises ProtocolError (a ValueError) saying what was
wrong and where, and the next receive() reads the next message.

As a program: python3 stereod_client.py [--endpoint E] [--pair P] [--count N] [--stats]
[--dump DIR] [--server-key FILE] [--client-key FILE] [--timeout S]
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import zmq
import zmq.auth

PROTOCOL_MAJOR = 1
FRAME_PREFIX = b"disparity."
STATS_TOPIC = b"stats"
# Known payload encodings: numpy dtype (little-endian) of one sample, and samples per pixel.
ENCODINGS = {
    "disp16q4": (np.dtype("<u2"), 1),
    "mask8": (np.dtype("u1"), 1),
    "depth16mm": (np.dtype("<u2"), 1),
    # since 1.3
    "confidence8": (np.dtype("u1"), 1),
    "gray8": (np.dtype("u1"), 1),
    "rgb8": (np.dtype("u1"), 3),
    "xyz32f": (np.dtype("<f4"), 3),
    "xyzrgb32f": (np.dtype("<f4"), 4),  # X, Y, Z, and uint32 0x00RRGGBB in the fourth float
    "direction8": (np.dtype("u1"), 1),  # trinocular pairs: 0 none, 1 horizontal, 2 vertical
}
# Encodings whose "no value" is fixed: a header must say so.
FIXED_INVALID = {"disp16q4": 0xFFFF, "depth16mm": 0, "confidence8": 0}
DISPARITY_INVALID = 0xFFFF
DEPTH_INVALID = 0
MAX_SIDE = 1 << 15
MAX_STRIDE = 1 << 20
MAX_HEADER_BYTES = 64 * 1024
MAX_STATS_BYTES = 1 << 20
MAX_PARTS = 32


class ProtocolError(ValueError):
    """A message that does not follow docs/PROTOCOL.md."""


def default_endpoint():
    """Where the daemon binds by default: ipc://<runtime directory>/stereod.sock."""
    runtime = os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0]
    runtime = runtime or os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    return "ipc://%s/stereod.sock" % runtime


# --- checked field access: every failure names the field's path -------------------------------

def _get(obj, key, path):
    if key not in obj:
        raise ProtocolError("%s.%s: missing" % (path, key))
    return obj[key]


def _fail(path, key, expected, value):
    text = json.dumps(value)
    text = text if len(text) <= 40 else text[:40] + "..."
    raise ProtocolError("%s.%s: expected %s, got %s" % (path, key, expected, text))


def _int(obj, key, path, lo, hi):
    v = _get(obj, key, path)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        _fail(path, key, "an integer in [%d, %d]" % (lo, hi), v)
    return v


def _uint(obj, key, path):
    return _int(obj, key, path, 0, (1 << 64) - 1)


def _number(obj, key, path, minimum=None):
    v = _get(obj, key, path)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        _fail(path, key, "a finite number", v)
    if minimum is not None and v < minimum:
        raise ProtocolError("%s.%s: negative" % (path, key))
    return v


def _str(obj, key, path, nonempty=False):
    v = _get(obj, key, path)
    if not isinstance(v, str) or (nonempty and not 1 <= len(v.encode()) <= 256):
        _fail(path, key, "a string" + (" of 1 to 256 bytes" if nonempty else ""), v)
    return v


def _bool(obj, key, path):
    v = _get(obj, key, path)
    if not isinstance(v, bool):
        _fail(path, key, "true or false", v)
    return v


def _obj(obj, key, path):
    v = _get(obj, key, path)
    if not isinstance(v, dict):
        _fail(path, key, "an object", v)
    return v


def _list(obj, key, path, most):
    v = _get(obj, key, path)
    if not isinstance(v, list):
        _fail(path, key, "an array", v)
    if len(v) > most:
        raise ProtocolError("%s.%s: %d entries, at most %d expected" % (path, key, len(v), most))
    return v


def _reject_constant(name):
    raise ProtocolError("not valid JSON (%s is not a JSON number)" % name)


def _parse_json(data, what, max_bytes):
    if len(data) > max_bytes:
        raise ProtocolError("%s: %d bytes, more than the %d allowed" % (what, len(data), max_bytes))
    try:
        value = json.loads(bytes(data).decode("utf-8"), parse_constant=_reject_constant)
    except ProtocolError as e:
        raise ProtocolError("%s: %s" % (what, e)) from None
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise ProtocolError("%s: not valid JSON (%s)" % (what, e)) from None
    if not isinstance(value, dict):
        raise ProtocolError("%s: expected a JSON object, got %s" % (what, type(value).__name__))
    return value


def _check_version(doc, what):
    v = _obj(doc, "version", what)
    major = _int(v, "major", what + ".version", 0, 1 << 16)
    minor = _int(v, "minor", what + ".version", 0, 1 << 16)
    if major != PROTOCOL_MAJOR:
        raise ProtocolError("%s.version: protocol %d.%d is not supported (this client reads %d.x)"
                            % (what, major, minor, PROTOCOL_MAJOR))


def _layout(entry, path, name, encoding):
    width = _int(entry, "width", path, 1, MAX_SIDE)
    height = _int(entry, "height", path, 1, MAX_SIDE)
    stride = _uint(entry, "stride", path)
    dtype, channels = ENCODINGS.get(encoding, (None, 0))
    row = width * channels * (dtype.itemsize if dtype is not None else 0)
    if stride < row or stride > MAX_STRIDE or stride == 0:
        raise ProtocolError("%s.stride: %d bytes does not fit a row of %d %s pixels"
                            % (path, stride, width, encoding))
    if dtype is not None and stride % dtype.itemsize:
        raise ProtocolError("%s.stride: %d bytes is not a whole number of %d-byte samples"
                            % (path, stride, dtype.itemsize))
    invalid = _int(entry, "invalid", path, 0, 0xFFFFFFFF) if "invalid" in entry else None
    return {"name": name, "encoding": encoding, "width": width, "height": height,
            "stride": stride, "invalid": invalid}


def decode_header(data):
    """Parses and validates a frame header (bytes); returns the dict. Raises ProtocolError."""
    h = _parse_json(data, "header", MAX_HEADER_BYTES)
    _check_version(h, "header")  # first: another major version may lack every other field
    p = "header"
    _str(h, "pair", p, nonempty=True)
    _uint(h, "sequence", p)
    status = _str(h, "status", p)
    if status not in ("ok", "error"):
        _fail(p, "status", '"ok" or "error"', status)
    if status == "error" and not _str(h, "error", p):
        raise ProtocolError("header.error: empty for a failed frame")
    layouts = []
    if status == "ok":
        encoding = _str(h, "encoding", p)
        if encoding != "disp16q4":
            raise ProtocolError('header.encoding: "%s" is not a disparity encoding this client '
                                'reads (disp16q4)' % encoding[:40])
        layout = _layout(h, p, "disparity", encoding)
        if layout["invalid"] != DISPARITY_INVALID:
            raise ProtocolError("header.invalid: disp16q4 marks missing values with 65535")
        layouts.append(layout)
    _int(h, "capture_ns", p, 0, (1 << 63) - 1)
    for i, cam in enumerate(_list(h, "cameras", p, 16)):
        cp = "header.cameras[%d]" % i
        if not isinstance(cam, dict):
            raise ProtocolError("%s: expected an object" % cp)
        _str(cam, "name", cp, nonempty=True)
        _int(cam, "capture_ns", cp, 0, (1 << 63) - 1)
    for key in ("complete_ns", "ready_ns", "publish_ns"):
        _int(h, key, p, 0, (1 << 63) - 1)
    latency = _obj(h, "latency_ms", p)
    if len(latency) > 64:
        raise ProtocolError("header.latency_ms: %d stages, at most 64 expected" % len(latency))
    for stage in latency:
        _number(latency, stage, "header.latency_ms")
    _number(h, "focal_px", p, minimum=0)
    _number(h, "baseline_m", p, minimum=0)
    _number(h, "doffs_px", p)
    if _int(h["version"], "minor", "header.version", 0, 1 << 16) >= 3:
        _number(h, "fy_px", p, minimum=0)
        _number(h, "cx_px", p)
        _number(h, "cy_px", p)
    else:  # before 1.3: square pixels, the principal point at the image's centre
        h["fy_px"] = h["focal_px"]
        h["cx_px"] = (h["width"] - 1) / 2.0 if status == "ok" else 0.0
        h["cy_px"] = (h["height"] - 1) / 2.0 if status == "ok" else 0.0
    lo = _int(h, "min_disparity", p, 0, 0xFFFE // 16)
    hi = _int(h, "max_disparity", p, 0, 0xFFFE // 16 + 1)
    if hi < lo:
        raise ProtocolError("header.max_disparity: %d is below min_disparity %d" % (hi, lo))
    _bool(h, "background", p)
    _uint(h, "config_generation", p)
    _str(h, "engine", p)
    _int(h, "levels", p, 0, 32)
    extra = _list(h, "payloads", p, 16)
    if status == "error" and extra:
        raise ProtocolError("header.payloads: a failed frame carries no payloads")
    names = set()
    for i, entry in enumerate(extra):
        ep = "header.payloads[%d]" % i
        if not isinstance(entry, dict):
            raise ProtocolError("%s: expected an object" % ep)
        name = _str(entry, "name", ep, nonempty=True)
        if name == "disparity" or name in names:
            raise ProtocolError('%s.name: "%s" appears twice in the frame' % (ep, name[:40]))
        names.add(name)
        layout = _layout(entry, ep, name, _str(entry, "encoding", ep, nonempty=True))
        fixed = FIXED_INVALID.get(layout["encoding"])
        if fixed is not None and layout["invalid"] != fixed:
            raise ProtocolError("%s.invalid: %s marks missing values with %d"
                                % (ep, layout["encoding"], fixed))
        layouts.append(layout)
    h["_layouts"] = layouts
    return h


def _buffer(part):
    """The bytes of a received part without copying (zmq.Frame, bytes or memoryview)."""
    if isinstance(part, zmq.Frame):
        return part.buffer
    return memoryview(part)


class Frame:
    """One frame: `header` (dict, as in docs/PROTOCOL.md), numpy views of the payloads."""

    def __init__(self, topic, header, payloads, raw):
        self.topic = topic
        self.header = header
        self.payloads = payloads  # name -> numpy array (known encodings) or bytes
        self.raw = raw            # name -> the payload's bytes as received
        self.disparity = payloads.get("disparity")
        self.mask = payloads.get("mask")
        self.depth = payloads.get("depth")
        # since 1.3, None unless the pair sends them
        self.confidence = payloads.get("confidence")  # H x W uint8, 0 = none, 255 = most certain
        self.left = payloads.get("left")              # H x W (gray8) or H x W x 3 (rgb8) uint8
        self.points = payloads.get("points")          # H x W x 3 (xyz32f) or x 4 (xyzrgb32f)

    @property
    def pair(self):
        return self.header["pair"]

    @property
    def sequence(self):
        return self.header["sequence"]

    @property
    def ok(self):
        return self.header["status"] == "ok"

    def disparity_px(self):
        """Disparity in pixels (value / 16) as float32, NaN where there is none."""
        d = self.disparity.astype(np.float32) / 16.0
        d[self.disparity == DISPARITY_INVALID] = np.nan
        return d

    def depth_m(self):
        """Depth in metres, depth = f * B / (d - doffs); NaN where there is none (or no calibration)."""
        f, b, doffs = (self.header[k] for k in ("focal_px", "baseline_m", "doffs_px"))
        d = self.disparity_px() - np.float32(doffs)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.float32(f * b) / d
        z[~(d > 0)] = np.nan
        if not (f > 0 and b > 0):
            z[:] = np.nan
        return z


    def xyz(self):
        """H x W x 3 float32: X, Y, Z in metres in the left camera's frame (X right, Y down, Z
        forward), NaN where there is no depth; the points payload when the frame has one, else
        computed from the disparity and the header's camera model."""
        if self.points is not None:
            return self.points[:, :, :3]
        h = self.header
        z = self.depth_m()
        ys, xs = np.indices(z.shape, dtype=np.float32)
        xyz = np.empty(z.shape + (3,), np.float32)
        xyz[:, :, 0] = (xs - np.float32(h["cx_px"])) * z / np.float32(h["focal_px"] or np.nan)
        xyz[:, :, 1] = (ys - np.float32(h["cy_px"])) * z / np.float32(h["fy_px"] or np.nan)
        xyz[:, :, 2] = z
        return xyz

    def point_colors(self):
        """H x W x 3 uint8 R, G, B of the xyzrgb32f points payload; None without one."""
        if self.points is None or self.points.shape[2] != 4:
            return None
        packed = np.ascontiguousarray(self.points[:, :, 3]).view("<u4")
        return np.stack([(packed >> 16) & 255, (packed >> 8) & 255, packed & 255],
                        axis=2).astype(np.uint8)


class Stats(dict):
    """A stats-topic snapshot (docs/PROTOCOL.md "Stats topic"), as its JSON object."""


def decode_frame(parts):
    """Validates a frame message (every part, topic first); returns a Frame. Raises ProtocolError."""
    if len(parts) < 2:
        raise ProtocolError("message: %d part(s), a frame has at least a topic and a header"
                            % len(parts))
    topic = bytes(_buffer(parts[0]))
    header = decode_header(_buffer(parts[1]))
    expected = FRAME_PREFIX + header["pair"].encode()
    if topic != expected:
        raise ProtocolError("part 1 (topic): %r does not match the header's pair (%r expected)"
                            % (topic[:60], expected))
    layouts = header.pop("_layouts")
    if len(parts) != 2 + len(layouts):
        raise ProtocolError("message: %d parts, the header names %d payload(s) so %d were expected"
                            % (len(parts), len(layouts), 2 + len(layouts)))
    payloads, raw = {}, {}
    for i, layout in enumerate(layouts):
        buf = _buffer(parts[2 + i])
        size = layout["stride"] * layout["height"]
        if buf.nbytes != size:
            raise ProtocolError("part %d (%s): %d bytes, the header says %d rows of %d = %d"
                                % (3 + i, layout["name"], buf.nbytes, layout["height"],
                                   layout["stride"], size))
        raw[layout["name"]] = buf
        dtype, channels = ENCODINGS.get(layout["encoding"], (None, 0))
        if dtype is None:
            payloads[layout["name"]] = bytes(buf)
            continue
        if channels == 1:
            shape, strides = (layout["height"], layout["width"]), (layout["stride"], dtype.itemsize)
        else:
            shape = (layout["height"], layout["width"], channels)
            strides = (layout["stride"], channels * dtype.itemsize, dtype.itemsize)
        payloads[layout["name"]] = np.ndarray(shape=shape, dtype=dtype, buffer=buf,
                                              strides=strides)
    return Frame(topic, header, payloads, raw)


def decode_stats(parts):
    """Validates a stats message; returns a Stats dict. Raises ProtocolError."""
    if len(parts) != 2:
        raise ProtocolError("stats message: %d parts, expected 2 (topic, JSON)" % len(parts))
    doc = _parse_json(_buffer(parts[1]), "stats", MAX_STATS_BYTES)
    _check_version(doc, "stats")
    _int(doc, "time_ns", "stats", 0, (1 << 63) - 1)
    _number(doc, "interval_s", "stats", minimum=0)
    for name, pair in _obj(doc, "pairs", "stats").items():
        path = "stats.pairs." + name
        if not isinstance(pair, dict):
            raise ProtocolError("%s: expected an object" % path)
        _uint(pair, "frames", path)
        _number(pair, "fps", path, minimum=0)
        for key in ("drops", "drops_total"):
            drops = _obj(pair, key, path)
            for reason in ("sync", "engine_busy", "send"):
                _uint(drops, reason, path + "." + key)
        _obj(pair, "latency_ms", path)
    _obj(doc, "publisher", "stats")
    return Stats(doc)


class SequenceTracker:
    """Frames lost between the daemon and this subscriber, from each pair's sequence numbers."""

    def __init__(self):
        self.last = {}
        self.lost_total = 0

    def next(self, pair, sequence):
        """Returns (lost_before_this_one, restarted)."""
        last = self.last.get(pair)
        self.last[pair] = sequence
        if last is None:
            return 0, False
        if sequence <= last:
            return 0, True
        self.lost_total += sequence - last - 1
        return sequence - last - 1, False


class Subscriber:
    """A SUB socket on the daemon's endpoint. pairs: name prefixes ("" = every pair)."""

    def __init__(self, endpoint=None, pairs=("",), stats=False, server_key=None, client_key=None,
                 rcvhwm=4, context=None):
        self._context = context or zmq.Context.instance()
        self.socket = self._context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.RCVHWM, rcvhwm)
        self.socket.setsockopt(zmq.LINGER, 0)
        if server_key:
            self._set_curve(server_key, client_key)
        for prefix in pairs:
            self.socket.setsockopt(zmq.SUBSCRIBE, FRAME_PREFIX + prefix.encode())
        if stats:
            self.socket.setsockopt(zmq.SUBSCRIBE, STATS_TOPIC)
        self.socket.connect(endpoint or default_endpoint())

    def _set_curve(self, server_key, client_key):
        if not zmq.has("curve"):
            raise RuntimeError("server key: CURVE needs a libzmq built with it, and this one "
                               "(%s) was not" % zmq.zmq_version())
        server_public, _ = zmq.auth.load_certificate(server_key)
        if client_key:
            public, secret = zmq.auth.load_certificate(client_key)
            if secret is None:
                raise ValueError("%s: a public certificate; the client needs its secret one"
                                 % client_key)
        else:
            public, secret = zmq.curve_keypair()
        self.socket.curve_serverkey = server_public
        self.socket.curve_publickey = public
        self.socket.curve_secretkey = secret

    def receive(self, timeout_ms=None):
        """The next Frame or Stats; None when nothing came within timeout_ms (None = wait)."""
        if not self.socket.poll(timeout_ms):
            return None
        parts = []
        while True:  # all parts of one message are there once the first is
            part = self.socket.recv(copy=False)
            if len(parts) < MAX_PARTS:
                parts.append(part)
            if not part.more:
                break
        if len(parts) >= MAX_PARTS:
            raise ProtocolError("message: more than %d parts, no stereod message has that many"
                                % (MAX_PARTS - 1))
        if bytes(_buffer(parts[0])) == STATS_TOPIC:
            return decode_stats(parts)
        return decode_frame(parts)

    def close(self):
        self.socket.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _frame_line(frame, now_ns):
    h = frame.header
    line = "%s #%d" % (h["pair"], h["sequence"])
    if not frame.ok:
        return line + "  error: " + h["error"]
    if h["capture_ns"] > 0:
        line += "  latency %.1f ms" % ((now_ns - h["capture_ns"]) / 1e6)
    d = frame.disparity
    valid = d[d != DISPARITY_INVALID]
    if valid.size:
        line += "  valid %.1f %%  d %.2f..%.2f px" % (
            100.0 * valid.size / d.size, valid.min() / 16.0, valid.max() / 16.0)
    else:
        line += "  valid 0.0 %"
    if h.get("foreground_without_disparity") is not None:
        line += "  fg without d %d" % h["foreground_without_disparity"]
    return line


def _dump(directory, frame):
    base = os.path.join(directory, "%s_%08d" % (frame.pair, frame.sequence))
    with open(base + "_header.json", "w") as f:
        json.dump(frame.header, f)
    for name, data in frame.raw.items():
        with open("%s_%s.bin" % (base, name), "wb") as f:
            f.write(bytes(data))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Receive a stereod disparity stream.")
    ap.add_argument("--endpoint", default=default_endpoint())
    ap.add_argument("--pair", action="append", help="pair-name prefix (repeatable)")
    ap.add_argument("--count", type=int, default=0, help="stop after N messages (0 = never)")
    ap.add_argument("--stats", action="store_true", help="print the stats topic instead")
    ap.add_argument("--dump", help="write each frame's header and raw payloads into this folder")
    ap.add_argument("--server-key", help="CURVE: the server's certificate")
    ap.add_argument("--client-key", help="CURVE: this client's secret certificate")
    ap.add_argument("--timeout", type=float, default=0,
                    help="exit 1 when nothing arrives for this many seconds (0 = wait forever)")
    args = ap.parse_args(argv)
    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
    sub = Subscriber(args.endpoint, pairs=() if args.stats else (args.pair or [""]),
                     stats=args.stats, server_key=args.server_key, client_key=args.client_key)
    tracker = SequenceTracker()
    received = malformed = 0
    last_arrival = time.monotonic()
    while args.count == 0 or received < args.count:
        try:
            msg = sub.receive(200)
        except ProtocolError as e:
            malformed += 1
            print("malformed message: %s" % e, file=sys.stderr)
            continue
        if msg is None:
            if args.timeout and time.monotonic() - last_arrival > args.timeout:
                print("nothing from %s for %g s (is the daemon publishing there? It logs "
                      "\"publishing on ...\")" % (args.endpoint, args.timeout), file=sys.stderr)
                return 1
            continue
        last_arrival = time.monotonic()
        received += 1
        if isinstance(msg, Stats):
            print(json.dumps(msg), flush=True)
            continue
        lost, restarted = tracker.next(msg.pair, msg.sequence)
        if lost:
            print("%s: %d frame(s) lost before #%d" % (msg.pair, lost, msg.sequence))
        elif restarted:
            print("%s: sequence restarted at #%d" % (msg.pair, msg.sequence))
        print(_frame_line(msg, time.time_ns()), flush=True)
        if args.dump:
            _dump(args.dump, msg)
    if not args.stats:
        print("received %d frame(s), lost %d, malformed %d"
              % (received, tracker.lost_total, malformed), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
