/* vk-baton frame report viewer: the timeline, one inline SVG. It is drawn as
   one string (fast for thousands of passes) and redrawn on zoom, so text is
   laid out at the new scale; a pan only moves a few groups. All input is
   delegated to the #timeline host, which outlives every redraw. */
(function () {
  'use strict';
  var VB = window.VB = window.VB || {};
  var T = VB.timeline = {};
  var h = VB.h;

  // Geometry, in px. A lane: batch label row, pass row, three marker rows.
  var GUTTER = 180, AXIS_H = 30, LANE_H = 76, PAD_L = 84, PAD_R = 24;
  var PASS_Y = 17, PASS_H = 24, MARK_Y = 50, MARK_PITCH = 9, MARK_ROWS = 3, MARK_R = 4;
  var MAX_SHIFT = 14; // how far a crowded barrier marker may move off its x
  var CHAR_W = 6.6;   // mean width of an 11px system-ui character (truncation)

  var g = null; // geometry of the drawing on screen

  function passMid(q) { return AXIS_H + q * LANE_H + PASS_Y + PASS_H / 2; }
  function laneTop(q) { return AXIS_H + q * LANE_H; }
  function px(x) { return PAD_L + (x - g.d0) * g.k; }
  function r1(v) { return Math.round(v * 10) / 10; }

  /* Scale and bounds for the current zoom and host width. */
  function geometry() {
    var st = VB.state, m = st.model;
    var host = document.getElementById('timeline');
    var W = Math.max(520, host.clientWidth || 1000);
    var plotW = W - GUTTER;
    var span = m.domain[1] - m.domain[0];
    var fit = (plotW - PAD_L - PAD_R) / span;
    var minSpan = VB.isTime() ? 200 : 2; // deepest zoom: 200 ns or 2 slots across
    var maxZoom = Math.max(1, span / minSpan);
    st.zoom = Math.max(1, Math.min(maxZoom, st.zoom));
    var k = fit * st.zoom;
    var contentW = PAD_L + span * k + PAD_R;
    var H = AXIS_H + m.frame.queues.length * LANE_H + 10;
    return { W: W, plotW: plotW, H: H, d0: m.domain[0], k: k, maxZoom: maxZoom, maxPan: Math.max(0, contentW - plotW) };
  }
  T.geometry = function () { return g; };
  T.GUTTER = GUTTER;
  T.PAD_L = PAD_L;

  function clampPan() {
    VB.state.pan = Math.max(0, Math.min(g.maxPan, VB.state.pan));
  }

  /* Only what lies near the view is drawn: the view plus half a view on
     each side, so a short pan needs no redraw. At fit zoom that is all. */
  function drawWindow(margin) {
    if (margin === undefined) margin = g.plotW / 2;
    return [g.d0 + (VB.state.pan - PAD_L - margin) / g.k, g.d0 + (VB.state.pan + g.plotW + margin - PAD_L) / g.k];
  }
  function near(a, b) {
    return b >= g.win[0] && a <= g.win[1];
  }

  /* Axis ticks over the visible part: [{px (screen), label}]. */
  T.ticks = function () {
    var step = VB.niceStep(96 / g.k);
    if (!VB.isTime()) step = Math.max(1, step);
    var from = g.d0 + (VB.state.pan - PAD_L) / g.k;
    var to = g.d0 + (VB.state.pan + g.plotW) / g.k;
    var out = [];
    for (var v = Math.ceil(from / step) * step; v <= to && out.length < 400; v += step) {
      out.push({ px: GUTTER + px(v) - VB.state.pan, label: VB.tickLabel(v, step, to) });
    }
    return out;
  };

  function axisMarkup() {
    var s = [];
    T.ticks().forEach(function (t) {
      if (t.px < GUTTER + 1) return;
      var x = r1(t.px);
      s.push('<line class="grid" x1="' + x + '" x2="' + x + '" y1="' + (AXIS_H - 6) + '" y2="' + (g.H - 6) + '"/>');
      if (x + 8 + t.label.length * 6 < g.W) s.push(h('text', { 'class': 'tick', x: x + 4, y: AXIS_H - 11 }, VB.esc(t.label)));
    });
    return s.join('');
  }

  /* ---------- drawing ---------- */

  function fitText(text, w) {
    var n = Math.floor((w - 10) / CHAR_W);
    if (n < 2) return '';
    return text.length <= n ? text : text.slice(0, n - 1) + '\u2026';
  }

  function laneLabel(q) {
    var d = VB.state.frame.queues[q], y = laneTop(q);
    var caps = VB.str(d.caps);
    var sub = 'family ' + d.family + (caps ? ' \u00b7 ' + caps : '');
    var maxChars = Math.floor((GUTTER - 24) / 5.8);
    return '<g class="lane-label">' +
      h('title', null, VB.esc(d.name + ': ' + sub)) +
      '<rect class="swatch q' + (q % 6) + '" x="10" y="' + (y + 20) + '" width="4" height="30" rx="2"/>' +
      h('text', { 'class': 'lane-name', x: 22, y: y + 32 }, VB.esc(fitText(d.name, GUTTER - 20) || d.name.slice(0, 3))) +
      h('text', { 'class': 'lane-sub', x: 22, y: y + 47 }, VB.esc(sub.length > maxChars ? sub.slice(0, maxChars - 1) + '\u2026' : sub)) +
      '<\/g>';
  }

  function batchMarkup(b, gi, s) {
    var y = laneTop(b.queue);
    var x0 = px(b.x[0]), w = Math.max(3, px(b.x[1]) - x0);
    s.push('<g class="batch" data-ref="B:' + gi + '" data-batch="' + gi + '">');
    s.push('<rect class="frame" x="' + r1(x0 - 2) + '" y="' + (y + 3) + '" width="' + r1(w + 4) + '" height="' + (LANE_H - 6) + '" rx="4"/>');
    // The label goes right of the binary-wait marks at the batch's start.
    var nBin = b.waits.filter(function (wt) { return wt[0] === 2; }).length;
    if (w > 22 + 7 * nBin) s.push(h('text', { 'class': 'batch-label', x: r1(x0 + 2 + 7 * nBin), y: y + 12 }, '#' + b.index));
    s.push('<\/g>');
  }

  function passMarkup(i, s) {
    var p = VB.state.frame.passes[i];
    var y = laneTop(p.queue) + PASS_Y;
    var x0 = px(p.x[0]), w = Math.max(1.5, px(p.x[1]) - x0);
    var cls = 'pass q' + (p.queue % 6) + (p.critical ? ' critical' : '');
    s.push('<g class="' + cls + '" data-pass="' + i + '" data-ref="p:' + i + '" tabindex="0" aria-label="' +
      VB.esc('pass ' + p.name) + '">');
    s.push('<rect class="box" x="' + r1(x0) + '" y="' + y + '" width="' + r1(w) + '" height="' + PASS_H + '" rx="2"/>');
    var label = w > 18 ? fitText(p.name, w) : '';
    if (label) s.push(h('text', { 'class': 'pass-name', x: r1(x0 + 5), y: y + 16 }, VB.esc(label)));
    s.push('<\/g>');
  }

  function isTransfer(item) {
    return item.entries.some(function (e) { return e[9] === 1 || e[9] === 2; });
  }

  /* Markers on a lane go in the free row nearest their x; when all rows are
     taken nearby they shift right a little, and past MAX_SHIFT they overlap
     (zoom in to tell them apart). */
  function placeMarker(rows, at) {
    var best = -1, bestX = Infinity;
    for (var r = 0; r < MARK_ROWS; r++) {
      var x = Math.max(at, rows[r] + 2 * MARK_R + 2);
      if (x < bestX - 0.01) { best = r; bestX = x; }
    }
    if (bestX - at > MAX_SHIFT) {
      best = 0;
      for (r = 1; r < MARK_ROWS; r++) if (rows[r] < rows[best]) best = r;
      bestX = at;
    }
    rows[best] = Math.max(rows[best], bestX);
    return [best, bestX];
  }

  /* `stems` (an array, or null where markers crowd) gets the line from the
     marker up to its x; it stays outside the marker's group so the group's
     box is the marker alone. */
  function barrierMarkup(gi, k, rows, stems, s) {
    var b = VB.state.frame.batches[gi], item = b.items[k];
    var y = laneTop(b.queue);
    var at = px(item.x), spot = placeMarker(rows, at);
    var cx = r1(spot[1]), cy = y + MARK_Y + spot[0] * MARK_PITCH;
    var tr = isTransfer(item);
    s.push('<g class="barrier' + (tr ? ' transfer' : '') + '" data-batch="' + gi + '" data-item="' + k +
      '" data-ref="b:' + gi + ':' + k + '" tabindex="0" aria-label="barrier, ' + item.entries.length + ' entries">');
    if (stems) stems.push('<path class="stem' + (tr ? ' transfer' : '') + '" d="M' + r1(at) + ',' + (y + PASS_Y + PASS_H) + 'L' + cx + ',' + (cy - MARK_R) + '"/>');
    if (stems) s.push('<rect class="hit" x="' + (cx - MARK_R - 2) + '" y="' + (cy - MARK_R - 1) + '" width="' + (2 * MARK_R + 4) + '" height="' + (2 * MARK_R + 2) + '"/>');
    s.push('<path class="mark" d="M' + cx + ',' + (cy - MARK_R) + 'l' + MARK_R + ',' + MARK_R + 'l-' + MARK_R + ',' + MARK_R + 'l-' + MARK_R + ',-' + MARK_R + 'z"/>');
    s.push('<\/g>');
  }

  /* Earlier-frame waits (dashed stub) and binary semaphore marks of a batch. */
  function batchSyncMarkup(b, gi, s) {
    var y = laneTop(b.queue), x0 = r1(px(b.x[0]) - 2), x1 = r1(px(b.x[1]) + 2);
    var nBin = 0;
    b.waits.forEach(function (w, j) {
      if (w[0] === 1) {
        var sy = y + 9;
        s.push('<g class="wait earlier" data-ref="w:' + gi + ':' + j + '" data-batch="' + gi + '" data-wait="' + j + '">');
        s.push('<path class="hit" d="M' + (x0 - 24) + ',' + sy + 'H' + x0 + '"/>');
        s.push('<path class="stub" d="M' + (x0 - 22) + ',' + sy + 'H' + (x0 - 1) + '" marker-end="url(#tl-arrow)"/>');
        s.push(h('text', { 'class': 'stub-label', x: x0 - 25, y: sy + 3, 'text-anchor': 'end' }, 'earlier frame'));
        s.push('<\/g>');
      } else if (w[0] === 2) {
        var bx = x0 + 2 + 7 * nBin++;
        s.push('<g class="binary" data-ref="w:' + gi + ':' + j + '" data-batch="' + gi + '" data-wait="' + j + '">');
        s.push('<path d="M' + bx + ',' + (y + 3) + 'h7l-3.5,6z"/><\/g>');
      }
    });
    (b.binary_signals || []).forEach(function (st, j) {
      var bx = x1 - 2 - 7 * j;
      s.push('<g class="binary signal" data-ref="s:' + gi + ':' + j + '" data-batch="' + gi + '" data-signal="' + j + '">');
      s.push('<path d="M' + (bx - 7) + ',' + (y + 9) + 'h7l-3.5,-6z"/><\/g>');
    });
  }

  /* A curve from the end of the signalling batch to the start of the waiter. */
  function waitsMarkup(s) {
    var f = VB.state.frame, m = VB.state.model;
    f.batches.forEach(function (b, gi) {
      b.waits.forEach(function (w, j) {
        if (w[0] !== 0) return;
        var src = m.qb[w[1]] && m.qb[w[1]][w[2]];
        if (src === undefined) return;
        var sb = f.batches[src];
        if (!near(Math.min(sb.x[1], b.x[0]), Math.max(sb.x[1], b.x[0]))) return;
        var x1 = px(sb.x[1]) + 2, y1 = passMid(sb.queue);
        var x2 = px(b.x[0]) - 2, y2 = passMid(b.queue);
        var dx = Math.max(18, Math.min(80, Math.abs(x2 - x1) / 2));
        var d = y1 === y2
          ? 'M' + r1(x1) + ',' + (y1 - PASS_H / 2) + 'C' + r1(x1 + dx) + ',' + (y1 - 34) + ' ' + r1(x2 - dx) + ',' + (y2 - 34) + ' ' + r1(x2) + ',' + (y2 - PASS_H / 2)
          : 'M' + r1(x1) + ',' + y1 + 'C' + r1(x1 + dx) + ',' + y1 + ' ' + r1(x2 - dx) + ',' + y2 + ' ' + r1(x2) + ',' + y2;
        s.push('<g class="wait" data-ref="w:' + gi + ':' + j + '" data-batch="' + gi + '" data-wait="' + j + '">');
        s.push('<path class="hit" d="' + d + '"/><path class="arrow" d="' + d + '" marker-end="url(#tl-arrow)"/>');
        s.push('<circle class="dot" cx="' + r1(x1) + '" cy="' + (y1 === y2 ? y1 - PASS_H / 2 : y1) + '" r="2.5"/><\/g>');
      });
    });
  }

  /* A red marker over the finding's pass, and a line from its first pass. */
  function findingsMarkup(s) {
    var f = VB.state.frame;
    (f.findings || []).forEach(function (fd, i) {
      var p = f.passes[fd.pass];
      if (!p || !p.x) return;
      var fp = f.passes[fd.first_pass];
      var lo = fp && fp.x ? Math.min(fp.x[0], p.x[0]) : p.x[0], hi = fp && fp.x ? Math.max(fp.x[1], p.x[1]) : p.x[1];
      if (!near(lo, hi)) return;
      var cx = r1((px(p.x[0]) + px(p.x[1])) / 2), top = laneTop(p.queue) + PASS_Y;
      s.push('<g class="finding" data-ref="f:' + i + '" data-finding="' + i + '">');
      var q = f.passes[fd.first_pass];
      if (q && q.x) {
        var fx = r1((px(q.x[0]) + px(q.x[1])) / 2), fy = laneTop(q.queue) + PASS_Y;
        var mid = Math.min(fy, top) - 14;
        var d = 'M' + fx + ',' + fy + 'C' + fx + ',' + mid + ' ' + cx + ',' + mid + ' ' + cx + ',' + (top - 6);
        s.push('<path class="hit" d="' + d + '"/><path class="link-line" d="' + d + '"/>');
        s.push('<circle class="from" cx="' + fx + '" cy="' + fy + '" r="3"/>');
      }
      s.push('<path class="flag" d="M' + (cx - 6) + ',' + (top - 11) + 'h12l-6,10z"/>');
      s.push(h('title', null, VB.esc(fd.text)));
      s.push('<\/g>');
    });
  }

  function defs() {
    return '<defs><clipPath id="tl-clip"><rect x="' + GUTTER + '" y="0" width="' + g.plotW + '" height="' + g.H + '"/><\/clipPath>' +
      '<marker id="tl-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto">' +
      '<path class="arrowhead" d="M0,0L8,4L0,8z"/><\/marker><\/defs>';
  }

  function panGroup(cls, inner) {
    return '<g clip-path="url(#tl-clip)"><g class="pan ' + cls + '" transform="translate(' +
      r1(GUTTER - VB.state.pan) + ',0)">' + inner + '<\/g><\/g>';
  }

  T.render = function () {
    var st = VB.state, f = st.frame, m = st.model;
    if (!m) return;
    var host = document.getElementById('timeline');
    var focused = document.activeElement && host.contains(document.activeElement) &&
      document.activeElement.getAttribute('data-ref');
    g = geometry();
    clampPan();
    g.win = drawWindow();
    var s = [];
    s.push('<svg class="tl" xmlns="http://www.w3.org/2000/svg" width="' + g.W + '" height="' + g.H +
      '" viewBox="0 0 ' + g.W + ' ' + g.H + '" aria-label="Timeline: one lane per queue">');
    s.push(defs());
    f.queues.forEach(function (d, q) {
      s.push('<rect class="lane-bg' + (q % 2 ? ' odd' : '') + '" x="0" y="' + laneTop(q) + '" width="' + g.W + '" height="' + LANE_H + '"/>');
    });
    s.push('<rect class="gutter" x="0" y="0" width="' + GUTTER + '" height="' + g.H + '"/>');
    s.push(h('text', { 'class': 'axis-title', x: 12, y: AXIS_H - 11 }, VB.esc(VB.AXIS_NAMES[f.axis] || f.axis)));
    s.push('<g class="axis">' + axisMarkup() + '<\/g>');
    var marks = [];
    f.queues.forEach(function (d, q) {
      var inner = [];
      f.batches.forEach(function (b, gi) { if (b.queue === q && near(b.x[0], b.x[1])) batchMarkup(b, gi, inner); });
      var rows = [-Infinity, -Infinity, -Infinity];
      // Stems tie markers to their x; where markers crowd they only add noise.
      var nBar = m.lanes[q].filter(function (it) { return it.ref.charAt(0) === 'b'; }).length;
      var stems = nBar * 3 * MARK_R < (m.domain[1] - m.domain[0]) * g.k ? [] : null;
      var items = [], bars = [];
      m.lanes[q].forEach(function (it) {
        if (!near(it.key, it.key + (it.x - it.key) * 2)) return;
        var p = it.ref.split(':');
        if (p[0] === 'p') passMarkup(+p[1], items);
        else barrierMarkup(+p[1], +p[2], rows, stems, bars);
      });
      if (stems) inner.push('<g class="stems">' + stems.join('') + '<\/g>');
      inner.push(items.join(''));
      marks.push('<g class="lane-marks" data-queue="' + q + '">' + bars.join('') + '<\/g>');
      f.batches.forEach(function (b, gi) { if (b.queue === q && near(b.x[0] - 40 / g.k, b.x[1])) batchSyncMarkup(b, gi, inner); });
      s.push('<g class="lane q' + (q % 6) + '" data-queue="' + q + '">' + laneLabel(q) + panGroup('lane-items', inner.join('')) + '<\/g>');
    });
    var w = [];
    waitsMarkup(w);
    s.push(panGroup('waits', w.join('')));
    var fd = [];
    findingsMarkup(fd);
    s.push(panGroup('findings', fd.join('')));
    // Barrier markers go over the arrows and finding lines that may cross
    // them, so that a click on a marker always reaches it.
    s.push(panGroup('barriers', marks.join('')));
    s.push('<line class="gutter-edge" x1="' + GUTTER + '" x2="' + GUTTER + '" y1="0" y2="' + g.H + '"/>');
    s.push('<\/svg>');
    host.innerHTML = s.join('');
    panGroups = host.querySelectorAll('.pan');
    axisGroup = host.querySelector('.axis');
    if (focused) T.focus(focused);
    updateZoomButtons();
  };

  var panGroups = [], axisGroup = null;

  /* A pan moves the content groups and redraws the ticks only. */
  T.applyPan = function () {
    if (!g || !VB.state.model) return;
    clampPan();
    var w = drawWindow(0); // what is in view now
    var all = g.win[0] <= g.d0 && g.win[1] >= VB.state.model.domain[1];
    if (!all && (w[0] < g.win[0] - 1e-9 || w[1] > g.win[1] + 1e-9)) {
      // Panned past what was drawn: draw again around the new view.
      T.render();
      VB.applyClasses();
      if (VB.resources) VB.resources.applyPan();
      return;
    }
    var tr = 'translate(' + r1(GUTTER - VB.state.pan) + ',0)';
    for (var i = 0; i < panGroups.length; i++) panGroups[i].setAttribute('transform', tr);
    if (axisGroup) axisGroup.innerHTML = axisMarkup();
    if (VB.resources) VB.resources.applyPan();
  };

  function updateZoomButtons() {
    var z = VB.state.zoom;
    var out = document.getElementById('zoom-out'), inn = document.getElementById('zoom-in');
    if (out) out.disabled = z <= 1;
    if (inn) inn.disabled = z >= g.maxZoom;
    var lvl = document.getElementById('zoom-level');
    if (lvl) lvl.textContent = z < 10 ? z.toFixed(1) + '\u00d7' : Math.round(z) + '\u00d7';
  }

  /* ---------- zoom, pan, reveal ---------- */

  /* Zooms by `factor` keeping the x under `anchor` (px from the plot's left) still. */
  T.zoomBy = function (factor, anchor) {
    var st = VB.state;
    if (!g || !st.model) return;
    if (anchor === undefined) anchor = g.plotW / 2;
    var xAt = g.d0 + (st.pan + anchor - PAD_L) / g.k;
    var z = Math.max(1, Math.min(g.maxZoom, st.zoom * factor));
    if (z === st.zoom) return;
    var k = g.k * z / st.zoom;
    st.zoom = z;
    st.pan = PAD_L + (xAt - g.d0) * k - anchor;
    VB.later('zoom', function () {
      T.render();
      if (VB.resources) VB.resources.renderMap();
      VB.applyClasses();
    });
  };
  T.reset = function () {
    if (!VB.state.model) return;
    VB.state.zoom = 1;
    VB.state.pan = 0;
    T.render();
    if (VB.resources) VB.resources.renderMap();
    VB.applyClasses();
  };
  T.panBy = function (dpx) {
    VB.state.pan += dpx;
    T.applyPan();
  };

  /* Pans so that the thing `ref` names is in view. */
  T.reveal = function (ref) {
    if (!g) return;
    var x = VB.state.model.xOf[ref];
    if (x === undefined) {
      var p = ref.split(':');
      var f = VB.state.frame;
      if (p[0] === 'B' || p[0] === 'w' || p[0] === 's') x = f.batches[+p[1]] && f.batches[+p[1]].x[0];
      if (p[0] === 'f') {
        var pass = f.passes[(f.findings[+p[1]] || {}).pass];
        x = pass && pass.x ? pass.x[0] : undefined;
      }
    }
    if (typeof x !== 'number') return;
    var at = px(x) - VB.state.pan;
    if (at < PAD_L || at > g.plotW - PAD_R) {
      VB.state.pan = px(x) - g.plotW / 2;
      T.applyPan();
    }
  };

  T.focus = function (ref) {
    var el = document.querySelector('#timeline [data-ref="' + ref + '"]');
    if (el && el.focus) el.focus({ preventScroll: true });
  };

  /* Arrow keys: along a lane, or to the nearest item on the next lane. */
  T.navigate = function (ref, key) {
    var m = VB.state.model;
    if (!m) return false;
    var pos = ref && m.pos[ref];
    var next = null;
    if (!pos) {
      next = firstItem();
    } else if (key === 'ArrowLeft' || key === 'ArrowRight') {
      var lane = m.lanes[pos[0]], i = pos[1] + (key === 'ArrowRight' ? 1 : -1);
      if (i >= 0 && i < lane.length) next = lane[i].ref;
    } else {
      var dir = key === 'ArrowDown' ? 1 : -1;
      for (var q = pos[0] + dir; q >= 0 && q < m.lanes.length && !next; q += dir) {
        next = nearest(m.lanes[q], m.xOf[ref]);
      }
    }
    if (!next) return true;
    T.reveal(next);
    T.focus(next);
    if (VB.state.pinned) VB.select(next);
    else VB.hover(next);
    return true;
  };
  function firstItem() {
    var lanes = VB.state.model.lanes;
    for (var q = 0; q < lanes.length; q++) if (lanes[q].length) return lanes[q][0].ref;
    return null;
  }
  function nearest(lane, x) {
    if (!lane.length) return null;
    var lo = 0, hi = lane.length - 1;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (lane[mid].x < x) lo = mid + 1; else hi = mid;
    }
    if (lo > 0 && Math.abs(lane[lo - 1].x - x) <= Math.abs(lane[lo].x - x)) lo--;
    return lane[lo].ref;
  }

  /* ---------- input, delegated to the host ---------- */

  function refAt(e) {
    var el = e.target && e.target.closest && e.target.closest('[data-ref]');
    return el ? el.getAttribute('data-ref') : null;
  }

  T.init = function () {
    var host = document.getElementById('timeline');
    var drag = null, dragged = false;
    host.addEventListener('mouseover', function (e) { VB.hover(refAt(e)); });
    host.addEventListener('focusin', function (e) { VB.hover(refAt(e)); });
    host.addEventListener('click', function (e) {
      if (dragged) { dragged = false; return; }
      var ref = refAt(e);
      if (ref) VB.select(ref);
      else if (VB.state.pinned) VB.unpin();
    });
    host.addEventListener('wheel', function (e) {
      if (!g) return;
      e.preventDefault();
      var rect = host.getBoundingClientRect();
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        T.panBy(e.deltaX || e.deltaY);
        return;
      }
      var scale = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
      var dy = Math.max(-300, Math.min(300, e.deltaY * scale));
      T.zoomBy(Math.exp(-dy * (e.ctrlKey ? 0.01 : 0.0025)), e.clientX - rect.left - GUTTER);
    }, { passive: false });
    // Drag pans; the pointer is captured only once it moved, so a plain click
    // still reaches the element under it.
    host.addEventListener('pointerdown', function (e) {
      if (e.button !== 0) return;
      dragged = false;
      drag = { x: e.clientX, pan: VB.state.pan, id: e.pointerId, moved: false };
    });
    host.addEventListener('pointermove', function (e) {
      if (!drag || e.pointerId !== drag.id) return;
      var dx = e.clientX - drag.x;
      if (!drag.moved && Math.abs(dx) < 4) return;
      if (!drag.moved) {
        drag.moved = true;
        host.classList.add('dragging');
        if (host.setPointerCapture) host.setPointerCapture(e.pointerId);
      }
      VB.state.pan = drag.pan - dx;
      VB.later('pan', T.applyPan);
    });
    function end(e) {
      if (!drag || e.pointerId !== drag.id) return;
      dragged = drag.moved;
      drag = null;
      host.classList.remove('dragging');
    }
    host.addEventListener('pointerup', end);
    host.addEventListener('pointercancel', end);
  };
})();
