/* vk-baton frame report viewer: the resources view. Each resource's states
   across the frame in plan order (its uses, and the barrier entries on it),
   and for transients the heap map over time and the memory they take. */
(function () {
  'use strict';
  var VB = window.VB = window.VB || {};
  var h = VB.h, esc = VB.esc;
  var R = VB.resources = {};

  var HEAP_H = 132, HEAP_GAP = 16, MAP_AXIS = 22;

  /* ---------- per-frame index: uses and barrier entries by resource ---------- */

  var idx = null, idxFrame = null;
  function index() {
    var f = VB.state.frame;
    if (idxFrame === f) return idx;
    idxFrame = f;
    idx = f.resources.map(function () { return []; });
    f.passes.forEach(function (p, i) {
      (p.uses || []).forEach(function (u) {
        if (!idx[u[0]]) return;
        idx[u[0]].push({ use: true, pass: i, x: p.x ? p.x[0] : Infinity, seq: 1, u: u, q: p.queue });
      });
    });
    f.batches.forEach(function (b, gi) {
      b.items.forEach(function (it, k) {
        if (typeof it === 'number') return;
        it.entries.forEach(function (e) {
          if (!idx[e[0]]) return;
          idx[e[0]].push({ use: false, ref: 'b:' + gi + ':' + k, x: it.x, seq: 0, e: e, q: b.queue });
        });
      });
    });
    // Plan order: by x; at one x a barrier comes before the pass it prepares.
    idx.forEach(function (list) {
      list.sort(function (a, b) { return a.x - b.x || a.seq - b.seq || (a.pass || 0) - (b.pass || 0); });
    });
    return idx;
  }

  function changesLayout(e) {
    return e[2] >= 0 && e[3] >= 0 && e[2] !== e[3];
  }

  /* The layouts a resource goes through, repeats folded. */
  function layoutPath(list) {
    var seq = [];
    function push(s) { if (s && seq[seq.length - 1] !== s) seq.push(s); }
    list.forEach(function (ev) {
      if (ev.use) { if (ev.u[3] >= 0) push(VB.str(ev.u[3])); }
      else if (ev.e[3] >= 0) { if (!seq.length) push(VB.str(ev.e[2])); push(VB.str(ev.e[3])); }
    });
    return seq;
  }

  function kindTag(e) {
    return e[9] === 1 ? ' ' + h('span', { 'class': 'tag transfer' }, 'release') : e[9] === 2 ? ' ' + h('span', { 'class': 'tag transfer' }, 'acquire') : '';
  }

  /* The states table of resource r: one row per use or barrier entry. */
  function statesTable(r) {
    var list = index()[r] || [];
    if (!list.length) return h('p', { 'class': 'muted' }, 'No pass uses it in this frame.');
    var rows = list.map(function (ev) {
      var at = isFinite(ev.x) ? esc(VB.fmtX(ev.x)) : h('span', { 'class': 'muted' }, 'culled');
      if (ev.use) {
        var lay = ev.u[3] >= 0 ? h('span', { 'class': 'layout' }, VB.flags(VB.str(ev.u[3]))) : h('span', { 'class': 'muted' }, '\u2014');
        return '<tr class="use">' + h('td', null, at) + h('td', null, esc(VB.queueName(ev.q))) +
          h('td', null, 'pass ' + VB.passLink(ev.pass)) + h('td', { 'class': 'access' }, VB.flags(VB.str(ev.u[2]))) +
          h('td', null, lay) + '<\/tr>';
      }
      var e = ev.e;
      var lay2 = e[2] < 0 && e[3] < 0 ? h('span', { 'class': 'muted' }, '\u2014') :
        h('span', { 'class': changesLayout(e) ? 'layout-change' : 'layout' }, VB.flags(VB.str(e[2])) + ' \u2192 ' + VB.flags(VB.str(e[3])));
      return '<tr class="bar' + (changesLayout(e) ? ' changes' : '') + '">' + h('td', null, at) + h('td', null, esc(VB.queueName(ev.q))) +
        h('td', null, VB.goto(ev.ref, 'barrier', 'chip') + kindTag(e)) +
        h('td', { 'class': 'access' }, VB.flags(VB.str(e[4]) + '/' + VB.str(e[5])) + h('div', null, ' \u2192 ' + VB.flags(VB.str(e[6]) + '/' + VB.str(e[7])))) +
        h('td', null, lay2) + '<\/tr>';
    });
    return '<table class="grid-table states"><thead><tr><th>at<\/th><th>queue<\/th><th>what<\/th>' +
      '<th>access / stages<\/th><th>layout<\/th><\/tr><\/thead><tbody>' + rows.join('') + '<\/tbody><\/table>';
  }

  function counts(r) {
    var list = index()[r] || [];
    var uses = 0, bars = 0, changes = 0;
    list.forEach(function (ev) {
      if (ev.use) uses++;
      else { bars++; if (changesLayout(ev.e)) changes++; }
    });
    return { uses: uses, bars: bars, changes: changes };
  }

  function summaryBits(r) {
    var d = VB.state.frame.resources[r], c = counts(r);
    var path = layoutPath(index()[r] || []);
    return { d: d, c: c, path: path };
  }

  /* The details panel's view of resource r. */
  R.view = function (r) {
    var s = summaryBits(r);
    if (!s.d) return '';
    var place = placementOf(r);
    return '<div class="d-head">' + h('span', { 'class': 'd-kind' }, 'resource') + h('h3', null, esc(s.d.name)) +
      h('span', { 'class': 'tag' }, esc(s.d.kind)) + (s.d.transient ? h('span', { 'class': 'tag transient' }, 'transient') : '') + '<\/div>' +
      '<dl class="kv"><dt>Uses<\/dt><dd>' + s.c.uses + '<\/dd><dt>Barrier entries<\/dt><dd>' + s.c.bars + ' (' + s.c.changes +
      ' change its layout)<\/dd>' + (s.path.length ? '<dt>Layouts<\/dt><dd class="layout">' + VB.flags(s.path.join(' \u2192 ')) + '<\/dd>' : '') +
      (place ? '<dt>Memory<\/dt><dd>heap ' + place[1] + ', offset ' + esc(VB.fmtBytes(place[2])) + ', ' + esc(VB.fmtBytes(place[3])) + '<\/dd>' : '') +
      '<\/dl>' + h('h4', null, 'States in plan order') + statesTable(r);
  };

  function placementOf(r) {
    var m = VB.state.frame.memory;
    if (!m || !m.placements) return null;
    for (var i = 0; i < m.placements.length; i++) if (m.placements[i][0] === r) return m.placements[i];
    return null;
  }

  /* ---------- the list ---------- */

  function listHtml() {
    var f = VB.state.frame;
    var eager = f.resources.length <= 40 && f.passes.length <= 200;
    return f.resources.map(function (d, r) {
      var s = summaryBits(r);
      var sum = h('span', { 'class': 'res-name' }, esc(d.name)) + ' ' + h('span', { 'class': 'tag' }, esc(d.kind)) +
        (d.transient ? ' ' + h('span', { 'class': 'tag transient' }, 'transient') : '') +
        h('span', { 'class': 'res-counts' }, s.c.uses + ' uses \u00b7 ' + s.c.bars + ' barrier entries' +
          (s.c.changes ? ' \u00b7 ' + s.c.changes + ' layout changes' : '')) +
        h('span', { 'class': 'res-path' }, esc(s.path.join(' \u2192 ')));
      return '<details class="res" data-res="' + r + '">' + h('summary', null, sum) +
        h('div', { 'class': 'res-body', 'data-filled': eager ? '1' : null }, eager ? statesTable(r) : '') + '<\/details>';
    }).join('');
  }

  /* ---------- memory ---------- */

  function memoryNumbers(m) {
    var saved = m.unaliased > 0 ? Math.round((1 - m.aliased / m.unaliased) * 100) : 0;
    function n(label, v, note) {
      return '<div class="stat">' + h('div', { 'class': 'stat-label' }, esc(label)) + h('div', { 'class': 'stat-value' }, esc(VB.fmtBytes(v))) +
        (note ? h('div', { 'class': 'stat-note' }, esc(note)) : '') + '<\/div>';
    }
    return '<div class="stats">' + n('With aliasing', m.aliased, saved > 0 ? saved + '% less than without' : 'transients share memory') +
      n('Without aliasing', m.unaliased, 'every transient its own memory') +
      n('Lower bound', m.lower_bound, 'most alive at once') +
      n('Heaps', (m.heaps || []).reduce(function (a, b) { return a + b; }, 0), (m.heaps || []).length + ' heap' + ((m.heaps || []).length === 1 ? '' : 's')) +
      '<\/div>';
  }

  function hue(r) { return (r * 47) % 12; }

  /* The heap map: one band per heap, offset down, the timeline's x across. */
  function mapSvg(m) {
    var g = VB.timeline.geometry();
    if (!g) return '';
    var G = VB.timeline.GUTTER, PAD_L = VB.timeline.PAD_L;
    var heaps = m.heaps || [];
    var H = MAP_AXIS + heaps.length * (HEAP_H + HEAP_GAP);
    function px(x) { return PAD_L + (x - g.d0) * g.k; }
    var s = ['<svg class="heapmap" xmlns="http://www.w3.org/2000/svg" width="' + g.W + '" height="' + H + '" viewBox="0 0 ' + g.W + ' ' + H + '" aria-label="Heap map">'];
    s.push('<defs><clipPath id="hm-clip"><rect x="' + G + '" y="0" width="' + g.plotW + '" height="' + H + '"/><\/clipPath><\/defs>');
    s.push('<rect class="gutter" x="0" y="0" width="' + G + '" height="' + H + '"/>');
    s.push('<g class="hm-axis">' + mapAxis(H) + '<\/g>');
    var bands = [];
    heaps.forEach(function (size, hi) {
      var y = MAP_AXIS + hi * (HEAP_H + HEAP_GAP);
      s.push('<rect class="heap-bg" x="' + G + '" y="' + y + '" width="' + g.plotW + '" height="' + HEAP_H + '"/>');
      s.push(h('text', { 'class': 'lane-name', x: 14, y: y + 18 }, 'heap ' + hi));
      s.push(h('text', { 'class': 'lane-sub', x: 14, y: y + 33 }, esc(VB.fmtBytes(size))));
      s.push(h('text', { 'class': 'lane-sub', x: G - 8, y: y + 10, 'text-anchor': 'end' }, '0'));
      s.push(h('text', { 'class': 'lane-sub', x: G - 8, y: y + HEAP_H, 'text-anchor': 'end' }, esc(VB.fmtBytes(size))));
    });
    (m.placements || []).forEach(function (pl) {
      var size = heaps[pl[1]];
      if (!(size > 0)) return;
      var y = MAP_AXIS + pl[1] * (HEAP_H + HEAP_GAP) + pl[2] / size * HEAP_H;
      var hh = Math.max(3, pl[3] / size * HEAP_H - 1);
      var x0 = px(pl[4]), w = Math.max(3, px(pl[5]) - x0);
      var name = VB.resName(pl[0]);
      var tip = name + ': heap ' + pl[1] + ', offset ' + VB.fmtBytes(pl[2]) + ', ' + VB.fmtBytes(pl[3]) + ', ' + VB.fmtX(pl[4]) + ' \u2192 ' + VB.fmtX(pl[5]);
      bands.push('<g class="placement h' + hue(pl[0]) + '" data-res="' + pl[0] + '" data-goto="r:' + pl[0] + '">' + h('title', null, esc(tip)) +
        '<rect x="' + x0.toFixed(1) + '" y="' + y.toFixed(1) + '" width="' + w.toFixed(1) + '" height="' + hh.toFixed(1) + '" rx="2"/>' +
        (w > 34 && hh >= 13 ? h('text', { x: (x0 + 4).toFixed(1), y: (y + Math.min(hh / 2 + 4, 13)).toFixed(1) }, esc(name.length * 6.2 > w - 8 ? name.slice(0, Math.max(1, Math.floor((w - 8) / 6.2) - 1)) + '\u2026' : name)) : '') +
        '<\/g>');
    });
    s.push('<g clip-path="url(#hm-clip)"><g class="pan-hm" transform="translate(' + (G - VB.state.pan).toFixed(1) + ',0)">' + bands.join('') + '<\/g><\/g>');
    s.push('<line class="gutter-edge" x1="' + G + '" x2="' + G + '" y1="0" y2="' + H + '"/>');
    s.push('<\/svg>');
    return s.join('');
  }

  function mapAxis(H) {
    var G = VB.timeline.GUTTER;
    return VB.timeline.ticks().filter(function (t) { return t.px > G + 1; }).map(function (t) {
      var x = t.px.toFixed(1);
      var fits = t.px + 8 + t.label.length * 6 < VB.timeline.geometry().W;
      return '<line class="grid" x1="' + x + '" x2="' + x + '" y1="' + (MAP_AXIS - 6) + '" y2="' + H + '"/>' +
        (fits ? h('text', { 'class': 'tick', x: (t.px + 4).toFixed(1), y: MAP_AXIS - 8 }, esc(t.label)) : '');
    }).join('');
  }

  R.renderMap = function () {
    var host = document.getElementById('heapmap');
    if (!host || !VB.state.frame) return;
    var m = VB.state.frame.memory;
    host.innerHTML = m && m.placements && m.placements.length ? mapSvg(m) : '';
  };

  R.applyPan = function () {
    var host = document.getElementById('heapmap');
    var grp = host && host.querySelector('.pan-hm');
    if (!grp) return;
    grp.setAttribute('transform', 'translate(' + (VB.timeline.GUTTER - VB.state.pan).toFixed(1) + ',0)');
    var svg = host.querySelector('svg'), ax = host.querySelector('.hm-axis');
    if (ax) ax.innerHTML = mapAxis(parseFloat(svg.getAttribute('height')));
  };

  R.render = function () {
    var f = VB.state.frame, m = f.memory;
    var mem = document.getElementById('memory');
    if (m) {
      mem.hidden = false;
      document.getElementById('memory-numbers').innerHTML = memoryNumbers(m);
    } else {
      mem.hidden = true;
      document.getElementById('memory-numbers').innerHTML = '';
    }
    R.renderMap();
    document.getElementById('resources-count').textContent = String(f.resources.length);
    var list = document.getElementById('resource-list');
    list.innerHTML = f.resources.length ? listHtml() : h('p', { 'class': 'muted' }, 'No resources.');
    if (!wired) wire(list);
  };

  /* Bodies of big frames are filled when opened; an open resource lights up
     the passes that use it. */
  var wired = false;
  function wire(list) {
    wired = true;
    list.addEventListener('toggle', function (e) {
      var d = e.target;
      if (!d.classList || !d.classList.contains('res')) return;
      var r = +d.getAttribute('data-res');
      var body = d.querySelector('.res-body');
      if (d.open && body && !body.getAttribute('data-filled')) {
        body.innerHTML = statesTable(r);
        body.setAttribute('data-filled', '1');
      }
      VB.state.resHl = d.open ? usersOf(r) : null;
      VB.applyClasses();
    }, true);
  }

  function usersOf(r) {
    return (index()[r] || []).filter(function (ev) { return ev.use; }).map(function (ev) { return ev.pass; });
  }
  R.usersOf = usersOf;
})();
