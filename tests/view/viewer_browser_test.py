#!/usr/bin/env python3
"""stereod-view in a real browser (Debian's chromium, headless, driven through chromedriver by
Selenium): the daemon runs two synthetic pairs, stereod-view serves its page, and the page must
load with nothing from the network, receive frames, draw every canvas, switch pairs, and show
under the cursor the depth the Python client computes for that pixel of that frame.

    viewer_browser_test.py --daemon build/daemon/stereod --view build/tools/view/stereod-view
        [--config FILE] [--screenshots DIR] [--keep-going]

With --config (e.g. config/stereod.yaml) the daemon runs that file instead (its endpoint is
replaced); --screenshots saves pictures of the page (docs/viewer-*.png were made so). Exits 0
when every check passes, 1 naming the first that failed, 77 when chromium, chromedriver or
Selenium are missing (CTest counts that as skipped; dev.sh installs all three).
"""

import argparse
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# What headless Chromium needs on a machine without a display or network (and as root).
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-quic", "--disable-dev-shm-usage",
                  "--window-size=1480,1100", "--force-device-scale-factor=1"]

TWO_PAIRS = """
logging: {level: info}
cameras:
  - {name: fl, source: 'synthetic://left?objects=3&seed=1&max_disparity=32', width: 192, height: 144, fps: 8, color: true}
  - {name: fr, source: 'synthetic://right?objects=3&seed=1&max_disparity=32', width: 192, height: 144, fps: 8, color: true}
  - {name: rl, source: 'synthetic://left?objects=2&seed=7&max_disparity=32', width: 192, height: 144, fps: 8, color: true}
  - {name: rr, source: 'synthetic://right?objects=2&seed=7&max_disparity=32', width: 192, height: 144, fps: 8, color: true}
rigs:
  - {name: front, cameras: [fl, fr]}
  - {name: rear, cameras: [rl, rr]}
pairs:
  - {name: front, left: fl, right: fr, stereo: {max_disparity: 32}, background: {warmup: 10}}
  - {name: rear, left: rl, right: rr, stereo: {max_disparity: 32}, background: {warmup: 10},
     outputs: {left: gray}}
publish:
  endpoint: '{endpoint}'
  stats_interval_ms: 500
  outputs: {mask: true, left: color}
"""

# Pixels of each canvas that differ from its empty state.
COUNT_DRAWN = """
const ids = arguments[0];
const out = {};
for (const id of ids) {
  const c = document.getElementById(id);
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const bg = [d[0], d[1], d[2], d[3]];
  let drawn = 0, differs = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i + 3] && (d[i] || d[i + 1] || d[i + 2])) drawn++;
    if (d[i] !== bg[0] || d[i + 1] !== bg[1] || d[i + 2] !== bg[2] || d[i + 3] !== bg[3]) differs++;
  }
  out[id] = {drawn, differs, pixels: c.width * c.height};
}
return out;
"""


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


def wait_for(what, predicate, timeout=30.0, period=0.2, state=None):
    """predicate()'s value once it is true; `state()` says what there was instead on failure."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(period)
    raise Failure("timed out after %g s waiting for %s%s"
                  % (timeout, what, " (instead: %s)" % state() if state else ""))


class Collector(threading.Thread):
    """Frames received by the Python client meanwhile, by (pair, sequence)."""

    def __init__(self, endpoint):
        super().__init__(daemon=True)
        import stereod_client
        self.sub = stereod_client.Subscriber(endpoint)
        self.frames = {}
        self.lock = threading.Lock()
        self.stop = False

    def run(self):
        import stereod_client
        while not self.stop:
            msg = self.sub.receive(200)
            if isinstance(msg, stereod_client.Frame) and msg.ok:
                with self.lock:
                    self.frames[(msg.pair, msg.sequence)] = msg
                    if len(self.frames) > 400:
                        del self.frames[min(self.frames, key=lambda k: k[1])]

    def get(self, pair, sequence):
        with self.lock:
            return self.frames.get((pair, sequence))


def start_browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("SKIP: no Selenium (python3-selenium)")
        sys.exit(SKIP)
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            print("SKIP: no %s (chromium, chromium-driver)" % path)
            sys.exit(SKIP)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="stereod-chromium-"))
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def hover(driver, canvas, x, y, width, height):
    """Moves the mouse onto the centre of pixel (x, y) of a canvas showing width x height."""
    from selenium.webdriver.common.action_chains import ActionChains
    box = canvas.rect
    dx = (x + 0.5) * box["width"] / width - box["width"] / 2
    dy = (y + 0.5) * box["height"] / height - box["height"] / 2
    ActionChains(driver).move_to_element_with_offset(canvas, dx, dy).perform()


def pick_pixels(frame):
    """Three pixels with depth all around them (the browser may round the pointer onto a
    neighbour), far apart, and one without disparity (when there is one)."""
    import numpy as np
    z = frame.depth_m()
    valid = np.isfinite(z)
    inner = valid.copy()
    inner[0, :] = inner[-1, :] = inner[:, 0] = inner[:, -1] = False
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            inner &= np.roll(np.roll(valid, dy, axis=0), dx, axis=1)
    ys, xs = np.nonzero(inner)
    check(len(xs) > 0, "the frame has no pixel with depth all around it")
    chosen = [(int(xs[i]), int(ys[i])) for i in (0, len(xs) // 2, len(xs) - 1)]
    ys, xs = np.nonzero(~np.isfinite(z))
    none = (int(xs[len(xs) // 2]), int(ys[len(xs) // 2])) if len(xs) else None
    return chosen, none


def http_status(url, path, headers):
    """The status code of GET path with these headers (urllib would send its own Host)."""
    import http.client
    from urllib.parse import urlparse
    u = urlparse(url)
    connection = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
    connection.putrequest("GET", path, skip_host=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders()
    status = connection.getresponse().status
    connection.close()
    return status


def server_checks(url, view):
    """What the server refuses: other Hosts (DNS rebinding), other Origins on the WebSocket,
    unknown paths, and listening beyond loopback unasked."""
    from urllib.parse import urlparse
    host = urlparse(url).netloc
    check(http_status(url, "/", {"Host": host}) == 200, "GET / failed")
    check(http_status(url, "/viewer.js", {"Host": host}) == 200, "GET /viewer.js failed")
    check(http_status(url, "/nothing", {"Host": host}) == 404, "an unknown path is not 404")
    port = urlparse(url).port
    check(http_status(url, "/", {"Host": "attacker.example:%d" % port}) == 421,
          "a request for another host name was answered")
    upgrade = {"Host": host, "Upgrade": "websocket", "Connection": "Upgrade",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"}
    check(http_status(url, "/ws", dict(upgrade, Origin="http://attacker.example")) == 403,
          "a WebSocket from another origin was accepted")
    check(http_status(url, "/ws", dict(upgrade, Origin="http://" + host)) == 101,
          "the page's own WebSocket was refused")
    refused = subprocess.run([view, "--address", "0.0.0.0", "--port", "0"], capture_output=True,
                             text=True, timeout=10)
    check(refused.returncode == 2 and "--remote" in refused.stderr,
          "listening on every interface without --remote: %r" % (refused.stderr,))
    print("server: answers its own host and origin only; 404 for unknown paths; loopback unless "
          "--remote")


def run_checks(driver, url, collector, shots, two_pairs):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver.get(url)
    body = driver.find_element(By.TAG_NAME, "body")
    frames = lambda: int(driver.find_element(By.ID, "frames").text or 0)
    wait_for("the page to receive 5 frames", lambda: frames() >= 5, timeout=60)
    print("page: %d frames received, showing %s" % (frames(), body.get_attribute("data-sequence")))

    # Every canvas drawn; the stats plots once stats arrived.
    wait_for("the stats plots", lambda: driver.find_element(By.ID, "stats-note").text == "",
             timeout=20)
    time.sleep(1.5)  # a few more stats for the lines
    # During the background model's warm-up every pixel is foreground, so the mask overlay covers
    # the left image in one colour: wait (bounded) for a frame past it before judging the canvas.
    def left_shows_the_image():
        c = driver.execute_script(COUNT_DRAWN, ["left-canvas"])["left-canvas"]
        return c["differs"] > 0.2 * c["pixels"]
    try:
        wait_for("the left image past the warm-up", left_shows_the_image, timeout=20)
    except Failure:
        pass  # judged, and reported with every canvas's counts, below
    canvases = ["depth-canvas", "colorbar", "left-canvas", "cloud-canvas", "plot-fps",
                "plot-drops", "plot-latency"]
    drawn = driver.execute_script(COUNT_DRAWN, canvases)
    for name, c in drawn.items():
        print("canvas %-13s %6d of %6d pixels drawn, %6d differ from the corner"
              % (name, c["drawn"], c["pixels"], c["differs"]))
    check(drawn["depth-canvas"]["drawn"] > 0.02 * drawn["depth-canvas"]["pixels"],
          "the disparity canvas is (nearly) black")
    check(drawn["colorbar"]["drawn"] > 500, "no color bar")
    check(drawn["left-canvas"]["differs"] > 0.2 * drawn["left-canvas"]["pixels"],
          "the left image canvas is empty")
    check(drawn["cloud-canvas"]["differs"] > 300, "the point cloud canvas is empty")
    for plot in ("plot-fps", "plot-drops", "plot-latency"):
        check(drawn[plot]["drawn"] > 50, "the %s plot is empty" % plot)
    check("m" in driver.find_element(By.ID, "model").text, "no camera model in the footer")

    # Nothing from the network: every resource the page loaded came from stereod-view.
    resources = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    check(all(r.startswith(url) or r.startswith(url.replace("http", "ws")) for r in resources),
          "the page loaded something from elsewhere: %s" % resources)
    problems = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    check(not problems, "the browser's console reports errors: %s" % problems)

    if shots:
        driver.save_screenshot(os.path.join(shots, "viewer-disparity.png"))

    # The other pair, chosen in the list.
    if two_pairs:
        shown = body.get_attribute("data-pair")
        options = [o.get_attribute("value") for o in
                   driver.find_element(By.ID, "pair").find_elements(By.TAG_NAME, "option")]
        check(sorted(options) == ["front", "rear"], "the pair list offers %s" % options)
        other = "rear" if shown == "front" else "front"
        Select(driver.find_element(By.ID, "pair")).select_by_value(other)
        wait_for("frames of the pair %r" % other, lambda: body.get_attribute("data-pair") == other)
        wait_for("the stats of %r" % other,
                 lambda: other in driver.find_element(By.ID, "stats-pair").text)
        print("pair list: %s; switched from %r to %r, showing #%s"
              % (options, shown, other, body.get_attribute("data-sequence")))

    # Depth mode, paused: the readout against the Python client's depth_m() of the same frame.
    Select(driver.find_element(By.ID, "mode")).select_by_value("depth")
    time.sleep(0.5)
    driver.find_element(By.ID, "pause").click()
    pair = body.get_attribute("data-pair")
    sequence = int(body.get_attribute("data-sequence"))
    frame = wait_for("the Python client's copy of %s #%d" % (pair, sequence),
                     lambda: collector.get(pair, sequence), timeout=10)
    z = frame.depth_m()
    canvas = driver.find_element(By.ID, "depth-canvas")
    width, height = frame.disparity.shape[1], frame.disparity.shape[0]
    with_depth, without = pick_pixels(frame)
    readout = driver.find_element(By.ID, "readout")
    aims = with_depth + ([without] if without else [])
    compared_depth = compared_none = 0
    for x, y in aims:
        hover(driver, canvas, x, y, width, height)
        # The page names the pixel under the cursor: the aimed one, or a neighbour where the
        # browser rounded the pointer's position onto the next one.
        near = lambda: (readout.get_attribute("data-x") or "") != "" and \
            abs(int(readout.get_attribute("data-x")) - x) <= 1 and \
            abs(int(readout.get_attribute("data-y")) - y) <= 1
        wait_for("the readout near pixel (%d, %d)" % (x, y), near, timeout=5,
                 state=lambda: "%s, canvas at %s" % (readout.text, canvas.rect))
        check(readout.get_attribute("data-sequence") == str(sequence), "readout of another frame")
        px, py = int(readout.get_attribute("data-x")), int(readout.get_attribute("data-y"))
        text = readout.text
        check(text.startswith("x %d, y %d: " % (px, py)), "the readout names another pixel: %r" % text)
        expected = float(z[py, px])
        if math.isfinite(expected):
            shown = float(re.search(r": ([0-9.]+) m", text).group(1))
            print("readout %-40s the Python client: %.4f m" % (text, expected))
            check(abs(shown - expected) <= 0.0005 + 1e-6 * expected,
                  "pixel (%d, %d): the page shows %.3f m, depth_m() gives %.4f m"
                  % (px, py, shown, expected))
            check(math.isclose(float(readout.get_attribute("data-depth")), expected,
                               rel_tol=1e-6), "pixel (%d, %d): full-precision depth differs"
                  % (px, py))
            compared_depth += 1
        else:
            print("readout %-40s the Python client: no depth" % text)
            check("no disparity" in text or "no depth" in text,
                  "pixel (%d, %d) has no depth, the page says %r" % (px, py, text))
            compared_none += 1
    check(compared_depth == 3, "%d readouts with depth compared, not 3" % compared_depth)
    if shots:
        x, y = with_depth[1]
        hover(driver, canvas, x, y, width, height)
        # Turn the cloud a little, as a user would, for the picture.
        from selenium.webdriver.common.action_chains import ActionChains
        cloud = driver.find_element(By.ID, "cloud-canvas")
        ActionChains(driver).move_to_element(cloud).click_and_hold().move_by_offset(60, 25) \
            .release().perform()
        hover(driver, canvas, x, y, width, height)
        driver.save_screenshot(os.path.join(shots, "viewer-depth.png"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--view", required=True)
    ap.add_argument("--config", help="run this configuration instead of two synthetic pairs")
    ap.add_argument("--screenshots", help="save pictures of the page here")
    ap.add_argument("--settle", type=float, default=0,
                    help="seconds to let the daemon run before the checks (e.g. past its "
                         "background model's warm-up, for pictures)")
    args = ap.parse_args()
    driver = start_browser()
    work = tempfile.mkdtemp(prefix="stereod-view-test-")
    endpoint = "ipc://%s/stereod.sock" % work
    if args.config:
        with open(args.config) as f:
            text = f.read()
        text = text.replace("\npublish:\n", "\npublish:\n  endpoint: '%s'\n" % endpoint, 1)
        check("endpoint: '%s'" % endpoint in text, "%s has no publish: section" % args.config)
    else:
        text = TWO_PAIRS.replace("{endpoint}", endpoint)
    config = os.path.join(work, "stereod.yaml")
    with open(config, "w") as f:
        f.write(text)
    log = open(os.path.join(work, "daemon.log"), "w")
    daemon = subprocess.Popen([args.daemon, "--config", config, "--engine", "cpu"],
                              stdout=log, stderr=subprocess.STDOUT)
    view = subprocess.Popen([args.view, "--endpoint", endpoint, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    collector = None
    try:
        line = view.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        check(found, "stereod-view did not say where it listens: %r" % line)
        url = found.group(1)
        print("stereod-view: %s" % line.strip())
        server_checks(url, args.view)
        collector = Collector(endpoint)
        collector.start()
        if args.screenshots:
            os.makedirs(args.screenshots, exist_ok=True)
        time.sleep(args.settle)
        run_checks(driver, url, collector, args.screenshots, not args.config)
        print("OK")
        return 0
    except Failure as e:
        print("FAILED: %s" % e)
        log.flush()
        with open(os.path.join(work, "daemon.log")) as f:
            print("--- daemon log (end) ---\n" + "".join(f.readlines()[-15:]))
        return 1
    finally:
        if collector:
            collector.stop = True
        driver.quit()
        for p in (view, daemon):
            p.send_signal(signal.SIGTERM)
        for p in (view, daemon):
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        log.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
