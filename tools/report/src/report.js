// gpucap report: builds the page from the JSON in #gpucap-data with
// Chart.js, then leaves what every chart holds in #gpucap-rendered (read
// back by tests/tools/html_report_test.cc). Data values are integer ns as
// gpucap stats computes them; only axes and tooltips format them.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('gpucap-data').textContent);
  var main = document.getElementById('report');
  var colors = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
  var splitKinds = [['compute_ns', 'compute', '#4e79a7'], ['communication_ns', 'NCCL', '#e15759'],
                    ['memcpy_ns', 'memcpy', '#59a14f'], ['memset_ns', 'memset', '#edc948'], ['idle_ns', 'idle', '#d9d9d9']];
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;

  // A duration in the largest unit that keeps it at 1 or more, to three
  // decimals at most and no trailing zeros: "700 ms", "1.25 s", "12.5 us".
  function fmt(ns) {
    var a = Math.abs(ns);
    function round(x) { return String(Number(x.toFixed(3))); }
    if (a >= 1e9) return round(ns / 1e9) + ' s';
    if (a >= 1e6) return round(ns / 1e6) + ' ms';
    if (a >= 1e3) return round(ns / 1e3) + ' us';
    return round(ns) + ' ns';
  }
  // The smallest round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k) at or above x.
  function niceCeil(x) {
    var p = Math.pow(10, Math.floor(Math.log10(x)));
    var steps = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * p >= x) return steps[i] * p;
    return 10 * p;
  }
  // A value axis that one outlier does not flatten (the first step of a job
  // with NCCL's start-up in it can be a thousand times the others): with
  // three or more bars, a bar past 4x the median ends the axis at the
  // largest of the others (rounded up), and is named on its label and in a
  // note under the chart. totals[i]: bar i's height; null: no cut.
  function robustTop(totals) {
    var v = totals.filter(function (x) { return x > 0; }).sort(function (a, b) { return a - b; });
    if (v.length < 3) return null;
    var limit = 4 * v[Math.floor((v.length - 1) / 2)];
    var inside = v.filter(function (x) { return x <= limit; });
    if (inside.length === v.length || !inside.length) return null;
    return niceCeil(1.1 * inside[inside.length - 1]);
  }
  // Cuts options.scales.y at robustTop of `totals` (by label); returns the
  // note naming the bars past it, or null.
  function cutAxis(options, labels, totals, parent) {
    var top = robustTop(totals);
    if (top === null) return null;
    options.scales.y.max = top;
    var past = [];
    labels.forEach(function (l, i) { if (totals[i] > top) past.push(l + ' (' + fmt(totals[i]) + ')'); });
    options.scales.x = Object.assign(options.scales.x || {}, {ticks: {callback: function (v, i) {
      var l = this.getLabelForValue(v);
      return totals[i] > top ? [l, '\u2191 ' + fmt(totals[i])] : l;
    }}});
    return function () {
      el('p', {class: 'note cut'}, parent, 'Axis cut at ' + fmt(top) + ' so the other bars read: ' + past.join(', ') +
         (past.length > 1 ? ' run' : ' runs') + ' past the top.');
    };
  }
  function el(tag, attrs, parent, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function table(parent, headers, rows, nameCols) {
    var t = el('table', {}, parent), tr = el('tr', {}, t);
    headers.forEach(function (h, i) { el('th', (nameCols || []).indexOf(i) >= 0 ? {class: 'name'} : {}, tr, h); });
    rows.forEach(function (r) {
      var row = el('tr', {}, t);
      r.forEach(function (c, i) { el('td', (nameCols || []).indexOf(i) >= 0 ? {class: 'name', title: c} : {}, row, c); });
    });
    return t;
  }
  function timeAxis(title) {
    return {beginAtZero: true, title: {display: !!title, text: title}, ticks: {callback: function (v) { return fmt(v); }}};
  }
  function nsTooltip(ctx) { return (ctx.dataset.label || '') + ': ' + fmt(ctx.parsed.y === undefined ? ctx.parsed : ctx.parsed.y); }
  function chart(parent, id, config, cls) {
    var box = el('div', {class: 'chart' + (cls ? ' ' + cls : '')}, parent);
    var canvas = el('canvas', {id: id}, box);
    return new Chart(canvas, config);
  }
  function windowName(w) { return w.label ? w.label : 'window ' + w.index; }
  // "GPU 0 stream 7: NCCL": a stream by what runs on it (its role, from the
  // strips; compute, NCCL, copy).
  var roles = {};
  data.captures.forEach(function (c, ci) {
    c.strips.streams.forEach(function (st) { roles[ci + '/' + st.device + '/' + st.stream] = st.role; });
  });
  var currentCapture = 0;
  function streamName(st) {
    var role = roles[currentCapture + '/' + st.device + '/' + st.stream];
    return 'GPU ' + st.device + ' stream ' + st.stream + (role ? ': ' + role : '');
  }

  function facts(c, parent) {
    var info = c.info, s = info.session || {}, dmg = info.damage || {}, rows = [];
    rows.push(['capture', c.path + ' (' + ((info.capture || {}).bytes || 0) + ' bytes)']);
    if (c.rank >= 0) rows.push(['rank', c.rank + ' of ' + c.world_size]);
    if (c.host) rows.push(['host', c.host]);
    if (s.command_line) rows.push(['command', [].concat(s.command_line).join(' ')]);
    if (s.cuda_driver_version) rows.push(['CUDA driver / runtime', s.cuda_driver_version + ' / ' + s.cuda_runtime_version]);
    (info.devices || []).forEach(function (d) { rows.push(['GPU ' + d.id, (d.name || '') + ' (sm ' + (d.compute_capability || '?') + ')']); });
    if (info.time && info.time.start_utc) rows.push(['started', info.time.start_utc]);
    var spec = data.window_spec;
    if (data.window_chosen) spec += spec === 'all' ? ': no steps found (--window picks windows)' : ': the steps found (--window picks others)';
    rows.push(['windows', c.windows.length + ' (' + spec + '), ' + fmt(c.span_ns) + ' from first start to last end']);
    Object.keys(info.drops || {}).forEach(function (k) {
      var v = info.drops[k];
      if (v && typeof v === 'object') {
        // The recorder's own counters: not drops; the nonzero ones, by name.
        var set = Object.keys(v).filter(function (f) { return v[f] !== 0 && v[f] !== ''; });
        if (set.length) rows.push([k.replace(/_/g, ' '), set.map(function (f) { return f + ' ' + v[f]; }).join(', ')]);
      } else if (v !== 0 && v !== '' && v !== null) {
        rows.push(['dropped: ' + k, String(v)]);
      }
    });
    var sd = info.shutdown || {};
    rows.push(['shutdown', (sd.clean ? 'clean' : 'NOT clean') + (sd.trailer ? ', trailer written' : ', no trailer') +
               (sd.stop_reason ? ', ' + sd.stop_reason : '')]);
    rows.push(['intact', dmg.intact ? 'yes: no damage, no drops' : 'NO: ' + (dmg.tail_bytes_lost || 0) +
               ' tail bytes lost, ' + (dmg.sequence_gaps || 0) + ' sequence gaps']);
    table(parent, ['fact', 'value'], rows, [0, 1]);
    var lines = (dmg.lines || []).concat(c.warnings.filter(function (w) { return (dmg.lines || []).indexOf(w) < 0; }));
    if (lines.length) {
      var ul = el('ul', {class: 'warn'}, parent);
      lines.forEach(function (l) { el('li', {}, ul, l); });
    } else {
      el('p', {class: 'ok'}, parent, 'No damage, no drops, nothing skipped in decoding.');
    }
  }

  function split(c, ci, parent) {
    var devices = {};
    c.windows.forEach(function (w) { w.devices.forEach(function (d) { devices[d.device] = true; }); });
    Object.keys(devices).forEach(function (dev) {
      el('h3', {}, parent, 'GPU ' + dev + ': time per window');
      var labels = c.windows.map(windowName);
      var sets = splitKinds.map(function (k) {
        return {label: k[1], backgroundColor: k[2], data: c.windows.map(function (w) {
          var d = w.devices.filter(function (x) { return String(x.device) === dev; })[0];
          return d ? d[k[0]] : 0;
        })};
      });
      var totals = labels.map(function (l, i) { return sets.reduce(function (a, s) { return a + s.data[i]; }, 0); });
      var options = {scales: {x: {stacked: true}, y: Object.assign(timeAxis(), {stacked: true})},
                     plugins: {tooltip: {callbacks: {label: nsTooltip}}}};
      var note = cutAxis(options, labels, totals, parent);
      chart(parent, 'split-c' + ci + '-d' + dev, {type: 'bar', data: {labels: labels, datasets: sets}, options: options});
      if (note) note();
    });
  }

  function kernels(c, ci, parent) {
    c.kinds.forEach(function (k, ki) {
      el('h3', {}, parent, 'Top kernels in ' + k.kind + ' (' + k.windows.length + ' window' + (k.windows.length > 1 ? 's' : '') + ')');
      if (!k.kernels.length) { el('p', {class: 'note'}, parent, 'No kernels.'); return; }
      chart(parent, 'kernels-c' + ci + '-k' + ki, {
        type: 'bar',
        data: {labels: k.kernels.map(function (r) { return r.name.length > 60 ? r.name.slice(0, 57) + '...' : r.name; }),
               datasets: [{label: 'total', backgroundColor: colors[0], data: k.kernels.map(function (r) { return r.total_ns; })}]},
        options: {indexAxis: 'y', scales: {x: timeAxis()}, plugins: {legend: {display: false},
                  tooltip: {callbacks: {label: function (ctx) { return fmt(ctx.parsed.x); }}}}}
      }, 'short');
      table(parent, ['kernel', 'total', 'count', 'mean'], k.kernels.map(function (r) {
        return [r.name, fmt(r.total_ns), r.count, fmt(r.mean_ns)];
      }), [0]);
      if (k.kernels_left_out) el('p', {class: 'note'}, parent, k.kernels_left_out + ' more kernels not shown.');
    });
  }

  // The strip's time axis, labelled at round times: a label on the bin that
  // holds each multiple of a round step, about ten in all. Past a few
  // thousand bins Chart.js's own tick skipping, at the bins' start times.
  function stripAxis(s) {
    var span = s.bins * s.bin_ns;
    if (s.bins > 4000) return {ticks: {maxTicksLimit: 12, maxRotation: 0, callback: function (v) { return fmt(v * s.bin_ns); }}};
    var step = niceCeil(span / 10);
    return {ticks: {autoSkip: false, maxRotation: 0, callback: function (v) {
      var a = v * s.bin_ns, b = a + s.bin_ns, m = Math.ceil(a / step) * step;
      return m < b ? fmt(m) : null;
    }}, grid: {display: false}};
  }

  function strips(c, ci, parent) {
    var s = c.strips;
    el('h3', {}, parent, 'Streams: busy share of each ' + fmt(s.bin_ns) + ' of the capture');
    if (!s.streams.length) { el('p', {class: 'note'}, parent, 'No GPU ops.'); return; }
    var labels = [];
    for (var i = 0; i < s.bins; i++) labels.push(i * s.bin_ns);
    chart(parent, 'strips-c' + ci, {
      type: 'line',
      data: {labels: labels, datasets: s.streams.map(function (st, i) {
        return {label: streamName(st) + ' (' + fmt(st.busy_ns) + ' busy)', data: st.busy,
                stepped: true, pointRadius: 0, borderWidth: 1, fill: true,
                borderColor: colors[i % colors.length], backgroundColor: colors[i % colors.length] + '55'};
      })},
      options: {scales: {x: stripAxis(s), y: {beginAtZero: true, max: s.bin_ns, title: {display: true, text: 'busy'},
                                               ticks: {stepSize: s.bin_ns / 4, callback: function (v) {
                                                 return Math.round(100 * v / s.bin_ns) + '%'; }}}},
                plugins: {tooltip: {callbacks: {title: function (items) { return fmt(labels[items[0].dataIndex]) + ' +' + fmt(s.bin_ns); },
                                                label: nsTooltip}}}}
    });
    if (s.streams_left_out) {
      el('p', {class: 'note'}, parent, s.streams_left_out + ' less busy streams not drawn (' + fmt(s.left_out_busy_ns) +
         ' busy in all); gpucap stats --report cuda_gpu_trace or the trace has them.');
    }
  }

  function delays(c, ci, parent) {
    el('h3', {}, parent, 'Launch delays per stream');
    if (!c.delays.length) { el('p', {class: 'note'}, parent, 'No GPU op with its launch record.'); return; }
    var rows = [];
    var grid = el('div', {class: 'grid'}, parent);
    c.delays.forEach(function (d) {
      var name = d.stream === null ? d.streams + ' other streams' : streamName(d);
      [['launch_to_start', 'launch → start'], ['return_to_start', 'launch return → start (queued)']].forEach(function (k) {
        var x = d[k[0]];
        rows.push([name, k[1], x.count, fmt(x.p50_ns), fmt(x.p90_ns), fmt(x.p99_ns), fmt(x.max_ns)]);
      });
      var edges = d.launch_to_start.edges_ns.length >= d.return_to_start.edges_ns.length ? d.launch_to_start.edges_ns : d.return_to_start.edges_ns;
      function pad(a) { var r = a.slice(); while (r.length < edges.length) r.push(0); return r; }
      var box = el('div', {}, grid);
      el('div', {class: 'note'}, box, name);
      chart(box, 'delays-c' + ci + (d.stream === null ? '-rest' : '-d' + d.device + '-s' + d.stream), {
        type: 'bar',
        data: {labels: edges.map(function (e) { return '≥ ' + fmt(e); }),
               datasets: [{label: 'launch → start', backgroundColor: colors[0], data: pad(d.launch_to_start.counts)},
                          {label: 'return → start', backgroundColor: colors[1], data: pad(d.return_to_start.counts)}]},
        options: {scales: {y: {beginAtZero: true, title: {display: true, text: 'ops'}}}}
      }, 'short');
    });
    table(parent, ['stream', 'delay', 'ops', 'p50', 'p90', 'p99', 'max'], rows, [0, 1]);
  }

  function counters(c, ci, parent) {
    if (!c.counters.length) return;
    el('h3', {}, parent, 'Counters');
    var grid = el('div', {class: 'grid'}, parent);
    c.counters.forEach(function (k, i) {
      var box = el('div', {}, grid);
      chart(box, 'counter-c' + ci + '-' + i, {
        type: 'line',
        data: {datasets: [{label: k.name + (k.unit ? ' (' + k.unit + ')' : ''), borderColor: colors[i % colors.length],
                           pointRadius: 0, borderWidth: 1,
                           data: k.t_ns.map(function (t, j) { return {x: t, y: k.values[j]}; })}]},
        options: {scales: {x: {type: 'linear', ticks: {callback: function (v) { return fmt(v); }}}}}
      }, 'short');
    });
  }

  function rankName(r, c) { return 'rank ' + r.rows[c].rank; }
  // The findings across ranks, in words: the slow rank and the longest step.
  function findings(r, parent) {
    var ul = el('ul', {id: 'ranks-findings', class: 'findings'}, parent);
    if (r.slow_rank) {
      el('li', {}, ul, 'Slow rank: rank ' + r.slow_rank.rank + (r.slow_rank.host ? ' (' + r.slow_rank.host + ')' : '') +
         ', the straggler of ' + r.slow_rank.steps + ' of ' + r.slow_rank.of + ' steps: the other ranks wait for it at their collectives.');
    } else {
      el('li', {}, ul, 'No step has NCCL time on every rank: no straggler.');
    }
    var l = r.longest_step;
    if (l) {
      el('li', {}, ul, 'Longest step: ' + l.step + ', median ' + fmt(l.median_ns) + ' over the ranks' +
         (l.ratio !== null ? ', ' + l.ratio + 'x the other steps\' median (' + fmt(l.others_median_ns) + ')' : '') +
         (l.straggler !== null ? '; its straggler: ' + rankName(r, l.straggler) : '') + '.');
    }
  }

  function ranksFew(r, parent) {
    var names = r.rows.map(function (row) { return 'rank ' + row.rank; });
    el('h3', {}, parent, 'Step time per rank');
    var longest = r.steps.map(function (s, i) { return Math.max.apply(null, r.rows.map(function (row) { return row.step_ns[i]; })); });
    var options = {scales: {y: timeAxis()}, plugins: {tooltip: {callbacks: {label: nsTooltip}}}};
    var note = cutAxis(options, r.steps, longest, parent);
    chart(parent, 'ranks-step', {
      type: 'bar',
      data: {labels: r.steps, datasets: r.rows.map(function (row, i) {
        return {label: names[i], backgroundColor: colors[i % colors.length], data: row.step_ns};
      })},
      options: options
    });
    if (note) note();
    el('h3', {}, parent, 'NCCL time and wait per rank');
    var sets = [];
    r.rows.forEach(function (row, i) {
      sets.push({label: names[i] + ' NCCL', stack: 'r' + i, backgroundColor: colors[i % colors.length], data: row.communication_ns});
      sets.push({label: names[i] + ' wait', stack: 'w' + i, backgroundColor: colors[i % colors.length] + '66', data: row.wait_ns});
    });
    var most = r.steps.map(function (s, i) { return Math.max.apply(null, sets.map(function (d) { return d.data[i]; })); });
    options = {scales: {y: timeAxis()}, plugins: {tooltip: {callbacks: {label: nsTooltip}}}};
    note = cutAxis(options, r.steps, most, parent);
    chart(parent, 'ranks-nccl', {type: 'bar', data: {labels: r.steps, datasets: sets}, options: options});
    if (note) note();
    table(parent, ['step', 'straggler'].concat(names.map(function (n) { return n + ' step'; })).concat(names.map(function (n) { return n + ' wait'; })),
      r.steps.map(function (s, i) {
        var st = r.straggler[i];
        return [s, st === null ? '-' : names[st]].concat(r.rows.map(function (row) { return fmt(row.step_ns[i]); }))
          .concat(r.rows.map(function (row) { return fmt(row.wait_ns[i]); }));
      }), [0, 1]);
  }

  // Many ranks: each step's spread over the ranks, and every rank's wait as
  // a heatmap (a row per rank, a column per step), instead of a bar each.
  var heatmaps = [];
  function ranksMany(r, parent) {
    el('h3', {}, parent, 'Step time over the ranks');
    var spread = [['min_ns', 'min', '#9c755f'], ['p50_ns', 'median', '#4e79a7'], ['p90_ns', 'p90', '#f28e2b'], ['max_ns', 'max', '#e15759']];
    chart(parent, 'ranks-step-spread', {
      type: 'line',
      data: {labels: r.steps, datasets: spread.map(function (k) {
        return {label: k[1], borderColor: k[2], backgroundColor: k[2], data: r.step_spread.map(function (x) { return x[k[0]]; })};
      })},
      options: {scales: {y: timeAxis()}, plugins: {tooltip: {callbacks: {label: nsTooltip}}}}
    });
    el('h3', {}, parent, 'Wait at collectives, rank by rank');
    // Each column on its own scale (its step's largest wait): a step in
    // which everybody waited long would wash the others out.
    var cols = r.steps.length, rows = r.rows.length;
    var colMax = r.steps.map(function (s, i) { return r.wait_spread[i].max_ns; });
    var maxWait = Math.max.apply(null, [0].concat(colMax));
    var cw = Math.max(4, Math.min(96, Math.floor(960 / Math.max(1, cols))));
    var ch = Math.max(1, Math.min(12, Math.floor(720 / Math.max(1, rows))));
    var wrap = el('div', {class: 'heatmap'}, parent);
    var canvas = el('canvas', {id: 'ranks-wait-heatmap', width: cols * cw, height: rows * ch}, wrap);
    var g = canvas.getContext('2d');
    r.rows.forEach(function (row, y) {
      row.wait_ns.forEach(function (w, x) {
        var f = colMax[x] > 0 ? w / colMax[x] : 0;
        g.fillStyle = r.straggler[x] === y ? '#4e79a7'
          : 'rgb(255,' + Math.round(255 - 200 * f) + ',' + Math.round(255 - 220 * f) + ')';
        g.fillRect(x * cw, y * ch, cw, ch);
      });
    });
    canvas.title = 'rows: ranks in capture order; columns: steps; red: wait, each step against its own largest; blue: the step\'s straggler';
    el('p', {class: 'note'}, parent, 'A row per rank (' + rows + '), a column per step (' + cols + '): the redder, the longer the ' +
       'rank waited at its collectives, against the step\'s longest wait (the table below gives each); blue marks each step\'s straggler.');
    heatmaps.push({id: 'ranks-wait-heatmap', type: 'heatmap', labels: r.steps, datasets: [], y_max: null, y_ticks: [], rows: rows, max_ns: maxWait,
                   stragglers: r.straggler.map(function (c) { return c === null ? null : r.rows[c].rank; })});
    table(parent, ['step', 'straggler', 'median step', 'max step', 'median wait', 'max wait'], r.steps.map(function (s, i) {
      var st = r.straggler[i];
      return [s, st === null ? '-' : rankName(r, st), fmt(r.step_spread[i].p50_ns), fmt(r.step_spread[i].max_ns),
              fmt(r.wait_spread[i].p50_ns), fmt(r.wait_spread[i].max_ns)];
    }), [0, 1]);
  }

  function ranks(r, parent) {
    el('h2', {}, parent, 'Ranks (' + r.rows.length + ')');
    findings(r, parent);
    if (r.rows.length <= 16) ranksFew(r, parent);
    else ranksMany(r, parent);
    el('p', {class: 'note'}, parent, 'A collective kernel runs until the last rank reaches it: the rank with the least ' +
      'NCCL time in a step is the straggler, and each rank\'s wait is its NCCL time beyond the straggler\'s.');
  }

  // How far each host's clock was from the reference rank's, and how well
  // the collectives agree once corrected: the ranks past 100 us, or all of
  // a few.
  function clocks(k, parent) {
    el('h2', {}, parent, 'Clocks');
    var ref = k.rows[k.reference];
    var shifted = k.rows.filter(function (x) { return x.aligned; }).length;
    el('p', {id: 'clocks-summary'}, parent, k.hosts + ' host(s); ' + shifted + ' of ' + k.rows.length +
       ' ranks shifted onto rank ' + ref.rank + ' (' + ref.host + ') by their collectives; largest residual ' +
       fmt(k.worst_residual_ns) + ' (rank ' + k.rows[k.worst].rank + ').');
    var show = k.rows.filter(function (x) { return k.rows.length <= 16 || x.residual_max_ns > 100000 || x.note; });
    if (!show.length) return;
    table(parent, ['rank', 'host', 'offset', 'drift (ppm)', 'collectives', 'residual max', 'residual rms', ''],
      show.map(function (x) {
        return [String(x.rank), x.host, x.aligned ? fmt(x.offset_ns) : '-', x.aligned ? String(x.drift_ppm) : '-',
                String(x.matched), fmt(x.residual_max_ns), fmt(x.residual_rms_ns), x.note || ''];
      }), [1, 7]);
  }

  function leave(id, value) {
    var s = document.createElement('script');
    s.type = 'application/json';
    s.id = id;
    s.textContent = JSON.stringify(value).split('<').join('\\u003c');
    document.body.appendChild(s);
  }

  try {
    if (data.ranks) ranks(data.ranks, main);
    if (data.clocks) clocks(data.clocks, main);
    if (data.captures.length < data.capture_count) {
      el('p', {class: 'note', id: 'detailed-note'}, main, 'In full below: ' + data.captures.length + ' of ' + data.capture_count +
         ' captures (the lowest rank, the slow rank and the stragglers); gpucap report --detailed N draws more.');
    }
    data.captures.forEach(function (c, ci) {
      currentCapture = ci;
      var sec = el('section', {id: 'capture-' + ci}, main);
      el('h2', {}, sec, (c.rank >= 0 ? 'Rank ' + c.rank + ': ' : '') + c.path);
      facts(c, sec);
      split(c, ci, sec);
      kernels(c, ci, sec);
      strips(c, ci, sec);
      delays(c, ci, sec);
      counters(c, ci, sec);
    });

    // What each chart holds, for the test (and for anyone scripting the page).
    var rendered = Object.values(Chart.instances).map(function (ch) {
      var y = ch.scales.y;
      return {id: ch.canvas.id, type: ch.config.type, labels: ch.data.labels || [],
              datasets: ch.data.datasets.map(function (d) { return {label: d.label, data: d.data}; }),
              y_max: (ch.options.scales.y || {}).max === undefined ? null : ch.options.scales.y.max,
              y_ticks: y ? y.ticks.map(function (t) { return String(t.label); }) : []};
    }).concat(heatmaps);
    window.gpucapCharts = rendered;
    leave('gpucap-rendered', rendered);
  } catch (e) {
    window.gpucapErrors.push('report.js: ' + (e && e.stack ? e.stack : e));
  } finally {
    leave('gpucap-errors', window.gpucapErrors);
  }
})();
