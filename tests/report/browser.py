#!/usr/bin/env python3
"""Loads a frame report in headless Chromium and checks it as a person would see it.

Usage: browser.py [--frame N] CHROMIUM REPORT.html OUT_DIR [EXPECT ...]

It shows frame N of the report (the first by default).

Talks to the browser over the DevTools protocol on a pipe (--remote-debugging-pipe: the
browser reads commands on fd 3 and writes on fd 4, each message JSON ending in a NUL), so it
needs nothing beyond Python's standard library. It fails (exit 1, the reason on stderr) on:
- any JavaScript exception, console error, or failed request while loading or clicking;
- a page that does not say it is ready, or shows its error box;
- lanes, passes, barriers, waits or findings drawn (counted in the DOM) other than the
  frame's data has (each at least one, but waits on a frame of one queue, and findings), or a
  barrier of zero size;
- a click on the first barrier that names an ownership transfer (else the first barrier) whose
  details lack, for an entry of that barrier in the report's own data, its source and
  destination stages, its layouts (an image's) or its cause; or lack any of the EXPECT strings.
It writes OUT_DIR/light.png and OUT_DIR/dark.png, and prints one line of counts and the
load time.
"""
import json
import os
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, chromium):
        self.profile = tempfile.mkdtemp(prefix="vk-baton-report-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-pipe", "--user-data-dir=" + self.profile,
             "--disable-extensions", "--hide-scrollbars", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=fds)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.next_id = 0
        self.buffer = b""
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("the browser closed its pipe")
            self.buffer += chunk
        msg, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(msg)

    def wait_event(self, name, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            for e in self.events:
                if e.get("method") == name:
                    self.events.remove(e)
                    return e
            self.events.append(self.read())
        raise RuntimeError(f"no {name} within {timeout} s")

    def eval(self, expression):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluating {expression!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def close(self):
        self.proc.kill()
        self.proc.wait()


def errors(events):
    """The page's JavaScript exceptions, console errors and failed requests."""
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            out.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        elif m == "Runtime.consoleAPICalled" and p.get("type") == "error":
            out.append("console error: " + " ".join(str(a.get("value")) for a in p.get("args", [])))
        elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
            out.append("log error: " + p["entry"].get("text", ""))
        elif m == "Network.loadingFailed":
            out.append("failed request: " + p.get("errorText", ""))
        elif m == "Network.requestWillBeSent" and not p["request"]["url"].startswith(("file:", "data:", "about:")):
            out.append("request off the file: " + p["request"]["url"])
    return out


def load(b, url):
    start = time.time()
    b.send("Page.navigate", {"url": url})
    b.wait_event("Page.loadEventFired")
    for _ in range(300):
        state = b.eval("[document.body.dataset.ready || '', document.body.dataset.error || '']")
        if state[1]:
            raise RuntimeError("the page reports an error: " + state[1])
        if state[0] == "1":
            return time.time() - start
        time.sleep(0.02)
    raise RuntimeError("the page never said it was ready")


def screenshot(b, path):
    import base64
    shot = b.send("Page.captureScreenshot", {"format": "png"})
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))


COUNTS = """JSON.stringify({
  lanes: document.querySelectorAll('g.lane').length,
  passes: document.querySelectorAll('g.pass').length,
  barriers: document.querySelectorAll('g.barrier').length,
  waits: document.querySelectorAll('g.wait').length,
  findings: document.querySelectorAll('g.finding').length,
  drawn: [...document.querySelectorAll('g.barrier')].filter(g => {
    const r = g.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length,
})"""

# What the frame shown should draw, from the report's own data.
WANTED = """(() => {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const frame = data.frames[+(document.getElementById('frame') || {value: 0}).value || 0];
  const items = frame.batches.flatMap(b => b.items);
  return JSON.stringify({
    lanes: frame.queues.length,
    passes: frame.passes.filter(p => p.x !== null).length,
    barriers: items.filter(i => typeof i === 'object').length,
    waits: frame.batches.flatMap(b => b.waits).filter(w => w[0] !== 2).length,
    findings: frame.findings.filter(f => f.pass >= 0 && frame.passes[f.pass].x !== null).length,
  });
})()"""

TARGET = """(() => {
  const g = document.querySelector('g.barrier.transfer') || document.querySelector('g.barrier');
  g.scrollIntoView({block: 'center', inline: 'center'});
  const r = g.getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2, +g.dataset.batch, +g.dataset.item];
})()"""

# What the details of a barrier must say, from the report's own data: for its first entry,
# the stages on both sides, the layouts (of an image) and the cause.
EXPECTED = """((batch, item) => {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const frame = data.frames[+(document.getElementById('frame') || {value: 0}).value || 0];
  const e = frame.batches[batch].items[item].entries[0];
  const s = i => (i >= 0 ? data.strings[i] : null);
  return [s(e[4]), s(e[6]), s(e[2]), s(e[3]), s(e[11])].filter(x => x !== null);
})"""


def click(b, x, y):
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        b.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                            "clickCount": 1})


def main():
    args = sys.argv[1:]
    frame = "0"
    if args[:1] == ["--frame"]:
        frame, args = args[1], args[2:]
    chromium, report, out_dir = args[:3]
    expect = args[3:]
    url = "file://" + os.path.abspath(report) + "?frame=" + frame
    b = Browser(chromium)
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"}, session=False)
        att = b.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                     session=False)
        b.session = att["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            b.send(domain + ".enable")
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": 1600, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        seconds = load(b, url + "&theme=light")
        counts = json.loads(b.eval(COUNTS))
        wanted = json.loads(b.eval(WANTED))
        for what in ("lanes", "passes", "barriers", "waits"):
            if counts[what] != wanted[what]:
                raise RuntimeError(f"{counts[what]} {what} drawn, {wanted[what]} in the data")
            if wanted[what] == 0 and not (what == "waits" and wanted["lanes"] == 1):
                raise RuntimeError(f"no {what} to draw: {wanted}")
        if counts["findings"] != wanted["findings"]:
            raise RuntimeError(f"{counts['findings']} findings drawn, {wanted['findings']} in the data")
        if counts["drawn"] != counts["barriers"]:
            raise RuntimeError(f"barriers of zero size: {counts}")
        screenshot(b, os.path.join(out_dir, "light.png"))
        x, y, batch, item = b.eval(TARGET)
        expect = expect + b.eval(f"{EXPECTED}({batch}, {item})")
        click(b, x, y)
        details = b.eval("document.getElementById('details').textContent")
        # Names in backticks show as code: the page's text has no backticks.
        missing = [e for e in (x.replace("`", "") for x in expect) if e not in details]
        if missing:
            raise RuntimeError(f"the barrier's details lack {missing}: {details!r}")
        screenshot(b, os.path.join(out_dir, "clicked.png"))
        load(b, url + "&theme=dark")
        screenshot(b, os.path.join(out_dir, "dark.png"))
        bad = errors(b.events)
        if bad:
            raise RuntimeError("; ".join(bad))
        print(f"loaded in {seconds * 1000:.0f} ms; {json.dumps(counts)}")
    except RuntimeError as e:
        print(f"browser check failed: {e}", file=sys.stderr)
        sys.exit(1)
    finally:
        b.close()


if __name__ == "__main__":
    main()
