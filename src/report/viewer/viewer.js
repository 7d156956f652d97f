/* vk-baton frame report viewer: core. State, helpers, the frame model,
   selection, theme, keyboard, boot. The other files (timeline.js, panels.js,
   resources.js) add to the same namespace, window.VB. Boot waits for
   DOMContentLoaded, so the files may run in any order. */
(function () {
  'use strict';
  var VB = window.VB = window.VB || {};

  /* ---------- errors: a visible box, and body[data-error] for tests ---------- */

  /* The first error is kept: later ones are mostly its consequences. */
  var errors = 0, firstError = '';
  function showError(msg) {
    msg = String(msg || 'unknown error');
    errors++;
    if (errors === 1) firstError = msg;
    try {
      var box = document.getElementById('error');
      if (box) {
        box.textContent = 'The viewer failed: ' + firstError + (errors > 1 ? ' (and ' + (errors - 1) + ' more)' : '');
        box.hidden = false;
      }
      if (document.body) document.body.dataset.error = firstError;
    } catch (e) { /* nowhere left to report it */ }
  }
  VB.showError = showError;
  window.onerror = function (message, source, line, col, err) {
    showError(err && err.message ? err.message : message);
    return false;
  };

  /* Runs fn, turning an exception into the error box instead of a dead page. */
  VB.guard = function (fn) {
    try {
      return fn();
    } catch (e) {
      showError(e && e.message ? e.message : e);
      if (window.console) console.error(e);
    }
  };

  /* ---------- text helpers ---------- */

  var ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  VB.esc = function (v) {
    return String(v === null || v === undefined ? '' : v).replace(/[&<>"']/g, function (c) {
      return ESC[c];
    });
  };
  /* An element as a string. Closing tags are built as '<\/' so no script
     text ever holds the sequence that ends a script element. */
  VB.h = function (tag, attrs, inner) {
    var s = '<' + tag;
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v !== null && v !== undefined && v !== false) s += ' ' + k + '="' + VB.esc(v) + '"';
      });
    }
    return s + '>' + (inner === undefined ? '' : inner) + '<\/' + tag + '>';
  };
  /* A `name` (already HTML) as code: the backticks become the code style. */
  VB.tick = function (html) {
    return '<code>' + html + '<\/code>';
  };
  /* Text with `code` spans. */
  VB.rich = function (text) {
    return VB.esc(text).replace(/`([^`]*)`/g, function (all, name) { return VB.tick(name); });
  };
  /* Flags, with break points after separators. */
  VB.flags = function (text) {
    return VB.esc(text).replace(/([|\/_])/g, '$1<wbr>');
  };

  VB.str = function (i) {
    var s = VB.state.report.strings || [];
    return typeof i === 'number' && i >= 0 && i < s.length ? String(s[i]) : '';
  };

  /* ---------- number formats ---------- */

  function sig(v) {
    var a = Math.abs(v);
    return v.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 2);
  }
  VB.fmtNs = function (ns) {
    if (ns === null || ns === undefined || !isFinite(ns)) return '\u2014';
    var a = Math.abs(ns);
    if (a < 1e3) return Math.round(ns) + ' ns';
    if (a < 1e6) return sig(ns / 1e3) + ' \u00b5s';
    if (a < 1e9) return sig(ns / 1e6) + ' ms';
    return sig(ns / 1e9) + ' s';
  };
  VB.fmtBytes = function (b) {
    if (b === null || b === undefined || !isFinite(b)) return '\u2014';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var u = 0;
    while (Math.abs(b) >= 1024 && u < units.length - 1) { b /= 1024; u++; }
    return (u === 0 ? String(b) : sig(b)) + ' ' + units[u];
  };
  VB.isTime = function () {
    return VB.state.frame.axis !== 'order';
  };
  /* A point on the frame's x axis: finer than a duration, so that the start
     and end of a short pass late in the frame still differ. */
  VB.fmtX = function (x) {
    if (x === null || x === undefined) return '\u2014';
    if (!VB.isTime()) return 'slot ' + (Math.round(x * 100) / 100);
    var a = Math.abs(x);
    if (a >= 1e6) return (x / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (x / 1e3).toFixed(1) + ' \u00b5s';
    return Math.round(x) + ' ns';
  };
  /* A width on the frame's x axis. */
  VB.fmtW = function (w) {
    if (VB.isTime()) return VB.fmtNs(w);
    var n = Math.round(w * 100) / 100;
    return n + (n === 1 ? ' slot' : ' slots');
  };
  VB.AXIS_NAMES = {
    measured: 'GPU time (measured)',
    predicted: 'GPU time at best (predicted)',
    order: 'plan order'
  };
  /* 1, 2 or 5 times a power of ten, at least raw. */
  VB.niceStep = function (raw) {
    if (!(raw > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  };
  /* A tick label for value v on an axis ticked every `step` whose view ends
     at `end`: one unit for the whole view, as many decimals as the step needs. */
  VB.tickLabel = function (v, step, end) {
    if (!VB.isTime()) return String(Math.round(v * 1000) / 1000);
    var top = Math.max(Math.abs(end || 0), step);
    var unit = top >= 1e6 ? [1e6, 'ms'] : top >= 1e3 ? [1e3, '\u00b5s'] : [1, 'ns'];
    var dec = Math.max(0, Math.ceil(-Math.log10(step / unit[0]) - 1e-9));
    return (v / unit[0]).toFixed(Math.min(dec, 6)) + ' ' + unit[1];
  };

  /* ---------- names ---------- */

  VB.passName = function (i) {
    var p = VB.state.frame.passes[i];
    return p ? p.name : 'pass ' + i;
  };
  VB.queueName = function (q) {
    var d = VB.state.frame.queues[q];
    return d ? d.name : 'queue ' + q;
  };
  VB.resName = function (r) {
    var d = VB.state.frame.resources[r];
    return d ? d.name : 'resource ' + r;
  };
  /* A button that selects `ref` (delegated click on [data-goto]). */
  VB.goto = function (ref, label, cls) {
    return VB.h('button', { type: 'button', 'class': 'link' + (cls ? ' ' + cls : ''), 'data-goto': ref }, label);
  };
  VB.passLink = function (i) {
    if (!(i >= 0)) return '\u2014';
    return VB.goto('p:' + i, VB.esc(VB.passName(i)), 'pass-link');
  };

  /* ---------- the frame model: lookups the drawing and navigation need ---------- */

  function buildModel(frame) {
    var m = { frame: frame, qb: [], passBatch: [], lanes: [], pos: {}, xOf: {}, byName: {} };
    var lo = Infinity, hi = -Infinity, seq = 0;
    function see(a) { if (typeof a === 'number' && isFinite(a)) { lo = Math.min(lo, a); hi = Math.max(hi, a); } }
    frame.queues.forEach(function () { m.qb.push([]); m.lanes.push([]); });
    frame.passes.forEach(function (p, i) {
      if (!(p.name in m.byName)) m.byName[p.name] = i;
      if (p.x) { see(p.x[0]); see(p.x[1]); }
    });
    frame.batches.forEach(function (b, gi) {
      var lane = m.lanes[b.queue];
      if (m.qb[b.queue]) m.qb[b.queue][b.index] = gi;
      see(b.x[0]); see(b.x[1]);
      b.items.forEach(function (it, k) {
        if (!lane) return;
        if (typeof it === 'number') {
          m.passBatch[it] = gi;
          var p = frame.passes[it];
          if (p && p.x) lane.push({ ref: 'p:' + it, key: p.x[0], x: (p.x[0] + p.x[1]) / 2, seq: seq++ });
        } else if (it && typeof it.x === 'number') {
          see(it.x);
          lane.push({ ref: 'b:' + gi + ':' + k, key: it.x, x: it.x, seq: seq++ });
        }
      });
    });
    // A placed pass that no batch lists still gets drawn on its queue.
    frame.passes.forEach(function (p, i) {
      if (p.x && m.passBatch[i] === undefined && m.lanes[p.queue]) {
        m.lanes[p.queue].push({ ref: 'p:' + i, key: p.x[0], x: (p.x[0] + p.x[1]) / 2, seq: seq++ });
      }
    });
    if (frame.memory && frame.memory.placements) {
      frame.memory.placements.forEach(function (pl) { see(pl[4]); see(pl[5]); });
    }
    m.lanes.forEach(function (lane, q) {
      lane.sort(function (a, b) { return a.key - b.key || a.seq - b.seq; });
      lane.forEach(function (it, i) { m.pos[it.ref] = [q, i]; m.xOf[it.ref] = it.x; });
    });
    if (!(lo <= hi)) { lo = 0; hi = 1; }
    if (hi === lo) hi = lo + 1;
    m.domain = [lo, hi];
    return m;
  }
  VB.buildModel = buildModel;

  /* ---------- state and selection ---------- */

  VB.state = {
    report: null, fi: 0, frame: null, model: null,
    zoom: 1, pan: 0,
    pinned: null, // ref of the pinned thing ("p:3", "b:5:2", ...)
    hover: null,  // ref under the pointer or keyboard focus
    resHl: null   // passes to highlight for an opened resource
  };

  var marked = [];
  /* Puts .sel on the pinned element and .hl on passes related to what is
     shown; touches only the few elements involved. */
  VB.applyClasses = function () {
    var st = VB.state;
    marked.forEach(function (el) { el.classList.remove('sel', 'hl'); });
    marked = [];
    function mark(ref, cls) {
      var els = document.querySelectorAll('[data-ref="' + ref + '"]');
      for (var i = 0; i < els.length; i++) { els[i].classList.add(cls); marked.push(els[i]); }
    }
    var shown = st.pinned || st.hover;
    var rel = shown && VB.details ? VB.details.related(shown) : [];
    (st.resHl || []).concat(rel).forEach(function (p) { mark('p:' + p, 'hl'); });
    if (st.pinned) mark(st.pinned, 'sel');
  };

  VB.showDetails = function () {
    if (VB.details) VB.details.render();
    VB.applyClasses();
  };

  /* Pins `ref`; opts.reveal pans the timeline to it, opts.focus focuses it. */
  VB.select = function (ref, opts) {
    opts = opts || {};
    VB.state.pinned = ref;
    if (ref && opts.reveal && VB.timeline) VB.timeline.reveal(ref);
    VB.showDetails();
    if (ref && opts.focus && VB.timeline) VB.timeline.focus(ref);
  };
  VB.hover = function (ref) {
    if (!ref || ref === VB.state.hover) return;
    VB.state.hover = ref;
    if (!VB.state.pinned) VB.showDetails();
    else VB.applyClasses();
  };
  VB.unpin = function () {
    VB.state.pinned = null;
    VB.showDetails();
  };

  /* ---------- URL parameters: ?theme=dark, #frame=1, ... ---------- */

  VB.params = (function () {
    var out = {};
    var text = (location.search || '').slice(1) + '&' + (location.hash || '').slice(1);
    text.split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i > 0) {
        try { out[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1)); } catch (e) { /* ignore bad escapes */ }
      }
    });
    return out;
  })();

  /* ---------- theme ---------- */

  function effectiveTheme() {
    var a = document.documentElement.getAttribute('data-theme');
    if (a === 'dark' || a === 'light') return a;
    return window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  }
  function updateThemeButton() {
    var b = document.getElementById('theme');
    if (!b) return;
    var dark = effectiveTheme() === 'dark';
    b.textContent = dark ? 'Light theme' : 'Dark theme';
    b.setAttribute('aria-pressed', dark ? 'true' : 'false');
  }
  VB.setTheme = function (t) {
    document.documentElement.setAttribute('data-theme', t);
    updateThemeButton();
  };
  VB.toggleTheme = function () {
    VB.setTheme(effectiveTheme() === 'dark' ? 'light' : 'dark');
  };
  // Forced by the URL (screenshot tests), else the system's preference: one stylesheet rule
  // for each theme, set before the first paint.
  if (VB.params.theme === 'dark' || VB.params.theme === 'light') {
    document.documentElement.setAttribute('data-theme', VB.params.theme);
  } else {
    document.documentElement.setAttribute('data-theme', effectiveTheme());
  }

  /* ---------- frames ---------- */

  VB.setFrame = function (i) {
    var frames = VB.state.report && VB.state.report.frames;
    if (!frames || !frames.length) return;
    i = Math.max(0, Math.min(frames.length - 1, i));
    var st = VB.state;
    if (st.model && st.frame === frames[i]) return; // [ on the first frame: keep the view
    st.fi = i;
    st.frame = frames[i];
    st.model = buildModel(st.frame);
    st.zoom = 1;
    st.pan = 0;
    st.pinned = st.hover = null;
    st.resHl = null;
    var sel = document.getElementById('frame');
    if (sel) sel.value = String(i);
    VB.renderAll();
  };

  VB.renderAll = function () {
    VB.guard(function () {
      var f = VB.state.frame;
      var label = document.getElementById('axis-label');
      if (label) label.textContent = 'x: ' + (VB.AXIS_NAMES[f.axis] || f.axis);
      VB.timeline.render();
      VB.panels.render();
      VB.resources.render();
      VB.showDetails();
    });
  };

  /* Coalesces redraws to one per animation frame. */
  var pending = {};
  VB.later = function (name, fn) {
    if (pending[name]) return;
    pending[name] = true;
    (window.requestAnimationFrame || setTimeout)(function () {
      pending[name] = false;
      VB.guard(fn);
    });
  };

  /* ---------- keyboard ---------- */

  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target || document.body;
    var tag = t.tagName || '';
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
      if (e.key === 'Escape' && t.blur) t.blur();
      return;
    }
    var inTimeline = !!(t.closest && t.closest('#timeline'));
    var item = inTimeline && t.closest('[data-ref]');
    var ref = item ? item.getAttribute('data-ref') : null;
    var st = VB.state;
    var done = true;
    switch (e.key) {
      case 'Escape': VB.unpin(); break;
      case '[': VB.setFrame(st.fi - 1); break;
      case ']': VB.setFrame(st.fi + 1); break;
      case 't': case 'T': VB.toggleTheme(); break;
      case '+': case '=': VB.timeline.zoomBy(1.5); break;
      case '-': case '_': VB.timeline.zoomBy(1 / 1.5); break;
      case '0': VB.timeline.reset(); break;
      case 'Enter': case ' ':
        if (ref) VB.select(ref);
        else done = false;
        break;
      case 'ArrowLeft': case 'ArrowRight': case 'ArrowUp': case 'ArrowDown':
        done = inTimeline && VB.timeline.navigate(ref, e.key);
        break;
      default: done = false;
    }
    if (done) e.preventDefault();
  }

  /* ---------- boot ---------- */

  function fillFrames() {
    var sel = document.getElementById('frame');
    var frames = VB.state.report.frames;
    sel.innerHTML = frames.map(function (f, i) {
      return VB.h('option', { value: String(i) }, VB.esc(f.label || 'frame ' + i));
    }).join('');
    sel.disabled = frames.length < 2;
    sel.addEventListener('change', function () { VB.setFrame(parseInt(sel.value, 10) || 0); });
  }

  function wire() {
    document.addEventListener('keydown', onKey);
    document.getElementById('theme').addEventListener('click', VB.toggleTheme);
    document.getElementById('zoom-in').addEventListener('click', function () { VB.timeline.zoomBy(1.5); });
    document.getElementById('zoom-out').addEventListener('click', function () { VB.timeline.zoomBy(1 / 1.5); });
    document.getElementById('zoom-reset').addEventListener('click', function () { VB.timeline.reset(); });
    // Every [data-goto] button anywhere selects its thing and shows it.
    document.addEventListener('click', function (e) {
      var b = e.target.closest && e.target.closest('[data-goto]');
      if (!b) return;
      e.preventDefault();
      VB.select(b.getAttribute('data-goto'), { reveal: true });
    });
    window.addEventListener('resize', function () {
      VB.later('resize', function () { VB.timeline.render(); VB.resources.renderMap(); VB.applyClasses(); });
    });
    if (window.matchMedia) {
      var mq = window.matchMedia('(prefers-color-scheme: dark)');
      if (mq.addEventListener) {
        mq.addEventListener('change', function (e) {
          if (!VB.params.theme) VB.setTheme(e.matches ? 'dark' : 'light');
        });
      }
    }
  }

  function boot() {
    try {
      var el = document.getElementById('report-data');
      if (!el) throw new Error('no #report-data element');
      var report = JSON.parse(el.textContent);
      if (!report || !Array.isArray(report.frames)) throw new Error('report data has no frames');
      // page.rs must list every script (README.md): say which one is missing.
      [['timeline', 'timeline.js'], ['details', 'panels.js'], ['panels', 'panels.js'], ['resources', 'resources.js']].forEach(function (m) {
        if (!VB[m[0]]) throw new Error('the viewer script ' + m[1] + ' is missing from the page');
      });
      VB.state.report = report;
      var title = document.getElementById('title');
      if (title && report.title) title.textContent = report.title;
      updateThemeButton();
      fillFrames();
      wire();
      VB.timeline.init();
      if (!report.frames.length) throw new Error('the report has no frames');
      var t0 = window.performance ? performance.now() : 0;
      VB.setFrame(parseInt(VB.params.frame, 10) || 0);
      if (window.performance) document.body.dataset.renderMs = String(Math.round(performance.now() - t0));
      // ?zoom=8&pin=p:500: a view for screenshots and links.
      var z = parseFloat(VB.params.zoom);
      if (z > 1) {
        VB.state.zoom = z;
        VB.timeline.render();
        VB.resources.renderMap();
      }
      if (VB.params.pin) VB.select(VB.params.pin, { reveal: true });
    } catch (e) {
      showError(e && e.message ? e.message : e);
    } finally {
      document.body.dataset.ready = '1';
    }
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else setTimeout(boot, 0);
})();
