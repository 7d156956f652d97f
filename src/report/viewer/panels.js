/* vk-baton frame report viewer: the details panel (what is hovered or
   pinned), the spans panel (spans, critical path, moves) and the findings. */
(function () {
  'use strict';
  var VB = window.VB = window.VB || {};
  var h = VB.h, esc = VB.esc;
  var D = VB.details = {};
  var P = VB.panels = {};

  /* ---------- small builders ---------- */

  function kv(rows) {
    return '<dl class="kv">' + rows.filter(Boolean).map(function (r) {
      return h('dt', null, esc(r[0])) + h('dd', null, r[1]);
    }).join('') + '<\/dl>';
  }
  function table(cls, head, rows) {
    return '<table class="' + cls + '"><thead><tr>' + head.map(function (c) { return h('th', null, esc(c)); }).join('') +
      '<\/tr><\/thead><tbody>' + rows.map(function (r) {
      return '<tr>' + r.map(function (c) { return h('td', null, c); }).join('') + '<\/tr>';
    }).join('') + '<\/tbody><\/table>';
  }
  function head(kind, title, tags) {
    return '<div class="d-head">' + h('span', { 'class': 'd-kind' }, esc(kind)) + h('h3', null, title) + (tags || '') + '<\/div>';
  }
  function tag(cls, text) { return h('span', { 'class': 'tag ' + cls }, esc(text)); }
  function layoutText(s) { return s ? h('span', { 'class': 'layout' }, VB.flags(s)) : h('span', { 'class': 'muted' }, 'n/a'); }
  function batchName(gi) {
    var b = VB.state.frame.batches[gi];
    return b ? VB.goto('B:' + gi, esc(VB.queueName(b.queue)) + ' #' + b.index) : '?';
  }
  function xLabel() {
    var a = VB.state.frame.axis;
    return a === 'measured' ? 'Start \u2192 end (measured)' : a === 'predicted' ? 'Predicted start \u2192 end' : 'Plan slots';
  }

  /* Cause text with each `name` that is the entry's pass (or the one before
     it) made a button that selects that pass. */
  function causeHtml(e) {
    var causePass = e[10], text = VB.str(e[11]), after = e[12];
    if (!text && causePass >= 0) {
      text = 'for `' + VB.passName(causePass) + '`' + (after >= 0 ? ', after `' + VB.passName(after) + '`' : '');
    }
    if (!text) return h('span', { 'class': 'muted' }, 'no cause recorded');
    return 'why: ' + esc(text).replace(/`([^`]*)`/g, function (all, name) {
      var cands = [causePass, after].filter(function (p) { return p >= 0 && esc(VB.passName(p)) === name; });
      return cands.length ? VB.goto('p:' + cands[0], VB.tick(name), 'pass-link') : VB.tick(name);
    });
  }

  /* ---------- one view per kind of thing ---------- */

  function passView(i) {
    var st = VB.state, f = st.frame, p = f.passes[i];
    if (!p) return '';
    var q = f.queues[p.queue] || { name: '?', family: '?' };
    var gi = st.model.passBatch[i];
    var crit = (f.span && f.span.critical) || [];
    var ci = crit.indexOf(i);
    var tags = (p.critical || ci >= 0 ? tag('crit', 'critical path') : '') + (p.x ? '' : tag('muted', 'culled'));
    var out = head('pass', esc(p.name), tags) + kv([
      ['Queue', esc(q.name) + h('span', { 'class': 'muted' }, ' family ' + esc(q.family)) +
        (gi !== undefined ? ', batch ' + batchName(gi) : '')],
      ['Measured time', p.ns === null || p.ns === undefined ? h('span', { 'class': 'muted' }, 'not timed') : esc(VB.fmtNs(p.ns))],
      [xLabel(), p.x ? esc(VB.fmtX(p.x[0]) + ' \u2192 ' + VB.fmtX(p.x[1])) + h('span', { 'class': 'muted' }, ' (' + esc(VB.fmtW(p.x[1] - p.x[0])) + ')') : 'culled'],
      ['Critical path', p.critical || ci >= 0 ? 'yes' + (ci >= 0 ? ', step ' + (ci + 1) + ' of ' + crit.length : '') : 'no']
    ]);
    var uses = (p.uses || []).map(function (u) {
      return [VB.goto('r:' + u[0], esc(VB.resName(u[0])), 'res-link'), esc(VB.str(u[1])),
        h('span', { 'class': 'access' }, VB.flags(VB.str(u[2]))), u[3] >= 0 ? layoutText(VB.str(u[3])) : h('span', { 'class': 'muted' }, '\u2014')];
    });
    out += h('h4', null, 'Declared uses (' + uses.length + ')');
    out += uses.length ? table('grid-table', ['resource', 'range', 'access', 'layout'], uses) : h('p', { 'class': 'muted' }, 'none');
    var prep = preparedBy(i);
    if (prep.length) {
      out += h('h4', null, 'Barriers that prepare its uses (' + prep.length + ')');
      out += h('p', { 'class': 'chips' }, prep.map(function (r) {
        var p2 = r.split(':');
        return VB.goto(r, 'barrier on ' + esc(batchLabel(+p2[1])), 'chip');
      }).join(' '));
    }
    out += findingsOf(i);
    return out;
  }

  function batchLabel(gi) {
    var b = VB.state.frame.batches[gi];
    return b ? VB.queueName(b.queue) + ' #' + b.index : '?';
  }

  /* Barrier commands with an entry whose cause is pass i. */
  var prepIndex = null, prepFrame = null;
  function preparedBy(i) {
    var f = VB.state.frame;
    if (prepFrame !== f) {
      prepFrame = f;
      prepIndex = {};
      f.batches.forEach(function (b, gi) {
        b.items.forEach(function (it, k) {
          if (typeof it === 'number') return;
          it.entries.forEach(function (e) {
            var list = prepIndex[e[10]] || (prepIndex[e[10]] = []);
            var ref = 'b:' + gi + ':' + k;
            if (list[list.length - 1] !== ref) list.push(ref);
          });
        });
      });
    }
    return prepIndex[i] || [];
  }

  function findingsOf(i) {
    var list = (VB.state.frame.findings || []).map(function (fd, n) { return [fd, n]; })
      .filter(function (x) { return x[0].pass === i || x[0].first_pass === i; });
    if (!list.length) return '';
    return h('h4', null, 'Findings') + '<ul class="plain">' + list.map(function (x) {
      return h('li', null, tag('bad', x[0].kind) + ' ' + VB.goto('f:' + x[1], VB.rich(x[0].text)));
    }).join('') + '<\/ul>';
  }

  function familiesHtml(e) {
    var fam = e[8];
    if (!fam) return h('span', { 'class': 'muted' }, '\u2014');
    var kind = e[9] === 1 ? tag('transfer', 'release') : e[9] === 2 ? tag('transfer', 'acquire') : '';
    return esc('family ' + fam[0] + ' \u2192 ' + fam[1]) + ' ' + kind;
  }

  function entryRow(e) {
    var old = VB.str(e[2]), neu = VB.str(e[3]);
    var changes = e[2] >= 0 && e[3] >= 0 && old !== neu;
    var layouts = e[2] < 0 && e[3] < 0 ? h('span', { 'class': 'muted' }, 'buffer') :
      h('span', { 'class': changes ? 'layout-change' : '' }, layoutText(old) + ' \u2192 ' + layoutText(neu));
    // As the library writes scopes: src stages/access -> dst stages/access.
    var scopes = h('div', { 'class': 'scope' }, VB.flags(VB.str(e[4]) + '/' + VB.str(e[5]))) +
      h('div', { 'class': 'scope' }, ' \u2192 ' + VB.flags(VB.str(e[6]) + '/' + VB.str(e[7])));
    return [VB.goto('r:' + e[0], esc(VB.resName(e[0])), 'res-link') + h('div', { 'class': 'muted small' }, esc(VB.str(e[1]))),
      layouts, scopes, familiesHtml(e), causeHtml(e)];
  }

  function barrierView(gi, k) {
    var f = VB.state.frame, b = f.batches[gi], item = b && b.items[k];
    if (!item || typeof item === 'number') return '';
    var next = b.items.slice(k + 1).filter(function (x) { return typeof x === 'number'; })[0];
    var where = next !== undefined ? 'before ' + VB.passLink(next) : 'at the end of the batch';
    var transfers = item.entries.filter(function (e) { return e[9] === 1 || e[9] === 2; }).length;
    var out = head('barrier', esc(VB.queueName(b.queue)) + ' #' + b.index + ', item ' + k,
      transfers ? tag('transfer', transfers + ' ownership transfer' + (transfers > 1 ? 's' : '')) : '');
    out += kv([['Where', batchName(gi) + ', ' + where + h('span', { 'class': 'muted' }, ' at ' + esc(VB.fmtX(item.x)))],
      ['Entries', String(item.entries.length)]]);
    out += table('grid-table entries', ['resource', 'layout', 'stages / access', 'families', 'cause'], item.entries.map(entryRow));
    return out;
  }

  function waitView(gi, j) {
    var f = VB.state.frame, b = f.batches[gi], w = b && b.waits[j];
    if (!w) return '';
    var stages = h('span', { 'class': 'access' }, VB.flags(VB.str(w[3])));
    var me = batchName(gi), what, rows;
    if (w[0] === 0) {
      var src = VB.state.model.qb[w[1]] && VB.state.model.qb[w[1]][w[2]];
      what = 'timeline wait';
      rows = [['Waiter', me], ['Waits for', (src !== undefined ? batchName(src) : esc(VB.queueName(w[1]) + ' #' + w[2])) + ' (its timeline signal)']];
    } else if (w[0] === 1) {
      what = 'wait on an earlier frame';
      rows = [['Waiter', me], ['Waits for', 'value ' + esc(w[2]) + ' of ' + esc(VB.queueName(w[1])) + '\u2019s timeline, from an earlier frame']];
    } else {
      what = 'binary semaphore wait';
      rows = [['Waiter', me]];
    }
    rows.push(['Stages that wait', stages]);
    return head('wait', esc(what)) + kv(rows);
  }

  function signalView(gi, j) {
    var b = VB.state.frame.batches[gi];
    if (!b) return '';
    return head('signal', 'binary semaphore signal') + kv([['Batch', batchName(gi)],
      ['Stages', h('span', { 'class': 'access' }, VB.flags(VB.str((b.binary_signals || [])[j])))]]);
  }

  function batchView(gi) {
    var f = VB.state.frame, b = f.batches[gi];
    if (!b) return '';
    var passes = b.items.filter(function (x) { return typeof x === 'number'; });
    var waits = b.waits.map(function (w, j) {
      var t = w[0] === 0 ? 'on ' + esc(VB.queueName(w[1])) + ' #' + w[2] : w[0] === 1 ? 'on value ' + w[2] + ' of ' + esc(VB.queueName(w[1])) + ' (earlier frame)' : 'binary';
      return VB.goto('w:' + gi + ':' + j, t) + h('span', { 'class': 'muted' }, ' at ') + VB.flags(VB.str(w[3]));
    });
    return head('batch', esc(VB.queueName(b.queue)) + ' #' + b.index) + kv([
      ['Span', esc(VB.fmtX(b.x[0]) + ' \u2192 ' + VB.fmtX(b.x[1]))],
      ['Passes', passes.map(VB.passLink).join(', ') || '\u2014'],
      ['Barrier commands', String(b.items.length - passes.length)],
      ['Waits', waits.join('<br>') || '\u2014'],
      ['Signals', b.signal >= 0 ? 'its timeline, at ' + VB.flags(VB.str(b.signal)) : '\u2014'],
      ['Binary signals', (b.binary_signals || []).map(function (s) { return VB.flags(VB.str(s)); }).join('<br>') || '\u2014']
    ]);
  }

  function findingView(i) {
    var fd = (VB.state.frame.findings || [])[i];
    if (!fd) return '';
    return head('finding', esc(fd.kind), tag('bad', 'verifier')) + h('p', { 'class': 'finding-text' }, VB.rich(fd.text)) + kv([
      ['Pass', VB.passLink(fd.pass)], ['First pass', VB.passLink(fd.first_pass)],
      fd.resource ? ['Resource', esc(fd.resource)] : null]);
  }

  var VIEWS = {
    p: function (a) { return passView(+a[1]); },
    b: function (a) { return barrierView(+a[1], +a[2]); },
    w: function (a) { return waitView(+a[1], +a[2]); },
    s: function (a) { return signalView(+a[1], +a[2]); },
    B: function (a) { return batchView(+a[1]); },
    f: function (a) { return findingView(+a[1]); },
    r: function (a) { return VB.resources.view(+a[1]); }
  };

  D.render = function () {
    var st = VB.state, ref = st.frame && (st.pinned || st.hover);
    var body = document.getElementById('details-body');
    var pin = document.getElementById('details-pin');
    if (pin) {
      pin.hidden = !st.pinned;
      pin.textContent = st.pinned ? 'pinned \u00b7 Esc to unpin' : '';
    }
    var html = '';
    if (ref) {
      var a = ref.split(':');
      html = VIEWS[a[0]] ? VIEWS[a[0]](a) : '';
    }
    body.innerHTML = html || h('p', { 'class': 'placeholder' },
      'Hover over a pass, barrier or wait on the timeline to see it here; click (or Enter) to pin it, Esc to unpin.');
    document.getElementById('details').classList.toggle('pinned', !!st.pinned);
  };

  /* Passes to highlight while `ref` is shown: a barrier's causes, a finding's two sides. */
  D.related = function (ref) {
    var f = VB.state.frame, a = ref.split(':'), out = [];
    if (a[0] === 'b') {
      var b = f.batches[+a[1]], item = b && b.items[+a[2]];
      if (item && item.entries) item.entries.forEach(function (e) { if (e[10] >= 0) out.push(e[10]); if (e[12] >= 0) out.push(e[12]); });
    } else if (a[0] === 'r') {
      out = VB.resources.usersOf(+a[1]);
    } else if (a[0] === 'f') {
      var fd = f.findings[+a[1]];
      if (fd) out.push(fd.pass, fd.first_pass);
    }
    return out.filter(function (p, i) { return p >= 0 && out.indexOf(p) === i; });
  };

  /* ---------- spans panel ---------- */

  function stat(label, value, note) {
    return '<div class="stat">' + h('div', { 'class': 'stat-label' }, esc(label)) + h('div', { 'class': 'stat-value' }, esc(value)) +
      (note ? h('div', { 'class': 'stat-note' }, note) : '') + '<\/div>';
  }
  function ratio(a, b) { return a > 0 && b > 0 ? (a / b).toFixed(2) + '\u00d7' : '\u2014'; }

  function spansHtml() {
    var f = VB.state.frame, sp = f.span || {};
    var base = sp.measured_ns || sp.predicted_ns;
    if (sp.predicted_ns == null && sp.measured_ns == null && sp.serial_ns == null) {
      // A frame without GPU times: say so once instead of four empty numbers.
      return h('p', { 'class': 'muted' }, 'This frame has no GPU times, so no spans, critical path or moves: ' +
        'its passes are laid out in plan order. Time a frame (Graph::set_gpu_timings) to see them.');
    }
    var out = '<div class="stats">' +
      stat('Predicted span', VB.fmtNs(sp.predicted_ns), 'at best, from measured durations') +
      stat('Measured span', VB.fmtNs(sp.measured_ns), 'first start to last end') +
      stat('Serial time', VB.fmtNs(sp.serial_ns), 'all passes one after another') +
      stat('Overlap', ratio(sp.serial_ns, base), esc('serial / ' + (sp.measured_ns ? 'measured' : 'predicted') + ' span') +
        (sp.measured_ns && sp.predicted_ns ? esc(' (predicted: ' + ratio(sp.serial_ns, sp.predicted_ns) + ')') : '')) +
      '<\/div>';
    var crit = sp.critical || [];
    out += h('h3', null, 'Critical path' + h('span', { 'class': 'count' }, String(crit.length)));
    function item(p) {
      var ns = f.passes[p] && f.passes[p].ns;
      return h('li', null, VB.passLink(p) + (ns !== null && ns !== undefined ? h('span', { 'class': 'muted' }, ' ' + esc(VB.fmtNs(ns))) : ''));
    }
    // A long path shows its head; the rest folds away.
    var SHOW = 12;
    if (!crit.length) out += h('p', { 'class': 'muted' }, f.axis === 'order' ? 'No times: no critical path.' : 'None.');
    else if (crit.length <= SHOW + 4) out += '<ol class="crit-path">' + crit.map(item).join('') + '<\/ol>';
    else {
      out += '<ol class="crit-path">' + crit.slice(0, SHOW).map(item).join('') + '<\/ol>' +
        '<details class="more">' + h('summary', null, 'all ' + crit.length + ' passes') +
        '<ol class="crit-path" start="' + (SHOW + 1) + '">' + crit.slice(SHOW).map(item).join('') + '<\/ol><\/details>';
    }
    var moves = (f.moves || []).slice().sort(function (a, b) { return a[2] - b[2]; }).slice(0, 5);
    out += h('h3', null, 'Best moves' + h('span', { 'class': 'count' }, String(moves.length)));
    out += moves.length ? '<ul class="moves">' + moves.map(function (mv) {
      var gain = sp.predicted_ns ? mv[2] - sp.predicted_ns : null;
      return h('li', null, 'move ' + VB.goto('p:' + mv[0], VB.tick(esc(VB.passName(mv[0]))), 'pass-link') +
        ' to ' + VB.tick(esc(VB.queueName(mv[1]))) + ': span ' + h('b', null, esc(VB.fmtNs(mv[2]))) +
        (gain !== null ? h('span', { 'class': gain < 0 ? 'good' : 'muted' }, ' (' + (gain < 0 ? '\u2212' : '+') + esc(VB.fmtNs(Math.abs(gain))) + ')') : ''));
    }).join('') + '<\/ul>' : h('p', { 'class': 'muted' }, 'No move to another queue shortens the span (or none was tried).');
    return out;
  }

  /* ---------- findings ---------- */

  function findingsHtml() {
    var list = VB.state.frame.findings || [];
    document.getElementById('findings-count').textContent = String(list.length);
    document.getElementById('findings').classList.toggle('has-findings', list.length > 0);
    if (!list.length) return h('p', { 'class': 'ok' }, 'No findings: the verifier found nothing wrong with this frame.');
    return '<ul class="findings-list">' + list.map(function (fd, i) {
      var target = fd.pass >= 0 ? 'p:' + fd.pass : 'f:' + i;
      return h('li', null, h('button', { type: 'button', 'class': 'finding-item', 'data-goto': target, 'data-finding': i },
        tag('bad', fd.kind) + ' ' + h('span', null, VB.rich(fd.text))));
    }).join('') + '<\/ul>';
  }

  P.render = function () {
    document.getElementById('spans-body').innerHTML = spansHtml();
    document.getElementById('findings-body').innerHTML = findingsHtml();
  };
})();
