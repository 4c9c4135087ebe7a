// stereod-view's page: frames and stats from stereod-view's WebSocket (tools/view/page_messages.hpp
// describes the messages), drawn on canvases. Depth and points are computed here from the
// disparity and the header's camera model, as docs/PROTOCOL.md "From disparity to depth" says:
//   d = value / 16,  Z = focal_px * baseline_m / (d - doffs_px),
//   X = (x - cx_px) Z / focal_px,  Y = (y - cy_px) Z / fy_px.
"use strict";

const INVALID = 0xffff;
const HISTORY = 120;  // stats messages kept per pair (about two minutes)

const state = {
  colormap: null,      // 256 [r, g, b] from the hello message: the same map as stereod-sub's
  pairs: [],
  pair: "",            // the pair chosen in the list ("" until the first frame says)
  mode: "disparity",
  paused: false,
  overlay: true,
  frame: null,         // the frame on screen
  frames: 0,
  history: {},         // pair -> [{fps, drops: [sync, busy, send], p50, p99}]
  view: { yaw: -0.3, pitch: 0.2, zoom: 1 },
  socket: null,
};

const $ = (id) => document.getElementById(id);

// --- connection ---------------------------------------------------------------------------

function connect() {
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  ws.binaryType = "arraybuffer";
  ws.onopen = () => setStatus("connected");
  ws.onclose = () => {
    setStatus("disconnected; trying again");
    setTimeout(connect, 1000);
  };
  ws.onmessage = (event) => {
    if (typeof event.data === "string") onText(JSON.parse(event.data));
    else onFrame(decodeFrame(event.data));
  };
  state.socket = ws;
}

function setStatus(text) {
  $("status").textContent = text;
}

function send(message) {
  if (state.socket && state.socket.readyState === WebSocket.OPEN) {
    state.socket.send(JSON.stringify(message));
  }
}

function onText(message) {
  if (message.type === "hello") {
    state.colormap = message.colormap;
    setPairs(message.pairs);
  } else if (message.type === "pairs") {
    setPairs(message.pairs);
  } else if (message.type === "stats") {
    onStats(message.stats);
  } else if (message.type === "error") {
    if (message.pair === state.pair) setStatus(`frame ${message.sequence} failed: ${message.error}`);
  }
}

function setPairs(pairs) {
  state.pairs = pairs;
  const select = $("pair");
  const chosen = state.pair || select.value;
  select.replaceChildren(...pairs.map((p) => new Option(p, p)));
  if (chosen && pairs.includes(chosen)) select.value = chosen;
}

// --- frames ---------------------------------------------------------------------------------

// The binary message: a 4-byte little-endian length, that much JSON ({header, parts}), then the
// parts' bytes. Each part becomes a typed array of its own (copied: 16-bit views need even
// offsets).
function decodeFrame(buffer) {
  const length = new DataView(buffer).getUint32(0, true);
  const meta = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length)));
  const base = 4 + length;
  const frame = { header: meta.header, width: meta.header.width, height: meta.header.height };
  for (const part of meta.parts) {
    const bytes = buffer.slice(base + part.offset, base + part.offset + part.stride * part.height);
    const entry = { encoding: part.encoding, stride: part.stride, width: part.width };
    if (part.encoding === "disp16q4") {
      frame.disparity = Object.assign(entry, { data: new Uint16Array(bytes), step: part.stride / 2 });
    } else if (part.name === "mask" || part.name === "confidence") {
      frame[part.name] = Object.assign(entry, { data: new Uint8Array(bytes) });
    } else if (part.name === "left" && (part.encoding === "gray8" || part.encoding === "rgb8")) {
      frame.left = Object.assign(entry, {
        data: new Uint8Array(bytes), channels: part.encoding === "rgb8" ? 3 : 1 });
    }
  }
  return frame;
}

function onFrame(frame) {
  state.frames += 1;
  $("frames").textContent = state.frames;
  if (!state.pair) {
    state.pair = frame.header.pair;
    $("pair").value = state.pair;
  }
  if (frame.header.pair !== state.pair || state.paused) return;
  state.frame = frame;
  draw();
}

function draw() {
  const frame = state.frame;
  if (!frame) return;
  const h = frame.header;
  $("sequence").textContent = `${h.pair} #${h.sequence}`;
  document.body.dataset.pair = h.pair;
  document.body.dataset.sequence = String(h.sequence);
  $("model").textContent = usable(h)
    ? `fx ${h.focal_px.toFixed(1)} fy ${h.fy_px.toFixed(1)} cx ${h.cx_px.toFixed(1)} ` +
      `cy ${h.cy_px.toFixed(1)} px, baseline ${h.baseline_m.toFixed(3)} m, doffs ${h.doffs_px} px`
    : "the pair has no camera model: no depth";
  drawMain(frame);
  drawLeft(frame);
  drawCloud(frame);
  if (!state.paused) setStatus(`${h.engine} engine, ${h.width}x${h.height}`);
}

function usable(h) {
  return h.focal_px > 0 && h.baseline_m > 0;
}

// Disparity in pixels at (x, y), or NaN.
function disparityAt(frame, x, y) {
  const v = frame.disparity.data[y * frame.disparity.step + x];
  return v === INVALID ? NaN : v / 16;
}

// Metres for a disparity in pixels, or NaN (as the clients' depth_m()).
function depthOf(h, d) {
  const dd = d - h.doffs_px;
  return usable(h) && dd > 0 ? (h.focal_px * h.baseline_m) / dd : NaN;
}

function color(t) {
  const i = Math.max(0, Math.min(255, Math.round(t * 255)));
  return state.colormap ? state.colormap[i] : [i, i, i];
}

// The depth range worth showing: 1st to 99th percentile of a sample of the frame's depths.
function depthRange(frame) {
  const h = frame.header;
  const values = [];
  const n = frame.width * frame.height;
  const step = Math.max(1, Math.floor(n / 20000));
  for (let i = 0; i < n; i += step) {
    const x = i % frame.width, y = Math.floor(i / frame.width);
    const z = depthOf(h, disparityAt(frame, x, y));
    if (Number.isFinite(z)) values.push(z);
  }
  if (!values.length) return null;
  values.sort((a, b) => a - b);
  const near = values[Math.floor(0.01 * (values.length - 1))];
  let far = values[Math.floor(0.99 * (values.length - 1))];
  if (!(far > near)) far = near * 1.01 + 1e-3;
  return { near, far };
}

function drawMain(frame) {
  const h = frame.header;
  const canvas = $("depth-canvas");
  resize(canvas, frame.width, frame.height);
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(frame.width, frame.height);
  const px = image.data;
  const depth = state.mode === "depth" && usable(h);
  const range = depth ? depthRange(frame) : null;
  const lo = h.min_disparity, span = Math.max(h.max_disparity - h.min_disparity, 1);
  for (let y = 0, o = 0; y < frame.height; ++y) {
    for (let x = 0; x < frame.width; ++x, o += 4) {
      px[o + 3] = 255;
      const d = disparityAt(frame, x, y);
      if (Number.isNaN(d)) continue;
      let t;
      if (depth) {
        const z = depthOf(h, d);
        if (!range || !Number.isFinite(z)) continue;
        t = (range.far - z) / (range.far - range.near);
      } else {
        t = (d - lo) / span;
      }
      const c = color(Math.max(0, Math.min(1, t)));
      px[o] = c[0];
      px[o + 1] = c[1];
      px[o + 2] = c[2];
    }
  }
  ctx.putImageData(image, 0, 0);
  $("main-title").textContent = depth ? "Depth" : state.mode === "depth"
    ? "Disparity (the pair has no camera model: no depth)" : "Disparity";
  drawColorBar(h, depth, range);
}

// Round values (1, 2 or 5 times a power of ten) in [lo, hi], about `count` of them.
function niceTicks(lo, hi, count) {
  if (!(hi > lo)) return [];
  const raw = (hi - lo) / count;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
  const decimals = Math.max(0, Math.min(4, -Math.floor(Math.log10(step) + 1e-9)));
  return out.map((v) => ({ value: v, label: v.toFixed(decimals) }));
}

// The bar beside the picture: the colormap from its far end (bottom) to its near end (top), with
// ticks in metres where the camera model allows, in pixels otherwise.
function drawColorBar(h, depth, range) {
  const canvas = $("colorbar");
  canvas.height = $("depth-canvas").getBoundingClientRect().height || canvas.height;
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const top = 18, bottom = canvas.height - 8, x0 = 2, w = 14;
  for (let y = top; y <= bottom; ++y) {
    const c = color((bottom - y) / (bottom - top));
    ctx.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`;
    ctx.fillRect(x0, y, w, 1);
  }
  ctx.fillStyle = "#d8dce4";
  ctx.font = "11px system-ui, sans-serif";
  ctx.textBaseline = "middle";
  const ticks = [];  // {t in [0, 1] from the bottom, label}
  let title;
  if (depth && range) {
    title = "depth";
    for (const k of niceTicks(range.near, range.far, 6)) {
      ticks.push({ t: (range.far - k.value) / (range.far - range.near), label: `${k.label} m` });
    }
  } else if (usable(h)) {
    // Round depths placed at their disparity: d = f B / Z + doffs (not evenly spaced).
    title = "depth";
    const lo = h.min_disparity, span = Math.max(h.max_disparity - h.min_disparity, 1);
    const near = depthOf(h, h.max_disparity);
    const far = Math.min(depthOf(h, Math.max(lo, h.doffs_px + 0.5)), near * 8);
    for (const k of niceTicks(near, far, 6)) {
      const d = (h.focal_px * h.baseline_m) / k.value + h.doffs_px;
      ticks.push({ t: (d - lo) / span, label: `${k.label} m` });
    }
  } else {
    title = "disparity";
    const lo = h.min_disparity, span = Math.max(h.max_disparity - h.min_disparity, 1);
    for (const k of niceTicks(lo, h.max_disparity, 6)) {
      ticks.push({ t: (k.value - lo) / span, label: `${k.label} px` });
    }
  }
  ctx.fillText(title, x0, 8);
  let last = -1e9;
  for (const tick of ticks) {
    if (!(tick.t >= 0 && tick.t <= 1)) continue;
    const y = Math.round(bottom - tick.t * (bottom - top));
    if (Math.abs(y - last) < 13) continue;  // labels must not overlap
    last = y;
    ctx.fillRect(x0 + w - 3, y, 8, 1);
    ctx.fillText(tick.label, x0 + w + 8, y);
  }
}

function resize(canvas, width, height) {
  if (canvas.width !== width) canvas.width = width;
  if (canvas.height !== height) canvas.height = height;
}

// The cursor's pixel and the depth there, from the frame on screen.
function onPointer(event) {
  const frame = state.frame;
  const out = $("readout");
  if (!frame) return;
  const canvas = $("depth-canvas");
  const box = canvas.getBoundingClientRect();
  const x = Math.floor(((event.clientX - box.left) * frame.width) / box.width);
  const y = Math.floor(((event.clientY - box.top) * frame.height) / box.height);
  if (x < 0 || y < 0 || x >= frame.width || y >= frame.height) return;
  const d = disparityAt(frame, x, y);
  const z = depthOf(frame.header, d);
  out.dataset.x = String(x);
  out.dataset.y = String(y);
  out.dataset.sequence = String(frame.header.sequence);
  out.dataset.depth = Number.isFinite(z) ? String(z) : "";
  out.dataset.disparity = Number.isNaN(d) ? "" : String(d);
  let text = `x ${x}, y ${y}: `;
  if (Number.isNaN(d)) text += "no disparity";
  else if (!Number.isFinite(z)) text += `d ${d.toFixed(2)} px, no depth`;
  else text += `${z.toFixed(3)} m (d ${d.toFixed(2)} px)`;
  out.textContent = text;
}

// The left image, and the foreground mask over it in magenta.
function drawLeft(frame) {
  const canvas = $("left-canvas");
  resize(canvas, frame.width, frame.height);
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(frame.width, frame.height);
  const px = image.data;
  const left = frame.left, mask = frame.mask;
  const notes = [];
  if (!left) notes.push("The pair sends no left image (outputs.left: gray or color).");
  if (!mask) notes.push("The pair sends no mask (outputs.mask).");
  for (let y = 0, o = 0; y < frame.height; ++y) {
    for (let x = 0; x < frame.width; ++x, o += 4) {
      let r = 40, g = 40, b = 40;
      if (left) {
        const i = y * left.stride + x * left.channels;
        r = left.data[i];
        g = left.channels === 3 ? left.data[i + 1] : r;
        b = left.channels === 3 ? left.data[i + 2] : r;
      }
      if (state.overlay && mask && mask.data[y * mask.stride + x]) {
        r = 0.55 * r + 0.45 * 255;
        g = 0.55 * g + 0.45 * 40;
        b = 0.55 * b + 0.45 * 200;
      }
      px[o] = r;
      px[o + 1] = g;
      px[o + 2] = b;
      px[o + 3] = 255;
    }
  }
  ctx.putImageData(image, 0, 0);
  $("left-note").textContent = notes.join(" ");
}

// --- point cloud ------------------------------------------------------------------------------

// Points of the frame (at most about 40 000), in metres, with their colors.
function points(frame) {
  const h = frame.header;
  const out = [];
  if (!usable(h)) return out;
  let valid = 0;
  for (const v of frame.disparity.data) valid += v !== INVALID;
  const step = Math.max(1, Math.ceil(Math.sqrt(valid / 40000)));
  const range = depthRange(frame);
  for (let y = 0; y < frame.height; y += step) {
    for (let x = 0; x < frame.width; x += step) {
      const z = depthOf(h, disparityAt(frame, x, y));
      if (!Number.isFinite(z)) continue;
      let c;
      if (frame.left) {
        const i = y * frame.left.stride + x * frame.left.channels;
        const r = frame.left.data[i];
        c = frame.left.channels === 3 ? [r, frame.left.data[i + 1], frame.left.data[i + 2]] : [r, r, r];
      } else {
        c = color(range ? (range.far - z) / (range.far - range.near) : 0.5);
      }
      out.push({ x: ((x - h.cx_px) * z) / h.focal_px, y: ((y - h.cy_px) * z) / h.fy_px, z, c });
    }
  }
  return out;
}

// How points go onto the canvas: turned about the cloud's centre (mean X and Y, median Z) by the
// view's yaw (about the vertical axis) and pitch, seen from a distance that fits most of it (a few
// stray points far out must not shrink the rest to a dot). Returns the centre, that radius and
// project: (x, y, z) -> {u, v, depth}.
function cloudProjection(pts, W, H) {
  let cx = 0, cy = 0;
  for (const p of pts) { cx += p.x; cy += p.y; }
  cx /= pts.length;
  cy /= pts.length;
  const zs = pts.map((p) => p.z).sort((a, b) => a - b);
  const cz = zs[Math.floor(zs.length / 2)];
  const distances = pts.map((p) => Math.hypot(p.x - cx, p.y - cy, p.z - cz)).sort((a, b) => a - b);
  const radius = distances[Math.floor(0.95 * (distances.length - 1))];
  const { yaw, pitch, zoom } = state.view;
  const cosY = Math.cos(yaw), sinY = Math.sin(yaw), cosP = Math.cos(pitch), sinP = Math.sin(pitch);
  const distance = 2.2 * radius + 1e-6;
  const scale = (0.9 * Math.min(W, H) * zoom * distance) / (2 * radius + 1e-6);
  const project = (x, y, z) => {
    x -= cx; y -= cy; z -= cz;
    const x1 = cosY * x + sinY * z, z1 = -sinY * x + cosY * z;
    const y2 = cosP * y - sinP * z1, z2 = sinP * y + cosP * z1;
    const depth = z2 + distance;
    const d = Math.max(depth, 1e-3);
    return { u: W / 2 + (scale * x1) / d, v: H / 2 + (scale * y2) / d, depth };
  };
  return { centre: [cx, cy, cz], radius, project };
}

function drawCloud(frame) {
  const canvas = $("cloud-canvas");
  const ctx = canvas.getContext("2d");
  const W = canvas.width, H = canvas.height;
  const image = ctx.createImageData(W, H);
  const px = image.data;
  for (let o = 0; o < px.length; o += 4) {
    px[o] = 12; px[o + 1] = 14; px[o + 2] = 18; px[o + 3] = 255;
  }
  const pts = points(frame);
  $("cloud-note").textContent = pts.length ? `${pts.length} points` : "no points (no depth)";
  const view = pts.length ? cloudProjection(pts, W, H) : null;
  if (view) {
    const project = view.project;
    const zbuffer = new Float32Array(W * H).fill(Infinity);
    for (const p of pts) {
      const q = project(p.x, p.y, p.z);
      const depth = q.depth;
      if (depth <= 1e-6) continue;
      const u = Math.round(q.u);
      const v = Math.round(q.v);
      for (let dv = 0; dv < 2; ++dv) {
        for (let du = 0; du < 2; ++du) {
          const uu = u + du, vv = v + dv;
          if (uu < 0 || vv < 0 || uu >= W || vv >= H) continue;
          const k = vv * W + uu;
          if (depth >= zbuffer[k]) continue;
          zbuffer[k] = depth;
          px[4 * k] = p.c[0];
          px[4 * k + 1] = p.c[1];
          px[4 * k + 2] = p.c[2];
        }
      }
    }
  }
  ctx.putImageData(image, 0, 0);
  if (view) drawAxes(ctx, view);
}

// The directions of the camera's axes, drawn from the cloud's centre: x red (right), y green
// (down), z blue (forward, away from the camera), so that one sees how the cloud is turned.
function drawAxes(ctx, view) {
  const [cx, cy, cz] = view.centre;
  const length = 0.35 * view.radius;
  const at = (x, y, z) => {
    const q = view.project(cx + x, cy + y, cz + z);
    return [q.u, q.v];
  };
  const origin = at(0, 0, 0);
  const axes = [[[length, 0, 0], "#ff6b6b", "x"], [[0, length, 0], "#6bff8a", "y"],
                [[0, 0, length], "#6ba8ff", "z"]];
  ctx.lineWidth = 2;
  ctx.font = "11px system-ui, sans-serif";
  for (const [end, style, name] of axes) {
    const e = at(...end);
    ctx.strokeStyle = ctx.fillStyle = style;
    ctx.beginPath();
    ctx.moveTo(origin[0], origin[1]);
    ctx.lineTo(e[0], e[1]);
    ctx.stroke();
    ctx.fillText(name, e[0] + 3, e[1] + 3);
  }
}

function setupCloudControls() {
  const canvas = $("cloud-canvas");
  let drag = null;
  canvas.addEventListener("pointerdown", (e) => {
    drag = { x: e.clientX, y: e.clientY };
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener("pointermove", (e) => {
    if (!drag) return;
    state.view.yaw += (e.clientX - drag.x) * 0.01;
    state.view.pitch = Math.max(-1.5, Math.min(1.5, state.view.pitch + (e.clientY - drag.y) * 0.01));
    drag = { x: e.clientX, y: e.clientY };
    if (state.frame) drawCloud(state.frame);
  });
  canvas.addEventListener("pointerup", () => { drag = null; });
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    state.view.zoom = Math.max(0.2, Math.min(20, state.view.zoom * Math.exp(-e.deltaY * 0.001)));
    if (state.frame) drawCloud(state.frame);
  }, { passive: false });
  canvas.addEventListener("dblclick", () => {
    state.view = { yaw: -0.3, pitch: 0.2, zoom: 1 };
    if (state.frame) drawCloud(state.frame);
  });
}

// --- stats ----------------------------------------------------------------------------------

function onStats(stats) {
  for (const [pair, p] of Object.entries(stats.pairs)) {
    const total = (p.latency_ms && p.latency_ms.total) || { count: 0 };
    const entry = {
      fps: p.fps,
      drops: ["sync", "engine_busy", "send"].map((r) => (p.drops[r] || 0) / (stats.interval_s || 1)),
      p50: total.count ? total.p50 : NaN,
      p99: total.count ? total.p99 : NaN,
    };
    const list = (state.history[pair] = state.history[pair] || []);
    list.push(entry);
    if (list.length > HISTORY) list.shift();
  }
  drawPlots();
}

const PLOT_COLORS = ["#e8c547", "#58a6ff", "#ff7b72"];

// Lines of `series` (arrays of numbers, NaN = no value) over the canvas, scaled to their maximum,
// with that maximum and the newest values written in.
function plot(canvas, series, unit) {
  const ctx = canvas.getContext("2d");
  const W = canvas.width, H = canvas.height;
  ctx.clearRect(0, 0, W, H);
  let max = 0;
  for (const s of series) for (const v of s) if (Number.isFinite(v)) max = Math.max(max, v);
  max = max > 0 ? max * 1.15 : 1;
  ctx.strokeStyle = "#2c313b";
  ctx.beginPath();
  ctx.moveTo(0, H - 0.5);
  ctx.lineTo(W, H - 0.5);
  ctx.stroke();
  series.forEach((s, k) => {
    ctx.strokeStyle = PLOT_COLORS[k % PLOT_COLORS.length];
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    let pen = false;
    s.forEach((v, i) => {
      if (!Number.isFinite(v)) { pen = false; return; }
      const x = W - (s.length - 1 - i) * (W / (HISTORY - 1)) - 1;
      const y = H - 2 - (v / max) * (H - 14);
      if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y);
      pen = true;
    });
    ctx.stroke();
  });
  ctx.fillStyle = "#8a93a3";
  ctx.font = "10px system-ui, sans-serif";
  ctx.fillText(`max ${max.toFixed(1)} ${unit}`, 4, 10);
  const latest = series.map((s) => s[s.length - 1]).filter(Number.isFinite);
  ctx.textAlign = "right";
  ctx.fillText(latest.map((v) => v.toFixed(1)).join(" / "), W - 4, 10);
  ctx.textAlign = "left";
}

function drawPlots() {
  const pair = state.pair || Object.keys(state.history)[0];
  const list = state.history[pair];
  $("stats-pair").textContent = pair ? `of ${pair}` : "";
  if (!list) {
    $("stats-note").textContent = "no stats for this pair yet";
    return;
  }
  $("stats-note").textContent = "";
  plot($("plot-fps"), [list.map((e) => e.fps)], "/s");
  plot($("plot-drops"), [0, 1, 2].map((r) => list.map((e) => e.drops[r])), "/s");
  plot($("plot-latency"), [list.map((e) => e.p50), list.map((e) => e.p99)], "ms");
}

// --- controls -------------------------------------------------------------------------------

function setup() {
  $("pair").addEventListener("change", (e) => {
    state.pair = e.target.value;
    state.frame = null;
    send({ pair: state.pair });
    drawPlots();
  });
  $("mode").addEventListener("change", (e) => {
    state.mode = e.target.value;
    draw();
  });
  $("overlay").addEventListener("change", (e) => {
    state.overlay = e.target.checked;
    if (state.frame) drawLeft(state.frame);
  });
  $("pause").addEventListener("click", () => {
    state.paused = !state.paused;
    $("pause").textContent = state.paused ? "Resume" : "Pause";
    document.body.dataset.paused = String(state.paused);
    if (state.paused && state.frame) setStatus(`paused at ${state.frame.header.pair} #${state.frame.header.sequence}`);
  });
  $("depth-canvas").addEventListener("mousemove", onPointer);
  setupCloudControls();
  connect();
}

setup();
