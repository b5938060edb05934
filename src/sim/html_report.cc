#include "sim/html_report.h"

#include <string>
#include <string_view>

#include "sim/echarts_bundle.h"

namespace trellis {

namespace {

// Text safe inside a <script> element: "</" cannot end it early.
std::string script_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') out += '\\';
  }
  return out;
}

constexpr std::string_view kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; overflow-wrap: anywhere; } h2 { font-size: 1.1em; margin-top: 1.5em; }
p { overflow-wrap: anywhere; }
.chart { width: 100%; height: 420px; }
.small { width: 100%; height: 320px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(380px, 1fr)); gap: 1em; }
.maps { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 1em; }
.tablebox { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
td.text { text-align: left; color: #555; }
.note { color: #a40; }
.caption { font-size: 0.85em; font-weight: 600; margin-bottom: 0.2em; }
.warning { background: #fff3cd; border: 1px solid #e0b84c; padding: 0.6em 1em; }
)css";

// Shared by both pages: error capture, the chart helper that counts what was drawn, formatting.
constexpr std::string_view kCommonScript = R"js(
window.__errors = [];
function recordError(text) {
  window.__errors.push(text);
  document.body.setAttribute('data-errors', window.__errors.join(' | '));
}
window.onerror = function (msg, src, line) { recordError(String(msg) + ' (line ' + line + ')'); };
var rendered = 0;
var palette = ['#4e79a7','#f28e2b','#59a14f','#b07aa1','#76b7b2','#edc948','#ff9da7','#9c755f',
  '#1f77b4','#2ca02c','#9467bd','#8c564b','#17becf','#bcbd22','#e377c2','#6b8e23','#4682b4',
  '#cd853f','#5f9ea0','#a0522d'];
function drawChart(id, option) {
  var el = document.getElementById(id);
  var chart = echarts.init(el, null, {renderer: 'canvas'});
  option.animation = false;
  chart.setOption(option);
  window.addEventListener('resize', function () { chart.resize(); });
  rendered++;
  document.body.setAttribute('data-charts-rendered', String(rendered));
  return chart;
}
function fmt(v) {
  if (v === null || v === undefined) return 'n/a';
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(4);
}
function esc(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}
// rows: arrays of cells, each a value (formatted) or {html: ...} or {text: ...}.
function table(el, header, rows) {
  var html = '<tr>' + header.map(function (h) { return '<th>' + esc(h) + '</th>'; }).join('') + '</tr>';
  rows.forEach(function (r) {
    html += '<tr>' + r.map(function (c) {
      if (c && typeof c === 'object' && 'html' in c) return '<td>' + c.html + '</td>';
      if (c && typeof c === 'object' && 'text' in c) return '<td class="text">' + esc(c.text) + '</td>';
      return '<td>' + esc(fmt(c)) + '</td>'; }).join('') + '</tr>';
  });
  el.innerHTML = html;
}
function aboutText(about) {
  return Object.keys(about || {}).map(function (k) {
    var v = about[k];
    return k + ' = ' + (typeof v === 'object' ? JSON.stringify(v) : v); }).join(', ');
}
function recordOverflow() {
  var root = document.documentElement;
  document.body.setAttribute('data-page-overflow', String(Math.max(0, root.scrollWidth - root.clientWidth)));
}
)js";

constexpr std::string_view kRunBody = R"html(
<h1 id="title">Trellis simulation</h1>
<p id="about"></p>
<h2>Summary</h2><div class="tablebox"><table id="summary"></table></div>
<h2>Gantt chart</h2><p id="gantt-note"></p><div id="gantt" class="chart" style="height:600px"></div>
<h2>Utilization, queue length and largest free box</h2><p id="timeline-note"></p><div id="timeline" class="chart"></div>
<h2>Bounded slowdown by job size</h2><div id="slowdown" class="chart"></div>
<div id="network-section" style="display:none"><h2>Network</h2><p id="network-note"></p>
<div class="grid"><div id="network-inflation" class="small"></div><div id="network-links" class="small"></div></div></div>
<div id="occupancy-section"><h2>Occupancy</h2><p id="occupancy-note"></p><div id="occupancy" class="maps"></div>
<div id="occupancy-explorer" style="display:none"><h3>Occupancy at any recorded instant</h3>
<input id="occupancy-slider" type="range" min="0" max="0" value="0" style="width:100%">
<div id="occupancy-live"></div></div></div>
)html";

constexpr std::string_view kRunScript = R"js(
(function () {
try {
var D = JSON.parse(document.getElementById('trellis-data').textContent);
var a = D.about || {}, m = D.metrics || {};
document.getElementById('title').textContent = 'Trellis simulation: ' + (a.workload || '');
document.getElementById('about').textContent = aboutText(a);
var occ = D.occupancy;
var maps = occ && occ.instants && occ.instants.length ? occ.maps.length + 1 : 0;
var net = D.network;  // a run-time model's per-job figures; absent without one
document.body.setAttribute('data-charts-expected', String(3 + maps + (net ? 2 : 0)));

// The summary: plain names with units and what each metric means.
var DEFS = {
  jobs: ['Jobs run', '', 'jobs that ran (completed or killed at their limit)'],
  rejected: ['Jobs rejected', '', 'jobs that could never be placed on this machine'],
  timed_out: ['Jobs timed out', '', 'jobs killed at their time limit (state TO)'],
  mean_wait_s: ['Mean wait', 's', 'mean of start − submit'],
  max_wait_s: ['Longest wait', 's', 'max of start − submit'],
  mean_response_s: ['Mean response', 's', 'mean of end − submit'],
  mean_bounded_slowdown: ['Mean bounded slowdown', '', 'mean of max(1, (wait + run) / max(run, 10 s))'],
  max_bounded_slowdown: ['Largest bounded slowdown', '', 'max of max(1, (wait + run) / max(run, 10 s))'],
  offered_load: ['Offered load', '', 'node-seconds of work / (nodes × (last submit − first submit)); above 1 the queue grows without bound'],
  utilization: ['Utilization', '', 'busy node-seconds / (nodes × makespan)'],
  steady_utilization: ['Steady utilization', '', 'utilization over the steady window (no warm-up or drain-down)'],
  steady_window_s: ['Steady window', 's', 'submit times of the jobs at the 10th and 90th percentile of arrivals'],
  window_s: ['Metrics window', 's', 'only jobs submitted in [from, to) are counted (--from, --to); n/a: the whole run'],
  bounded_slowdown_threshold_s: ['Bounded slowdown threshold', 's', 'run times shorter than this count as this long in bounded slowdown (--bsld-threshold)'],
  largest_free_box_sampled: ['Largest free box sampled', '', 'true on machines over 65,536 nodes: measured at about 1,000 instants, not after every pass'],
  first_submit_s: ['First submit', 's', 'trace time of the first submit (T0)'],
  last_end_s: ['Last end', 's', 'trace time the last job ended (T1)'],
  makespan_s: ['Makespan', 's', 'T1 − T0'],
  loss_of_capacity: ['Loss of capacity', '', 'idle node-seconds while a job waits / (nodes × makespan)'],
  fragmented_time_fraction: ['Fragmented time', 'fraction', 'share of the makespan in which the queue head fits by node count but the allocator cannot place it'],
  mean_queue_length: ['Mean queue length', 'jobs', 'time-weighted mean of jobs waiting'],
  max_queue_length: ['Longest queue', 'jobs', 'most jobs waiting at once'],
  mean_largest_free_box: ['Mean largest free box', 'nodes', 'time-weighted nodes in the largest free box (mesh/torus only)'],
  mean_pairwise_hops: ['Mean pairwise hops', 'hops', 'mean over jobs of two or more nodes of the mean hop distance between their nodes'],
  mean_leaf_switches: ['Mean leaf switches', 'switches', 'mean leaf switches a job spans (fat trees only)'],
  mean_inflation: ['Mean run-time inflation', '', 'mean factor the run-time model multiplied recorded run times by (1: as on the most compact allocation; --runtime-model)'],
  mean_hop_bytes: ['Mean hop-bytes', 'MiB × hops', 'mean over jobs of their all-to-all traffic × hops it travels, 1 MiB per ordered pair of nodes (--runtime-model)'],
  mean_max_link_load: ['Mean max link load', '', "mean over jobs of the load on their most loaded link, their own traffic per unit of capacity (--runtime-model)"],
  internal_fragmentation: ['Internal fragmentation', 'fraction', 'node-seconds held beyond the nodes asked for / node-seconds held (boxes or gang partitions larger than the request)'],
  allocator_calls: ['Allocator calls', '', 'allocate() calls made by the policy'],
  allocator_call_us: ['Allocator call time', 'µs', 'mean wall time of one allocate() call'],
  policy_passes: ['Policy passes', '', 'scheduling passes'],
  mean_pass_us: ['Mean pass time', 'µs', 'mean wall time of one policy pass'],
  max_pass_us: ['Longest pass', 'µs', 'max wall time of one policy pass'],
  wall_s: ['Wall time', 's', 'the whole simulation'],
  jobs_per_s: ['Simulation speed', 'jobs/s', 'jobs simulated per second of wall time']
};
function duration(s) {
  if (Math.abs(s) >= 2 * 86400) return fmt(s / 86400) + ' days';
  if (Math.abs(s) >= 2 * 3600) return fmt(s / 3600) + ' h';
  if (Math.abs(s) >= 120) return fmt(s / 60) + ' min';
  return null;
}
function metricValue(v, unit) {
  if (v === null || v === undefined || v === -1) return 'n/a';
  if (Array.isArray(v)) return v.map(function (x) { return metricValue(x, unit); }).join(' .. ');
  if (typeof v === 'object') return JSON.stringify(v).slice(0, 200);
  var text = fmt(v) + (unit ? ' ' + unit : '');
  var human = unit === 's' && typeof v === 'number' ? duration(v) : null;
  return human ? text + ' (' + human + ')' : text;
}
var known = Object.keys(DEFS).filter(function (k) { return k in m; });
var unknown = Object.keys(m).filter(function (k) { return !(k in DEFS); });
table(document.getElementById('summary'), ['metric', 'value', 'definition'],
  known.concat(unknown).map(function (k) {
    var d = DEFS[k] || [k, '', ''];
    return [{text: d[0] + (d[1] ? ' (' + d[1] + ')' : '')}, metricValue(m[k], d[1]), {text: d[2]}]; }));

// Time axes: calendar dates when the trace says when time 0 was, else a unit that suits the run.
var g = D.gantt, tmin = g.t_min, tmax = g.t_max, span = Math.max(tmax - tmin, 1);
var unix = typeof a.unix_start_time === 'number' ? a.unix_start_time : null;
var units = [[86400, 'days'], [3600, 'hours'], [60, 'minutes'], [1, 's']];
var unit = units.filter(function (u) { return span >= 3 * u[0]; })[0] || units[3];
var X = unix !== null ? function (t) { return (unix + t) * 1000; } : function (t) { return t / unit[0]; };
function pad(n) { return n < 10 ? '0' + n : String(n); }
function dateText(t, withTime) {
  var d = new Date((unix + t) * 1000);
  var day = d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate());
  return withTime ? day + ' ' + pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) : day;
}
function timeText(t) {
  return unix !== null ? dateText(t, true) + ' UTC' : fmt(t / unit[0]) + ' ' + unit[1] + ' (' + fmt(t) + ' s)';
}
function timeAxis() {
  var axis = {nameLocation: 'middle', nameGap: 30, min: X(tmin), max: X(tmax),
              axisLabel: {hideOverlap: true}};
  if (unix !== null) {
    axis.type = 'time';
    axis.name = 'date (UTC)';
    axis.axisLabel.formatter = function (v) {
      return dateText(v / 1000 - unix, span < 3 * 86400); };
  } else {
    axis.type = 'value';
    axis.name = 'time since trace start (' + unit[1] + ')';
    var decimals = Math.max(0, 2 - Math.floor(Math.log10(span / unit[0])));
    axis.axisLabel.formatter = function (v) { return String(+v.toFixed(decimals)); };
  }
  return axis;
}

// The Gantt chart. Rectangles and bands carry their times in seconds too (last two values), so
// the page can add up the node-seconds it really drew.
var drawn = {busy: 0, rects: 0};
// A band's grey darkens with the share of its cell kept busy: light for a little, dark for all.
function shade(share) {
  var level = Math.round(215 - 150 * Math.min(1, Math.max(0, share)));
  return 'rgb(' + level + ',' + level + ',' + (level + 10) + ')';
}
function rectItem(fill, stroke, dash, busyShare) {
  return function (params, api) {
    var top = api.value(2), bottom = api.value(3);
    var share = busyShare ? api.value(4) : 1;
    var p0 = api.coord([api.value(0), top]);
    var p1 = api.coord([api.value(1), bottom]);
    var cs = params.coordSys;
    var shape = echarts.graphic.clipRectByRect(
      {x: p0[0], y: Math.min(p0[1], p1[1]), width: Math.max(p1[0] - p0[0], 0.5),
       height: Math.max(Math.abs(p1[1] - p0[1]), 0.5)},
      {x: cs.x, y: cs.y, width: cs.width, height: cs.height});
    if (!shape) return null;
    var n = api.value(busyShare ? 5 : 8), e = api.value(busyShare ? 6 : 9);
    drawn.busy += (e - n) * (bottom - top) * share;
    drawn.rects++;
    return {type: 'rect', shape: shape, style: {
      fill: busyShare ? shade(share) : fill || palette[api.value(4) % palette.length], stroke: stroke,
      lineWidth: stroke === 'none' ? 0 : (dash ? 1.5 : 0.3), lineDash: dash || null}};
  };
}
var completed = [], killed = [];
g.rects.forEach(function (r) {
  (r[7] ? killed : completed).push([X(r[0]), X(r[1]), r[2], r[3], r[4], r[5], r[6], r[7], r[0], r[1]]); });
var bands = g.bands.map(function (b) { return [X(b[0]), X(b[1]), b[2], b[3], b[4], b[0], b[1]]; });
var jobTip = function (p) { var v = p.value;
  return 'job ' + v[4] + (v[7] ? ' (timed out)' : '') + '<br>' + v[5] + ' nodes, ' + (v[3] - v[2]) +
    ' here (' + v[2] + '..' + (v[3] - 1) + ')<br>from ' + timeText(v[8]) + '<br>to ' + timeText(v[9]) +
    '<br>waited ' + fmt(v[6]) + ' s'; };
var ganttSeries = [
  {name: 'job (each its own colour)', type: 'custom', encode: {x: [0, 1], y: [2, 3]}, data: completed,
   progressive: 0, itemStyle: {color: palette[0]}, renderItem: rectItem(null, 'rgba(0,0,0,0.35)'),
   tooltip: {formatter: jobTip}},
  {name: 'timed out (killed at its limit)', type: 'custom', encode: {x: [0, 1], y: [2, 3]}, data: killed,
   progressive: 0, itemStyle: {color: '#fff', borderColor: '#c00', borderWidth: 2, borderType: 'dashed'},
   renderItem: rectItem(null, '#c00', [4, 2]), tooltip: {formatter: jobTip}}];
if (g.mode === 'aggregated')
  ganttSeries.push({name: 'other jobs, summed (darker = busier)', type: 'custom',
    encode: {x: [0, 1], y: [2, 3]}, data: bands, progressive: 0, itemStyle: {color: shade(0.6)},
    renderItem: rectItem(null, 'none', null, true),
    tooltip: {formatter: function (p) { var v = p.value;
      return 'nodes ' + v[2] + '..' + (v[3] - 1) + ', ' + timeText(v[5]) + ' to ' + timeText(v[6]) +
             '<br>busy ' + fmt(100 * v[4]) + '% of this cell'; }}});
document.getElementById('gantt-note').innerHTML = g.mode === 'aggregated'
  ? '<span class="note">' + g.total_jobs + ' jobs are too many to draw one by one: ' + (g.shown_jobs
    ? 'the ' + g.shown_jobs + ' long-running ones with the most node-seconds are drawn as jobs; the others'
    : 'they') + ' are summed into grey cells of ' +
    fmt(g.band_seconds / unit[0]) + ' ' + unit[1] + ' × ' + fmt(D.nodes / g.band_rows) +
    ' node(s), shaded by the share of the cell they kept busy (light: a little, dark: all of it), so every busy ' +
    'node-second is drawn (' + fmt(g.busy_node_seconds) + ' in all).</span>'
  : g.total_jobs + ' jobs, one rectangle per run of consecutive nodes and per interval the job ran ' +
    '(a time-shared job runs in several). Drag the sliders or scroll to zoom.';
var gantt = drawChart('gantt', {
  useUTC: true,
  tooltip: {},
  legend: {top: 0},
  grid: {left: 80, right: 70, top: 40, bottom: 80},
  dataZoom: [{type: 'slider', xAxisIndex: 0, filterMode: 'weakFilter', bottom: 10,
              labelFormatter: function () { return ''; }},
             {type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter'},
             {type: 'slider', yAxisIndex: 0, filterMode: 'weakFilter', right: 10,
              labelFormatter: function () { return ''; }},
             {type: 'inside', yAxisIndex: 0, filterMode: 'weakFilter'}],
  xAxis: timeAxis(),
  yAxis: {type: 'value', name: 'node (allocator order, ' + D.nodes + ' nodes)', nameLocation: 'middle',
          nameGap: 50, min: 0, max: D.nodes, inverse: true, axisLabel: {hideOverlap: true, showMaxLabel: false}},
  series: ganttSeries
});
var extent = [X(tmin), X(tmax)];
try { extent = gantt.getModel().getComponent('xAxis', 0).axis.scale.getExtent(); } catch (e) {}
var toSeconds = unix !== null ? function (v) { return v / 1000 - unix; } : function (v) { return v * unit[0]; };
var ganttEl = document.getElementById('gantt');
ganttEl.setAttribute('data-x-min-s', String(toSeconds(extent[0])));
ganttEl.setAttribute('data-x-max-s', String(toSeconds(extent[1])));
ganttEl.setAttribute('data-busy-node-seconds', String(drawn.busy));
ganttEl.setAttribute('data-shapes', String(drawn.rects));
ganttEl.setAttribute('data-time-unit', unix !== null ? 'date' : unit[1]);

var tl = D.timeline;
document.getElementById('timeline-note').innerHTML = tl.thinned
  ? '<span class="note">Downsampled: ' + tl.time.length + ' points: the first, busiest and last instant of each short stretch of time.</span>'
  : 'State after each scheduling instant.';
var timelineSeries = [
  {name: 'busy nodes', type: 'line', step: 'end', showSymbol: false, areaStyle: {opacity: 0.3},
   data: tl.time.map(function (t, i) { return [X(t), tl.busy[i]]; })},
  {name: 'queued jobs', type: 'line', step: 'end', showSymbol: false, yAxisIndex: 1,
   data: tl.time.map(function (t, i) { return [X(t), tl.queued[i]]; })}];
if (tl.largest_free_box.length && tl.largest_free_box[0] >= 0)
  timelineSeries.push({name: 'largest free box (nodes)', type: 'line', step: 'end', showSymbol: false,
    lineStyle: {width: 1}, data: tl.time.map(function (t, i) { return [X(t), tl.largest_free_box[i]]; })});
drawChart('timeline', {
  useUTC: true,
  tooltip: {trigger: 'axis'},
  legend: {top: 0},
  grid: {left: 80, right: 80, top: 50, bottom: 80},
  dataZoom: [{type: 'slider', bottom: 10, labelFormatter: function () { return ''; }}, {type: 'inside'}],
  xAxis: timeAxis(),
  yAxis: [{type: 'value', name: 'busy nodes (of ' + D.nodes + ')', max: D.nodes,
           axisLabel: {hideOverlap: true, showMaxLabel: false}},
          {type: 'value', name: 'queued jobs', axisLabel: {hideOverlap: true}}],
  series: timelineSeries
});

var sd = D.slowdown;
drawChart('slowdown', {
  tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}},
  legend: {top: 0, data: sd.bins.map(function (b) { return 'bounded slowdown ' + b; })},
  grid: {left: 70, right: 30, top: 60, bottom: 60},
  xAxis: {type: 'category', name: 'job size (nodes)', nameLocation: 'middle', nameGap: 35, data: sd.classes,
          axisLabel: {hideOverlap: true}},
  yAxis: {type: 'value', name: 'jobs'},
  series: sd.bins.map(function (b, i) {
    return {name: 'bounded slowdown ' + b, type: 'bar', stack: 'all', data: sd.counts[i]}; })
});

// Network: per job, the run-time inflation against job size (the sampled jobs as points, the mean
// over every job of each size as a line) and how loaded its most loaded link was.
if (net) {
  document.getElementById('network-section').style.display = '';
  document.getElementById('network-note').textContent = 'What the run-time model (' +
    (a.runtime_model || 'model') + ') found for the ' + net.measured + ' jobs it measured' +
    (net.sampled ? ' (the scatter shows ' + net.jobs.length + ' of them, evenly spread in start order; ' +
                   'the means by size and the histogram count every one)' : '') +
    '. Inflation: the factor a recorded run time was multiplied by (1 = as on the most compact allocation of its size).';
  var inflationEl = document.getElementById('network-inflation');
  inflationEl.setAttribute('data-points', String(net.jobs.length));
  drawChart('network-inflation', {
    title: {text: 'Run-time inflation by job size', textStyle: {fontSize: 13}},
    tooltip: {trigger: 'item', formatter: function (p) { var v = p.value;
      return p.seriesIndex ? v[0] + ' nodes: mean inflation ' + fmt(v[1]) + ' over ' + v[2] + ' jobs'
        : 'job ' + v[4] + ', ' + v[0] + ' nodes<br>inflation ' + fmt(v[1]) + '<br>max link load ' +
          fmt(v[2]) + '<br>hop-bytes ' + fmt(v[3]); }},
    legend: {top: 0, right: 10},
    grid: {left: 60, right: 30, top: 50, bottom: 50},
    xAxis: {type: 'log', logBase: 2, min: 1, name: 'job size (nodes)', nameLocation: 'middle', nameGap: 28},
    yAxis: {type: 'value', name: 'inflation', scale: true},
    series: [{name: 'job', type: 'scatter', symbolSize: 4, itemStyle: {opacity: 0.45}, data: net.jobs},
             {name: 'mean by size', type: 'line', symbolSize: 5, data: net.by_size,
              itemStyle: {color: palette[1]}}]
  });
  var ll = net.link_load;
  drawChart('network-links', {
    title: {text: "Jobs by their most loaded link's load", textStyle: {fontSize: 13}},
    tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}},
    grid: {left: 60, right: 30, top: 50, bottom: 50},
    xAxis: {type: 'category', name: 'max link load (own traffic per unit of capacity)', nameLocation: 'middle',
            nameGap: 28, axisLabel: {hideOverlap: true},
            data: ll.counts.map(function (c, i) { return fmt(ll.edges[i]) + '–' + fmt(ll.edges[i + 1]); })},
    yAxis: {type: 'value', name: 'jobs'},
    series: [{name: 'jobs', type: 'bar', barCategoryGap: '5%', data: ll.counts}]
  });
}

// Occupancy: every node a square cell (grey when free), each slice of the machine outlined.
// The caption above the map says when it is (HTML, so long captions wrap instead of overlapping).
function occupancyMap(el, inst, title) {
  var caption = document.createElement('div');
  caption.className = 'caption';
  el.parentNode.insertBefore(caption, el);
  var cell = Math.max(3, Math.min(26, Math.floor((el.clientWidth - 20) / occ.width)));
  el.style.height = (cell * occ.height + 20) + 'px';
  var counts = {busy: 0, free: 0};
  var data = occ.cells.map(function (c, node) { return [c[0], c[1], inst.jobs[node]]; });
  var outlines = [];
  for (var s = 0; s < occ.slices; s++) outlines.push([s * (occ.slice_width + 1), 0]);
  function option(inst, data) {
    counts.busy = 0; counts.free = 0;
    caption.textContent = title(inst);
    return {
      tooltip: {formatter: function (p) { return p.seriesIndex ? '' :
        'cell (' + p.value[0] + ',' + p.value[1] + '): ' + (p.value[2] < 0 ? 'free' : 'job ' + p.value[2]); }},
      grid: {left: 10, top: 8, width: cell * occ.width, height: cell * occ.height},
      xAxis: {type: 'value', min: 0, max: occ.width, show: false},
      yAxis: {type: 'value', min: 0, max: occ.height, inverse: true, show: false},
      series: [{type: 'custom', data: data, progressive: 0, encode: {x: 0, y: 1},
        renderItem: function (params, api) {
          var p = api.coord([api.value(0), api.value(1)]), q = api.coord([api.value(0) + 1, api.value(1) + 1]);
          var job = api.value(2);
          if (job < 0) counts.free++; else counts.busy++;
          return {type: 'rect', shape: {x: p[0], y: Math.min(p[1], q[1]), width: q[0] - p[0], height: Math.abs(q[1] - p[1])},
            style: {fill: job < 0 ? '#e6e6e6' : palette[job % palette.length], stroke: '#fff', lineWidth: cell > 6 ? 1 : 0}};
        }},
        {type: 'custom', data: outlines, silent: true, encode: {x: 0, y: 1},
         renderItem: function (params, api) {
          var p = api.coord([api.value(0), 0]), q = api.coord([api.value(0) + occ.slice_width, occ.height]);
          return {type: 'rect', shape: {x: p[0], y: Math.min(p[1], q[1]), width: q[0] - p[0], height: Math.abs(q[1] - p[1])},
            style: {fill: 'none', stroke: '#333', lineWidth: 1.5}};
        }}]
    };
  }
  var chart = drawChart(el.id, option(inst, data));
  function record() {
    el.setAttribute('data-busy-cells', String(counts.busy));
    el.setAttribute('data-free-cells', String(counts.free));
    el.setAttribute('data-nodes', String(D.nodes));
  }
  record();
  return function (next) {
    chart.setOption(option(next, occ.cells.map(function (c, node) { return [c[0], c[1], next.jobs[node]]; })));
    record();
  };
}
if (!occ || !occ.instants.length) {
  document.getElementById('occupancy-note').textContent = occ
    ? (occ.omitted || 'No placements recorded.')
    : 'Occupancy maps are drawn for mesh/torus machines only.';
} else {
  document.getElementById('occupancy-note').textContent = 'Which job holds each node (one colour per job, ' +
    'light grey = free; x across, y down' + (occ.slices > 1 ? ', z slices side by side' : '') +
    '), at the instants by which the run had done ' +
    occ.quantiles.map(function (q) { return Math.round(100 * q) + '%'; }).join(', ') +
    ' of its busy node-seconds. Below, a slider shows any of ' + occ.instants.length + ' recorded instants.';
  var shortTime = function (t) { return unix !== null ? dateText(t, true) : fmt(t / unit[0]) + ' ' + unit[1]; };
  var busyTitle = function (inst) { return shortTime(inst.time) + ': ' + inst.busy + ' of ' + D.nodes + ' nodes busy'; };
  occ.maps.forEach(function (index, k) {
    var box = document.createElement('div'), div = document.createElement('div');
    div.id = 'occupancy-' + k;
    box.appendChild(div);
    document.getElementById('occupancy').appendChild(box);
    occupancyMap(div, occ.instants[index], function (inst) {
      return Math.round(100 * occ.quantiles[k]) + '% of the work done, at ' + busyTitle(inst); });
  });
  document.getElementById('occupancy-explorer').style.display = '';
  var slider = document.getElementById('occupancy-slider');
  slider.max = String(occ.instants.length - 1);
  slider.value = String(occ.maps.length ? occ.maps[0] : 0);
  var show = occupancyMap(document.getElementById('occupancy-live'), occ.instants[+slider.value], busyTitle);
  slider.addEventListener('input', function () { show(occ.instants[+slider.value]); });
}
document.body.setAttribute('data-charts-rendered', String(rendered));
recordOverflow();
} catch (e) { recordError(String(e && e.stack || e)); }
})();
)js";

constexpr std::string_view kCompareBody = R"html(
<h1 id="title">Trellis comparison</h1>
<p id="about"></p>
<div id="job-sets-warning" class="warning" style="display:none"></div>
<h2>Runs</h2><p>Each run's label links to its own report.</p>
<div class="tablebox"><table id="runs"></table></div>
<div id="groups-section" style="display:none"><h2>Mean and spread over seeds</h2>
<p>Mean, and min..max in brackets, over the seeds of each allocator/policy/load.</p>
<div class="tablebox"><table id="groups"></table></div></div>
<div id="common-section" style="display:none"><h2>Over the jobs every run completed</h2>
<p id="common-note"></p><div class="tablebox"><table id="common"></table></div></div>
<h2 id="charts-title">Charts</h2><p id="charts-note"></p>
<div class="grid" id="bars"></div>
<div id="load-section" style="display:none"><h2>Against load</h2><div class="grid" id="curves"></div></div>
)html";

constexpr std::string_view kCompareScript = R"js(
(function () {
try {
var D = JSON.parse(document.getElementById('trellis-data').textContent);
var runs = D.runs || [];
document.getElementById('title').textContent = D.title || 'Trellis comparison';
document.getElementById('about').textContent = aboutText(D.about);
function reportPath(r) {
  if (typeof r.report === 'string' && r.report) return r.report;
  var name = String(r.dir || '').replace(/\/+$/, '').split('/').pop();
  return 'runs/' + name + '/report.html';
}
function link(r) { return {html: '<a href="' + esc(encodeURI(reportPath(r))) + '">' + esc(r.label) + '</a>'}; }
function value(r, key) {
  var v = r.metrics ? r.metrics[key] : undefined;
  return typeof v === 'number' && v !== -1 ? v : null;
}
// Whether some run has a nonzero value of `key`: the metrics only some runs have (a run-time
// model's network means, internal fragmentation) get a column and a chart only then.
function reported(key) {
  return runs.some(function (r) { var v = value(r, key); return v !== null && v !== 0; });
}
var OPTIONAL = {mean_inflation: true, mean_hop_bytes: true, mean_max_link_load: true,
                internal_fragmentation: true};
function shown(c) { return !OPTIONAL[c[0]] || reported(c[0]); }
// Hops stay a table column (n/a under --metrics-only) but get a chart only when measured.
function charted(c) { return shown(c) && (c[0] !== 'mean_pairwise_hops' || reported(c[0])); }
var COLS = [['jobs', 'jobs', 'jobs run'], ['rejected', 'rejected', 'jobs rejected'],
  ['mean_wait_s', 'wait (s)', 'mean wait, s'], ['mean_bounded_slowdown', 'bsld', 'mean bounded slowdown: mean of max(1, (wait + run) / max(run, 10 s))'],
  ['utilization', 'util', 'utilization: busy node-seconds / (nodes × makespan)'],
  ['steady_utilization', 'steady util', 'utilization without warm-up and drain-down'],
  ['loss_of_capacity', 'LoC', 'loss of capacity: idle node-seconds while a job waits / (nodes × makespan)'],
  ['fragmented_time_fraction', 'frag', 'share of the makespan in which the queue head fits by count but not by shape'],
  ['mean_pairwise_hops', 'hops', 'mean pairwise hops within a job'], ['makespan_s', 'makespan (s)', 'last end − first submit'],
  ['mean_inflation', 'inflation', 'mean run-time inflation the run-time model applied (1: as on the most compact allocation)'],
  ['mean_hop_bytes', 'hop-bytes', 'mean all-to-all hop-bytes of a job (MiB × hops)'],
  ['mean_max_link_load', 'link load', "mean load of a job's most loaded link (its own traffic, per unit of capacity)"],
  ['internal_fragmentation', 'int. frag', 'node-seconds held beyond the nodes asked for / node-seconds held (boxes or partitions larger than the request)'],
  ['allocator_call_us', 'µs/alloc', 'mean wall time of one allocate() call'], ['wall_s', 'wall (s)', 'simulation wall time']].filter(shown);
function header(first) {
  return first.concat(COLS.map(function (c) { return c[1]; }));
}
function titles(el, offset) {
  var ths = el.querySelectorAll('th');
  COLS.forEach(function (c, i) { if (ths[offset + i]) ths[offset + i].title = c[2]; });
}
var anyCompleted = runs.some(function (r) { return typeof r.completed_jobs === 'number'; });
table(document.getElementById('runs'), header(['run']).concat(anyCompleted ? ['completed'] : []),
  runs.map(function (r) {
    return [link(r)].concat(COLS.map(function (c) { return value(r, c[0]); }),
                            anyCompleted ? [typeof r.completed_jobs === 'number' ? r.completed_jobs : null] : []); }));
titles(document.getElementById('runs'), 1);

// Groups: the runs of one allocator/policy/load, over seeds.
var groups = [], byKey = {};
runs.forEach(function (r) {
  var key = (r.allocator || r.label) + '/' + (r.policy || '') + ' load ' + (r.load === undefined ? 1 : r.load);
  if (!byKey[key]) {
    byKey[key] = {key: key, series: (r.allocator || r.label) + '/' + (r.policy || ''),
                  load: typeof r.load === 'number' ? r.load : 1, runs: []};
    groups.push(byKey[key]);
  }
  byKey[key].runs.push(r);
});
var seeded = groups.some(function (g) { return g.runs.length > 1; });
var loads = [];
groups.forEach(function (g) { if (loads.indexOf(g.load) < 0) loads.push(g.load); });
function stats(g, key) {
  var xs = g.runs.map(function (r) { return value(r, key); }).filter(function (v) { return v !== null; });
  if (!xs.length) return null;
  var mean = xs.reduce(function (s, x) { return s + x; }, 0) / xs.length;
  return {mean: mean, min: Math.min.apply(null, xs), max: Math.max.apply(null, xs), n: xs.length};
}
function groupLabel(g) { return loads.length > 1 ? g.key : g.series; }
if (seeded) {
  document.getElementById('groups-section').style.display = '';
  table(document.getElementById('groups'), header(['allocator/policy/load', 'runs']), groups.map(function (g) {
    return [{text: groupLabel(g)}, g.runs.length].concat(COLS.map(function (c) {
      var s = stats(g, c[0]);
      return s === null ? 'n/a' : fmt(s.mean) + (s.n > 1 ? ' (' + fmt(s.min) + '..' + fmt(s.max) + ')' : ''); })); }));
  titles(document.getElementById('groups'), 2);
}

// Runs that completed different jobs: their means are over different job sets.
if (D.job_sets_differ === true) {
  var w = document.getElementById('job-sets-warning');
  w.style.display = '';
  w.textContent = 'Warning: the runs did not all complete the same jobs' +
    (typeof D.common_jobs === 'number' ? ' (' + D.common_jobs + ' jobs were completed by every run)' : '') +
    ', so the means in the first table are over different job sets.' +
    (runs.some(function (r) { return r.common_metrics; }) ? ' The table "Over the jobs every run completed" compares them on equal terms.' : '');
}
if (runs.some(function (r) { return r.common_metrics && typeof r.common_metrics === 'object'; })) {
  document.getElementById('common-section').style.display = '';
  document.getElementById('common-note').textContent = (typeof D.common_jobs === 'number' ? D.common_jobs + ' jobs' : 'The jobs') +
    ' completed by every run; means over those jobs only.';
  table(document.getElementById('common'), ['run', 'completed jobs', 'mean wait (s)', 'mean response (s)', 'mean bounded slowdown'],
    runs.map(function (r) { var c = r.common_metrics || {};
      return [link(r), typeof r.completed_jobs === 'number' ? r.completed_jobs : null,
              c.mean_wait_s === undefined ? null : c.mean_wait_s, c.mean_response_s === undefined ? null : c.mean_response_s,
              c.mean_bounded_slowdown === undefined ? null : c.mean_bounded_slowdown]; }));
}

var CHARTS = [['mean_wait_s', 'Mean wait (s)'], ['mean_bounded_slowdown', 'Mean bounded slowdown'],
              ['utilization', 'Utilization'], ['makespan_s', 'Makespan (s)'],
              ['mean_pairwise_hops', 'Mean pairwise hops'], ['mean_inflation', 'Mean run-time inflation'],
              ['mean_hop_bytes', 'Mean hop-bytes (MiB × hops)'], ['mean_max_link_load', 'Mean max link load'],
              ['internal_fragmentation', 'Internal fragmentation']].filter(charted);
var curves = loads.length > 1;
document.body.setAttribute('data-charts-expected', String(CHARTS.length * (curves ? 2 : 1)));
document.getElementById('charts-note').textContent = seeded
  ? 'Bars: the mean over seeds; whiskers: min..max.' : 'One bar per run.';
function short(text) { return text.length > 34 ? text.slice(0, 33) + '…' : text; }
// Whiskers [x, low, high] as a custom series over the same axes.
function whiskers(points, color) {
  return {type: 'custom', silent: true, data: points, z: 10, encode: {x: 0, y: [1, 2]},
    renderItem: function (params, api) {
      var lo = api.coord([api.value(0), api.value(1)]), hi = api.coord([api.value(0), api.value(2)]);
      var half = 5, style = {stroke: color || '#222', lineWidth: 1.2};
      return {type: 'group', children: [
        {type: 'line', shape: {x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1]}, style: style},
        {type: 'line', shape: {x1: lo[0] - half, y1: lo[1], x2: lo[0] + half, y2: lo[1]}, style: style},
        {type: 'line', shape: {x1: hi[0] - half, y1: hi[1], x2: hi[0] + half, y2: hi[1]}, style: style}]};
    }};
}
function addChart(parent, id, metric) {
  var div = document.createElement('div');
  div.id = id;
  div.className = 'small';
  div.setAttribute('data-metric', metric);  // which metric it plots, for readers and tests
  document.getElementById(parent).appendChild(div);
  return id;
}
CHARTS.forEach(function (c, k) {
  var items = seeded ? groups.map(function (g) { return {label: groupLabel(g), s: stats(g, c[0])}; })
                     : runs.map(function (r) { var v = value(r, c[0]);
                         return {label: r.label, s: v === null ? null : {mean: v, min: v, max: v, n: 1}}; });
  var series = [{type: 'bar', name: c[1], data: items.map(function (it, i) {
    return {value: it.s ? it.s.mean : null, itemStyle: {color: palette[i % palette.length]}}; })}];
  if (seeded)
    series.push(whiskers(items.map(function (it, i) { return it.s ? [i, it.s.min, it.s.max] : [i, null, null]; })
                              .filter(function (p) { return p[1] !== null; })));
  drawChart(addChart('bars', 'c-' + k, c[0]), {
    title: {text: c[1], textStyle: {fontSize: 13}},
    tooltip: {trigger: 'axis', formatter: function (ps) { var i = ps[0].dataIndex, it = items[i];
      return esc(it.label) + '<br>' + (it.s ? fmt(it.s.mean) + (it.s.n > 1 ? ' (' + fmt(it.s.min) + '..' + fmt(it.s.max) + ', ' + it.s.n + ' runs)' : '') : 'n/a'); }},
    grid: {left: 60, right: 20, top: 40, bottom: 10, containLabel: true},
    xAxis: {type: 'category', data: items.map(function (it) { return it.label; }),
            axisLabel: {rotate: 35, fontSize: 10, interval: 0, formatter: short}},
    yAxis: {type: 'value'},
    series: series
  });
});
if (curves) {
  document.getElementById('load-section').style.display = '';
  var names = [];
  groups.forEach(function (g) { if (names.indexOf(g.series) < 0) names.push(g.series); });
  CHARTS.forEach(function (c, k) {
    var series = [];
    names.forEach(function (name, i) {
      var points = groups.filter(function (g) { return g.series === name; })
        .map(function (g) { return {load: g.load, s: stats(g, c[0])}; })
        .filter(function (p) { return p.s !== null; })
        .sort(function (x, y) { return x.load - y.load; });
      series.push({name: name, type: 'line', symbolSize: 6, itemStyle: {color: palette[i % palette.length]},
                   data: points.map(function (p) { return [p.load, p.s.mean]; })});
      if (seeded) series.push(whiskers(points.map(function (p) { return [p.load, p.s.min, p.s.max]; }),
                                       palette[i % palette.length]));
    });
    drawChart(addChart('curves', 'l-' + k, c[0]), {
      title: {text: c[1] + ' against load', textStyle: {fontSize: 13}},
      tooltip: {trigger: 'item'},
      legend: {type: 'scroll', bottom: 0, data: names},
      grid: {left: 60, right: 30, top: 40, bottom: 60, containLabel: true},
      xAxis: {type: 'value', name: 'load factor', nameLocation: 'middle', nameGap: 25, scale: true},
      yAxis: {type: 'value', scale: true},
      series: series
    });
  });
}
document.body.setAttribute('data-charts-rendered', String(rendered));
recordOverflow();
} catch (e) { recordError(String(e && e.stack || e)); }
})();
)js";

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

std::string page(std::string_view title, std::string_view body, const nlohmann::json& data,
                 std::string_view script) {
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>";
  html += html_escape(title);
  html += "</title>\n<style>";
  html += kStyle;
  html += "</style>\n<script>";
  html += script_safe(echarts_js());
  html += "</script>\n</head><body data-charts-rendered=\"0\" data-errors=\"\">\n";
  html += body;
  html += "\n<script type=\"application/json\" id=\"trellis-data\">";
  html += script_safe(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  html += "</script>\n<script>";
  html += kCommonScript;
  html += script;
  html += "</script>\n</body></html>\n";
  return html;
}

}  // namespace

std::string render_run_report(const nlohmann::json& data) {
  std::string title = "Trellis simulation";
  if (data.contains("about") && data["about"].contains("workload"))
    title += ": " + data["about"]["workload"].get<std::string>();
  return page(title, kRunBody, data, kRunScript);
}

std::string render_comparison_report(const nlohmann::json& data) {
  return page(data.value("title", "Trellis comparison"), kCompareBody, data, kCompareScript);
}

}  // namespace trellis
