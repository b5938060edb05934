#include "sim/html_report.h"

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
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
.chart { width: 100%; height: 420px; }
.small { width: 100%; height: 300px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1em; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
.note { color: #a40; }
)css";

// Shared by both pages: error capture and the chart helper that counts what was drawn.
constexpr std::string_view kCommonScript = R"js(
window.__errors = [];
window.onerror = function (msg, src, line) {
  window.__errors.push(String(msg) + ' (line ' + line + ')');
  document.body.setAttribute('data-errors', window.__errors.join(' | '));
};
var rendered = 0;
var palette = ['#5470c6','#91cc75','#fac858','#ee6666','#73c0de','#3ba272','#fc8452','#9a60b4',
  '#ea7ccc','#2f4554','#61a0a8','#d48265','#749f83','#ca8622','#bda29a','#6e7074','#546570',
  '#c4ccd3','#1e90ff','#ff69b4'];
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
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(4);
}
function table(el, header, rows) {
  var html = '<tr>' + header.map(function (h) { return '<th>' + h + '</th>'; }).join('') + '</tr>';
  rows.forEach(function (r) {
    html += '<tr>' + r.map(function (c) { return '<td>' + fmt(c) + '</td>'; }).join('') + '</tr>';
  });
  el.innerHTML = html;
}
)js";

constexpr std::string_view kRunBody = R"html(
<h1 id="title">Trellis simulation</h1>
<p id="about"></p>
<h2>Summary</h2><table id="summary"></table>
<h2>Gantt chart</h2><p id="gantt-note"></p><div id="gantt" class="chart" style="height:560px"></div>
<h2>Utilization, queue length and largest free box</h2><p id="timeline-note"></p><div id="timeline" class="chart"></div>
<h2>Bounded slowdown by job size</h2><div id="slowdown" class="chart"></div>
<div id="occupancy-section"><h2>Occupancy</h2><p id="occupancy-note"></p><div id="occupancy" class="grid"></div></div>
)html";

constexpr std::string_view kRunScript = R"js(
(function () {
var D = JSON.parse(document.getElementById('trellis-data').textContent);
var a = D.about, m = D.metrics;
document.getElementById('title').textContent = 'Trellis simulation: ' + (a.workload || '');
document.getElementById('about').textContent = Object.keys(a).map(function (k) {
  return k + ' = ' + a[k]; }).join(', ');
table(document.getElementById('summary'), ['metric', 'value'],
      Object.keys(m).map(function (k) { return [k, Array.isArray(m[k]) ? m[k].map(fmt).join(' .. ') : m[k]]; }));
var occupancyCharts = D.occupancy && D.occupancy.instants ? D.occupancy.instants.length : 0;
document.body.setAttribute('data-charts-expected', String(3 + occupancyCharts));

var g = D.gantt;
document.getElementById('gantt-note').innerHTML = g.shown_rectangles < g.total_rectangles
  ? '<span class="note">Downsampled: showing the ' + g.shown_jobs + ' jobs with the most node-seconds (' +
    g.shown_rectangles + ' of ' + g.total_rectangles + ' rectangles, ' + g.total_jobs + ' jobs).</span>'
  : g.total_jobs + ' jobs, one rectangle per run of consecutive nodes. Drag the sliders or scroll to zoom.';
var tmax = m.last_end_s, tmin = m.first_submit_s;
drawChart('gantt', {
  tooltip: {formatter: function (p) { var v = p.value;
    return 'job ' + v[4] + '<br>' + v[5] + ' nodes, start ' + fmt(v[0]) + ' s, end ' + fmt(v[1]) +
           ' s<br>wait ' + fmt(v[6]) + ' s<br>nodes ' + v[2] + '..' + (v[3] - 1); }},
  grid: {left: 70, right: 60, top: 20, bottom: 70},
  dataZoom: [{type: 'slider', xAxisIndex: 0, filterMode: 'weakFilter'},
             {type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter'},
             {type: 'slider', yAxisIndex: 0, filterMode: 'weakFilter', right: 10},
             {type: 'inside', yAxisIndex: 0, filterMode: 'weakFilter'}],
  xAxis: {type: 'value', name: 'time (s)', nameLocation: 'middle', nameGap: 25, min: tmin, max: tmax},
  yAxis: {type: 'value', name: 'node', min: 0, max: D.nodes, inverse: true,
          axisLabel: {hideOverlap: true}},
  series: [{type: 'custom', encode: {x: [0, 1], y: [2, 3]}, data: g.rects, progressive: 4000,
    renderItem: function (params, api) {
      var p0 = api.coord([api.value(0), api.value(2)]);
      var p1 = api.coord([api.value(1), api.value(3)]);
      var cs = params.coordSys;
      var shape = echarts.graphic.clipRectByRect(
        {x: p0[0], y: Math.min(p0[1], p1[1]), width: Math.max(p1[0] - p0[0], 0.5),
         height: Math.max(Math.abs(p1[1] - p0[1]), 0.5)},
        {x: cs.x, y: cs.y, width: cs.width, height: cs.height});
      return shape && {type: 'rect', shape: shape,
        style: {fill: palette[api.value(4) % palette.length], stroke: 'rgba(0,0,0,0.25)', lineWidth: 0.3}};
    }}]
});

var tl = D.timeline;
document.getElementById('timeline-note').innerHTML = tl.thinned
  ? '<span class="note">Downsampled: ' + tl.time.length + ' points, each the busiest instant of its stretch.</span>'
  : 'State after each scheduling instant.';
var timelineSeries = [
  {name: 'busy nodes', type: 'line', step: 'end', showSymbol: false, areaStyle: {opacity: 0.3},
   data: tl.time.map(function (t, i) { return [t, tl.busy[i]]; })},
  {name: 'queued jobs', type: 'line', step: 'end', showSymbol: false, yAxisIndex: 1,
   data: tl.time.map(function (t, i) { return [t, tl.queued[i]]; })}];
if (tl.largest_free_box.length && tl.largest_free_box[0] >= 0)
  timelineSeries.push({name: 'largest free box (nodes)', type: 'line', step: 'end', showSymbol: false,
    lineStyle: {width: 1}, data: tl.time.map(function (t, i) { return [t, tl.largest_free_box[i]]; })});
drawChart('timeline', {
  tooltip: {trigger: 'axis'},
  legend: {top: 0, data: timelineSeries.map(function (s) { return s.name; })},
  grid: {left: 70, right: 70, bottom: 70},
  dataZoom: [{type: 'slider'}, {type: 'inside'}],
  xAxis: {type: 'value', name: 'time (s)', nameLocation: 'middle', nameGap: 25, min: tmin, max: tmax},
  yAxis: [{type: 'value', name: 'nodes', max: D.nodes, axisLabel: {hideOverlap: true}},
          {type: 'value', name: 'queued jobs'}],
  series: timelineSeries
});

var sd = D.slowdown;
drawChart('slowdown', {
  tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}},
  legend: {data: sd.bins.map(function (b) { return 'bsld ' + b; })},
  xAxis: {type: 'category', name: 'job size (nodes)', nameLocation: 'middle', nameGap: 28, data: sd.classes},
  yAxis: {type: 'value', name: 'jobs'},
  series: sd.bins.map(function (b, i) {
    return {name: 'bsld ' + b, type: 'bar', stack: 'all', data: sd.counts[i]}; })
});

var occ = D.occupancy;
if (!occ || !occ.instants.length) {
  document.getElementById('occupancy-note').textContent = occ
    ? 'No placements recorded.' : 'Occupancy maps are drawn for mesh/torus machines only.';
} else {
  document.getElementById('occupancy-note').textContent = 'Nodes by job at ' + occ.instants.length +
    ' instants (x across, y down' + (occ.slices > 1 ? ', z slices side by side' : '') + ').';
  var xs = [], ys = [];
  for (var i = 0; i < occ.width; i++) xs.push(i);
  for (var j = 0; j < occ.height; j++) ys.push(j);
  occ.instants.forEach(function (inst, k) {
    var div = document.createElement('div');
    div.id = 'occupancy-' + k;
    div.className = 'small';
    document.getElementById('occupancy').appendChild(div);
    drawChart(div.id, {
      title: {text: 't = ' + fmt(inst.time) + ' s, ' + inst.busy + ' busy', textStyle: {fontSize: 12}},
      tooltip: {formatter: function (p) { return 'node (' + p.value[0] + ',' + p.value[1] + '): job ' + p.value[3]; }},
      grid: {left: 30, right: 10, top: 30, bottom: 20},
      xAxis: {type: 'category', data: xs, show: false},
      yAxis: {type: 'category', data: ys, inverse: true, show: false},
      visualMap: {show: false, min: 0, max: palette.length - 1, dimension: 2,
                  inRange: {color: palette}},
      series: [{type: 'heatmap', data: inst.cells}]
    });
  });
}
document.body.setAttribute('data-charts-rendered', String(rendered));
})();
)js";

constexpr std::string_view kCompareBody = R"html(
<h1 id="title">Trellis comparison</h1>
<p id="about"></p>
<table id="runs"></table>
<div class="grid">
<div id="c-wait" class="small"></div><div id="c-bsld" class="small"></div>
<div id="c-util" class="small"></div><div id="c-hops" class="small"></div>
</div>
)html";

constexpr std::string_view kCompareScript = R"js(
(function () {
var D = JSON.parse(document.getElementById('trellis-data').textContent);
document.getElementById('title').textContent = D.title;
document.getElementById('about').textContent = Object.keys(D.about).map(function (k) {
  return k + ' = ' + D.about[k]; }).join(', ');
var cols = ['jobs', 'rejected', 'mean_wait_s', 'mean_bounded_slowdown', 'utilization', 'steady_utilization',
  'loss_of_capacity', 'fragmented_time_fraction', 'mean_pairwise_hops', 'makespan_s',
  'allocator_call_us', 'wall_s'];
table(document.getElementById('runs'), ['run'].concat(cols), D.runs.map(function (r) {
  return [r.label].concat(cols.map(function (c) { return r.metrics[c]; })); }));
document.body.setAttribute('data-charts-expected', '4');
var labels = D.runs.map(function (r) { return r.label; });
function bars(id, title, key) {
  drawChart(id, {
    title: {text: title, textStyle: {fontSize: 13}},
    tooltip: {trigger: 'axis'},
    grid: {left: 60, right: 20, bottom: 90},
    xAxis: {type: 'category', data: labels, axisLabel: {rotate: 30, fontSize: 10}},
    yAxis: {type: 'value'},
    series: [{type: 'bar', data: D.runs.map(function (r, i) {
      return {value: r.metrics[key], itemStyle: {color: palette[i % palette.length]}}; })}]
  });
}
bars('c-wait', 'mean wait (s)', 'mean_wait_s');
bars('c-bsld', 'mean bounded slowdown', 'mean_bounded_slowdown');
bars('c-util', 'utilization', 'utilization');
bars('c-hops', 'mean pairwise hops', 'mean_pairwise_hops');
document.body.setAttribute('data-charts-rendered', String(rendered));
})();
)js";

std::string page(std::string_view title, std::string_view body, const nlohmann::json& data,
                 std::string_view script) {
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>";
  for (char c : title) html += c == '<' ? std::string("&lt;") : std::string(1, c);
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
