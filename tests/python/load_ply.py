#!/usr/bin/env python3
"""Loads a PLY point cloud the way a viewer would, from the header's description alone, and
prints what it holds as JSON: {"count", "min": [x, y, z], "max": [...], "color": bool}.

    python3 load_ply.py FILE.ply

Reads the ASCII and binary little- and big-endian forms, any vertex properties (only x, y, z and
red, green, blue are reported), and checks that the body has exactly the bytes the header says.
Used by stereod's tests to check the clouds stereod-sub writes (tests/publish/cross_client_test.cpp).
"""

import json
import sys

import numpy as np

TYPES = {"char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2", "int16": "i2",
         "ushort": "u2", "uint16": "u2", "int": "i4", "int32": "i4", "uint": "u4",
         "uint32": "u4", "float": "f4", "float32": "f4", "double": "f8", "float64": "f8"}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    end = data.find(b"end_header\n")
    if not data.startswith(b"ply\n") or end < 0:
        raise ValueError("%s: not a PLY file" % path)
    lines = data[:end].decode("ascii").splitlines()
    body = data[end + len("end_header\n"):]
    fmt, count, props, element = None, None, [], None
    for line in lines[1:]:
        words = line.split()
        if not words or words[0] in ("comment", "obj_info"):
            continue
        if words[0] == "format":
            fmt = words[1]
        elif words[0] == "element":
            element = words[1]
            if element == "vertex":
                count = int(words[2])
            elif int(words[2]) > 0:
                raise ValueError("%s: element %s after the vertices is not read" % (path, element))
        elif words[0] == "property" and element == "vertex":
            if words[1] == "list":
                raise ValueError("%s: list properties on vertices are not read" % path)
            props.append((words[2], TYPES[words[1]]))
    if count is None:
        raise ValueError("%s: no vertex element" % path)
    if fmt == "ascii":
        rows = [r.split() for r in body.decode("ascii").splitlines() if r.strip()]
        if len(rows) != count:
            raise ValueError("%s: %d vertices, the header says %d" % (path, len(rows), count))
        columns = {name: np.array([float(r[i]) for r in rows]) for i, (name, _) in enumerate(props)}
    else:
        order = "<" if fmt == "binary_little_endian" else ">"
        dtype = np.dtype([(name, order + t) for name, t in props])
        if len(body) != count * dtype.itemsize:
            raise ValueError("%s: %d body bytes, the header says %d vertices of %d bytes"
                             % (path, len(body), count, dtype.itemsize))
        v = np.frombuffer(body, dtype=dtype, count=count)
        columns = {name: v[name] for name, _ in props}
    xyz = np.stack([columns["x"], columns["y"], columns["z"]], axis=1).astype(np.float64)
    out = {"count": count, "color": all(c in columns for c in ("red", "green", "blue"))}
    out["min"] = xyz.min(axis=0).tolist() if count else None
    out["max"] = xyz.max(axis=0).tolist() if count else None
    return out


if __name__ == "__main__":
    print(json.dumps(load(sys.argv[1])))
