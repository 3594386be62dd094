// rths-ident live page: draws the state the server sends (a snapshot, then deltas) with
// uPlot (vendored). Units: the server sends SI; the page shows mm, kN (or N), ms.
// window.rthsLive holds what was received and the page's own measurements (update rate,
// loop-to-screen latency) for whoever inspects the page (the browser tests do).
"use strict";

const token = document.body.dataset.token;
const live = window.rthsLive = {
  info: null, status: null, series: {}, loop: { x: [], f: [], model: [] },
  frames: 0, snapshots: 0, bytes: 0, draws: 0, drawTimes: [], stepDrawTimes: [], latencies: [], oldestLatencies: [], latencyParts: [], connected: false, ended: false, stopSent: false,
};
const COLOR = { target: "#1f77b4", command: "#ff7f0e", measured: "#d62728", error: "#9467bd",
  loop: "#9e9e9e", model: "#1565c0", band: "rgba(31,119,180,0.18)", truth: "#000000", applied: "rgba(46,125,50,0.30)" };
const FLOOR = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"];
const FLOOR_LIGHT = ["#9ecae1", "#a1d99b", "#fc9272", "#bcbddc", "#d7b5a6", "#f7b6d2"];
const MM = 1e3;
let charts = {};
let forceScale = 1e-3, forceUnit = "kN";
let pendingStamp = null, pendingParts = null, pendingFirst = null, drawQueued = false, layoutKey = null, lastDraw = -Infinity;
// the page redraws at the browser's next frame after an update arrives (the server sends
// ≤ 15 a second, as soon as the loop has something new), never twice within MIN_DRAW_MS
const MIN_DRAW_MS = 45;
const $ = (id) => document.getElementById(id);
// the text or markup of an element, replaced only when it changed (a replaced node costs
// the browser a layout on every redraw)
const shownHtml = new WeakMap();
function setText(el, text) { if (el.textContent !== text) el.textContent = text; }
function setHtml(el, html) { if (shownHtml.get(el) !== html) { shownHtml.set(el, html); el.innerHTML = html; } }

// ---------------------------------------------------------------- helpers
function fmt(v, digits = 3) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1e5 || a < 1e-3) return v.toExponential(digits - 1);
  return v.toFixed(Math.max(0, digits - 1 - Math.floor(Math.log10(Math.max(a, 1e-12)))));
}
function everyOther(values) { const kept = []; for (let i = 0; i < values.length; i += 2) kept.push(values[i]); return kept; }
function scaled(values, factor) { return values.map((v) => (v === null ? null : v * factor)); }
function width(el) { return Math.max(200, el.clientWidth); }
// tick labels: plain numbers; below 1e-3 in magnitude, in exponent form (uPlot's own gave "0, -0" for 1e-15)
function ticks(u, splits) {
  const largest = Math.max(...splits.map((v) => Math.abs(v || 0)));
  if (largest > 0 && largest < 1e-3) return splits.map((v) => (v === 0 ? "0" : v.toExponential(1)));
  return splits.map((v) => (v === null || v === undefined ? "" : String(+v.toPrecision(6))));
}
// a y axis as wide as its longest tick label (6.5 px a character) and its title
function fitSize(u, values) {
  if (!values) return 48;
  return Math.max(48, 26 + 6.5 * Math.max(0, ...values.map((v) => String(v).length)));
}
function axis(label, extra = {}) { return Object.assign({ label, labelSize: 18, size: 48, font: "11px sans-serif", labelFont: "12px sans-serif", values: ticks }, extra); }
function extent(values) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (v !== null && v !== undefined) { if (v < lo) lo = v; if (v > hi) hi = v; }
  if (lo === Infinity) return [-1, 1];
  if (lo === hi) { const d = Math.abs(lo) * 0.1 || 1; return [lo - d, hi + d]; }
  const pad = 0.04 * (hi - lo);
  return [lo - pad, hi + pad];
}
// a path through the points in the order they come (an x–y loop: x is not sorted); a
// point within half a pixel of the last one drawn adds nothing to the picture and is left
// out (the loop retraces itself: most of its points fall on pixels already drawn, and
// every segment costs the browser's rasteriser)
function inOrder(u, sidx) {
  const xs = u.data[0], ys = u.data[sidx], path = new Path2D();
  let open = false, lastX = 0, lastY = 0, pending = false, pendX = 0, pendY = 0;
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i], x = xs[i];
    if (y === null || y === undefined || x === null || x === undefined) {
      if (pending) path.lineTo(pendX, pendY);
      open = pending = false; continue;
    }
    const px = u.valToPos(x, "x", true), py = u.valToPos(y, u.series[sidx].scale, true);
    if (!open) { path.moveTo(px, py); open = true; lastX = px; lastY = py; pending = false; continue; }
    if (Math.abs(px - lastX) < 0.5 && Math.abs(py - lastY) < 0.5) { pending = true; pendX = px; pendY = py; continue; }
    path.lineTo(px, py); lastX = px; lastY = py; pending = false;
  }
  if (pending) path.lineTo(pendX, pendY);  // the newest point is always drawn
  return { stroke: path, fill: null, clip: null, band: null, gaps: null, flags: 0 };
}
// whether the run's command x_c is a displacement [m] (a rig's is in its board's own units)
function hasCommand(info) { return info.command_is_displacement !== false; }
// a series drawn in the style of its role (rths_ident.figure_views.STYLES, sent in the run's info):
// the same drawing as the PNG figures
function styled(role, label, extra = {}) {
  const v = (live.info && live.info.views && live.info.views[role]) || { color: "#444", width: 1, dash: null };
  return Object.assign({ label, stroke: v.color, width: v.width }, v.dash ? { dash: v.dash } : {}, extra);
}
function timeChart(el, height, ylabel, series, extra = {}) {
  const opts = Object.assign({
    width: width(el), height, scales: { x: { time: false } },
    axes: [axis("time [s]"), axis(ylabel, { size: fitSize })], series: [{ label: "t [s]" }, ...series],
    legend: { live: false }, cursor: { show: true, points: { show: false } },
  }, extra);
  return new uPlot(opts, [[], ...series.map(() => [])], el);
}

// ---------------------------------------------------------------- layout
function build(info) {
  for (const c of Object.values(charts)) (Array.isArray(c) ? c : [c]).forEach((u) => u.destroy());
  charts = {};
  document.querySelectorAll(".panel.test").forEach((p) => { p.hidden = false; });
  $("test-name").textContent = info.test || "run";
  const bits = [info.record, info.updating && `updating ${info.updating}`, info.compensation, info.transition,
    `${info.engine} engine`, info.paced ? "paced (real time)" : null, live.status && live.status.replay ? "replay" : null];
  $("subtitle").textContent = bits.filter(Boolean).join(" · ");
  const limits = info.limits || {};
  forceScale = (limits.force_N || 1e4) >= 1e3 ? 1e-3 : 1; forceUnit = forceScale === 1 ? "N" : "kN";
  const banner = [];
  if (info.engine === "fused") banner.push("Fused engine: the whole record runs in one compiled call — the page fills when the call completes. STOP applies to step-wise runs (virtual step-wise, --realtime, rigs, OpenSees NS).");
  if (live.status && live.status.replay) banner.push("Replay of a test record (nothing to stop).");
  $("banner").hidden = banner.length === 0; $("banner").textContent = banner.join(" ");

  // a rig's command is in its board's units (no x_c [m]): no trace, and no legend entry
  charts.tracking = timeChart($("c-tracking"), 210, "displacement [mm]", [styled("measured", "measured x_m")].concat(
    hasCommand(info) ? [styled("command", "command x_c")] : [], [styled("target", "target x_t")]));
  charts.error = timeChart($("c-error"), 210, "x_m − x_t [mm]", [styled("error", "x_m − x_t")]);
  charts.loop = new uPlot({
    width: width($("c-loop")), height: 210, scales: { x: { time: false, range: () => extent(scaled(live.loop.x, MM)) },
      y: { range: () => extent(scaled(live.loop.f.concat(live.loop.model), forceScale)) } },
    axes: [axis("measured displacement x_m [mm]"), axis(`force [${forceUnit}]`)],
    series: [{ label: "x_m [mm]" }, styled("measured", "measured", { paths: inOrder }),
      styled("model", "identified model along x_m", { paths: inOrder })],
    legend: { live: false }, cursor: { show: false },
  }, [[], [], []], $("c-loop"));

  const params = info.params || [];
  $("p-params").hidden = params.length === 0;
  const box = $("c-params"); box.innerHTML = ""; box.classList.toggle("two", params.length > 3);
  charts.params = params.map((p, index) => {
    const el = document.createElement("div"); box.appendChild(el);
    const relative = p.true !== null && p.true !== 0;
    const label = relative ? `${p.name}: θ̂/θ [–]` : `${p.name} [${p.unit || "SI"}]`;
    const h = params.length > 3 ? 92 : 112;
    return timeChart(el, h, label, [
      { label: `${p.name} estimate`, stroke: COLOR.model, width: 1.4 },
      { label: "−2σ", stroke: "rgba(31,119,180,0.35)", width: 0.5 },
      { label: "+2σ", stroke: "rgba(31,119,180,0.35)", width: 0.5 },
      { label: relative ? "true (1)" : "true", stroke: COLOR.truth, width: 1, dash: [4, 3], show: p.true !== null },
      { label: "update applied", scale: "applied", stroke: "rgba(46,125,50,0.0)", fill: COLOR.applied,
        paths: uPlot.paths.stepped({ align: 1 }), width: 0 }],
    { bands: [{ series: [3, 2], fill: COLOR.band }], legend: { show: index === 0, live: false },
      scales: { x: { time: false }, applied: { range: [0, 8] } },
      // short charts: ticks 18 px apart, so that θ̂/θ = 1 is labelled whatever the band spans
      axes: [axis("time [s]", { size: 30, labelSize: 14 }), axis(label, { size: 52, space: 18 })] });
  });

  const floors = info.response_names || [];
  $("p-response").hidden = $("p-response-error").hidden = floors.length === 0;
  const hasReference = !!info.reference;
  const resp = [];
  floors.forEach((name, i) => {
    resp.push(styled("hybrid", `${name} hybrid`, { stroke: FLOOR_LIGHT[i % FLOOR_LIGHT.length] }));
    if (hasReference) resp.push(styled("reference", `${name} reference`, { stroke: FLOOR[i % FLOOR.length] }));
  });
  charts.response = timeChart($("c-response"), 210, "floor displacement [mm]", resp);
  charts.responseError = timeChart($("c-response-error"), 210, "hybrid − reference [mm]",
    floors.map((name, i) => styled("error", name, { stroke: FLOOR[i % FLOOR.length] })));
  $("response-note").textContent = hasReference ? "reference: the test's own reference run (" + (info.scenario === "rc-frame" ? "ideal partitioned test" : "monolithic frame, true columns") + ")" : "no reference in this run";
  $("p-response-error").hidden = !hasReference || floors.length === 0;

  $("p-realtime").hidden = !info.paced;
  if (info.paced) {
    const deadline = 1e3 / info.slow_rate_hz;
    charts.realtime = timeChart($("c-realtime"), 190, "latency [ms]", [
      { label: "latency (window opening → next target)", stroke: "#37474f", width: 1 },
      { label: "NS share", stroke: "#ff7f0e", width: 1 },
      { label: "deadline Δt", stroke: "#c62828", width: 1, dash: [5, 3] }],
    { scales: { x: { time: false }, y: { range: () => {
      const r = live.status && live.status.realtime;
      return [0, Math.max(2.5 * deadline, r ? 1.3 * r.p99_ms : 0)]; } } } });
  }
}

function resize() {
  const pairs = [["tracking", "c-tracking"], ["error", "c-error"], ["loop", "c-loop"], ["response", "c-response"],
    ["responseError", "c-response-error"], ["realtime", "c-realtime"]];
  for (const [key, id] of pairs) if (charts[key]) charts[key].setSize({ width: width($(id)), height: charts[key].height });
  (charts.params || []).forEach((u) => u.setSize({ width: width(u.root.parentNode), height: u.height }));
}
window.addEventListener("resize", () => { resize(); });

// ---------------------------------------------------------------- frames
function onFrame(frame) {
  live.frames++;
  if (frame.type === "snapshot") {
    live.series = frame.series || {};
    live.loop = frame.loop || { x: [], f: [], model: [] };
    if (frame.info) live.info = frame.info;
  } else {
    // the server halved its history (every other point, the first kept): so does the page
    for (let h = 0; h < (frame.halve || 0); h++) for (const name of Object.keys(live.series)) live.series[name] = everyOther(live.series[name]);
    for (let h = 0; h < (frame.loop_halve || 0); h++) for (const key of ["x", "f", "model"]) live.loop[key] = everyOther(live.loop[key]);
    for (const [name, values] of Object.entries(frame.series || {})) {
      if (!live.series[name]) live.series[name] = [];
      const target = live.series[name];
      for (const v of values) target.push(v);
    }
    const l = frame.loop || {};
    for (const key of ["x", "f", "model"]) for (const v of l[key] || []) live.loop[key].push(v);
    if (frame.model) live.loop.model = frame.model;
  }
  const previous = live.status;
  live.status = frame.status;
  const key = live.info ? JSON.stringify([live.info.test, live.info.engine, (live.info.params || []).length, (live.info.response_names || []).length, live.info.paced, frame.status.replay]) : null;
  if (live.info && key !== layoutKey) { layoutKey = key; build(live.info); }
  const stamp = frame.status && frame.status.t_loop;
  if (stamp && (!previous || previous.t_loop !== stamp)) {
    pendingStamp = stamp;
    pendingParts = [stamp, frame.server ? frame.server.drained : null, frame.server ? frame.server.sent : null,
      frame.received || null, frame.parsed || null];
    // the oldest step not yet on the screen: every step's latency is at most its
    if (pendingFirst === null && frame.server && frame.server.first_step) pendingFirst = frame.server.first_step;
  }
  if (!drawQueued) {  // at most one redraw per MIN_DRAW_MS: the browser's share of the machine stays small
    drawQueued = true;
    const wait = lastDraw + MIN_DRAW_MS - performance.now();
    if (wait <= 0) requestAnimationFrame(draw); else setTimeout(() => requestAnimationFrame(draw), wait);
  }
}

// only the panels on the screen are redrawn (the others when they scroll into view): the
// browser's share of the machine, which it shares with the test, stays small
const onScreen = new Set();
const watcher = new IntersectionObserver((entries) => {
  for (const e of entries) { if (e.isIntersecting) onScreen.add(e.target.id); else onScreen.delete(e.target.id); }
  if (!drawQueued) { drawQueued = true; requestAnimationFrame(draw); }
});
document.querySelectorAll(".panel").forEach((p) => watcher.observe(p));
const shown = (id) => onScreen.has(id);

function draw() {
  drawQueued = false;
  const drawStart = Date.now() / 1e3;
  lastDraw = performance.now();
  const s = live.series, info = live.info, st = live.status || {};
  if (info && s.t) {
    const t = s.t;
    if (shown("p-tracking")) charts.tracking.setData([t, scaled(s.measured, MM)].concat(
      hasCommand(info) ? [scaled(s.command, MM)] : [], [scaled(s.target, MM)]));
    if (shown("p-error")) charts.error.setData([t, scaled(s.error, MM)]);
    const lx = scaled(live.loop.x, MM);
    if (shown("p-loop")) charts.loop.setData([lx, scaled(live.loop.f, forceScale), scaled(live.loop.model, forceScale)]);
    if (shown("p-params")) (info.params || []).forEach((p, i) => {
      const k = p.true !== null && p.true !== 0 ? 1 / p.true : 1;
      const truth = t.map(() => (p.true === null ? null : p.true * k));
      charts.params[i].setData([t, scaled(s[`est:${p.name}`] || [], k), scaled(s[`lo:${p.name}`] || [], k),
        scaled(s[`hi:${p.name}`] || [], k), truth, s.applied || []]);
    });
    const floors = info.response_names || [];
    if (floors.length && (shown("p-response") || shown("p-response-error"))) {
      const resp = [t], diff = [t];
      floors.forEach((_, i) => {
        const h = s[`ns:${i}`] || [], r = s[`ref:${i}`] || [];
        resp.push(scaled(h, MM));
        if (info.reference) {
          resp.push(scaled(r, MM));
          diff.push(h.map((v, j) => (v === null || r[j] === null || r[j] === undefined ? null : (v - r[j]) * MM)));
        }
      });
      charts.response.setData(resp);
      if (info.reference) charts.responseError.setData(diff);
    }
    if (charts.realtime && s.latency_ms && shown("p-realtime")) {
      const dl = (st.realtime && st.realtime.slow_step_ms) || 1e3 / info.slow_rate_hz;
      charts.realtime.setData([t, s.latency_ms, s.ns_ms, t.map(() => dl)]);
    }
  }
  if (info && info.engine === "served" && s.t) {  // a served session shows what its side has
    const has = (v) => !!v && v.some((x) => x !== null);
    $("p-error").hidden = !has(s.error);
    $("p-loop").hidden = live.loop.x.length === 0;
    $("p-limits").hidden = !st.limits;
  }
  status(st);
  live.draws++;
  live.drawTimes.push(performance.now());
  const stamp = pendingStamp, parts = pendingParts, first = pendingFirst;
  pendingStamp = pendingParts = pendingFirst = null;
  // the next animation frame comes after this one was painted: loop → screen latency
  if (stamp && st.state === "running") {
    live.stepDrawTimes.push(performance.now());  // a redraw that showed new slow steps
    const drawEnd = Date.now() / 1e3;
    let drawn = null;  // uPlot draws its canvases in microtasks queued by setData: after them
    queueMicrotask(() => { drawn = Date.now() / 1e3; });
    requestAnimationFrame(() => { const painted = Date.now() / 1e3; live.latencies.push(painted - stamp);
      if (first) live.oldestLatencies.push(painted - first);
      live.latencyParts.push(parts.concat([drawStart, drawEnd, drawn, painted])); });
  }
}

function status(st) {
  const info = live.info || {};
  if (!live.info) document.querySelectorAll(".panel.test").forEach((p) => { p.hidden = true; });
  if (st.step !== null && st.step !== undefined) setText($("kpi-step"), st.total ? `${st.step + 1} / ${st.total}` : `${st.step + 1}`);
  setText($("kpi-time"), fmt(st.t, 4));
  setText($("kpi-j2"), fmt(st.J2_percent, 3));
  setText($("kpi-tau"), fmt(st.tau_ms, 3) + (st.tau_window_s ? ` (last ${fmt(st.tau_window_s, 2)} s)` : ""));
  setText($("kpi-updates"), st.updates_applied === undefined ? "–" : String(st.updates_applied));
  const badge = $("state");
  let text = st.state || "starting", cls = st.state === "running" ? "running" : "";
  if (st.state === "ended") { text = st.how === "complete" ? "complete" : st.how; cls = st.how === "complete" ? "ended" : "stopped"; }
  if (!live.connected) { text += live.ended || st.state === "ended" ? " · server closed" : " · disconnected"; cls = cls || "offline"; }
  setText(badge, text); if (badge.className !== "badge " + cls) badge.className = "badge " + cls;
  const stop = $("stop");
  stop.disabled = !st.stop_available || st.state === "ended" || info.engine === "fused" || !live.connected || live.stopSent;
  if (live.stopSent) stop.textContent = "STOP sent";
  // the hook's guards
  const u = st.update;
  if (u) {
    setText($("guards"), u.applied ? `hook: estimate applied this step (${st.updates_applied} updates so far)`
      : `hook: held back — ${u.held_back_by.join("; ") || "(no reason known)"}`);
  } else if ((info.params || []).length) setText($("guards"), "");
  // the identified model's loop
  setText($("loop-note"), st.model_error ? `identified model: ${st.model_error}` :
    (info.paced && st.state !== "ended" && info.params && info.params.length ? "identified model: drawn at the end of a paced run (its computation would share the loop's interpreter)" :
    st.model_theta ? "identified model: θ̂ of " + (st.state === "ended" ? "the end of the run" : "a moment ago (recomputed every 3 s)") + ", simulated along the measured displacement; f_model − f_m: rms " + fmt(st.model_rms_error_percent) + " % of rms f_m" :
      (info.params && info.params.length ? "" : "no identified model in this run")));
  limits(st.limits || {});
  realtime(st.realtime);
  study(st.studies);
  log(st);
}

const LIMIT_ROWS = [["stroke_m", "stroke |x_m|", "mm", 1e3], ["command_m", "command |x_c|", "mm", 1e3],
  ["velocity_m_s", "velocity |Δx_m/Δt|", "mm/s", 1e3], ["force_N", "force |f_m|", "kN", 1e-3],
  ["tracking_error_m", "tracking error |x_m − x_t|", "mm", 1e3]];
function limits(values) {
  const body = document.querySelector("#limits tbody");
  // a quantity the run does not have (a rig's command is in the board's units) has no row
  const shown = LIMIT_ROWS.filter(([key]) => values[key] && values[key].peak !== null);
  const layout = shown.map(([key]) => key).join(" ");
  if (body.dataset.rows !== layout) {  // the rows once; then only the cells whose text changed
    body.dataset.rows = layout;
    body.innerHTML = shown.map(([key, name, unit]) =>
      `<tr data-key="${key}"><td>${name} [${unit}]</td><td></td><td></td><td></td><td></td></tr>`).join("");
  }
  shown.forEach(([key, , , k], i) => {
    const v = values[key], ratio = v.limit ? v.peak / v.limit : null, cells = body.rows[i].cells;
    const cls = ratio === null ? "none" : ratio >= 1 ? "over" : ratio >= 0.8 ? "warn" : "ok";
    setText(cells[1], fmt(v.now * k));
    setText(cells[2], fmt(v.peak * k));
    setText(cells[3], v.limit ? fmt(v.limit * k) : "–");
    setText(cells[4], ratio === null ? "no limit set" : `${(100 * ratio).toFixed(1)} %`);
    if (cells[4].className !== cls) cells[4].className = cls;
  });
}
function realtime(r) {
  if (!r) return;
  setText($("realtime-note"), `p50 ${fmt(r.p50_ms)} ms · p99 ${fmt(r.p99_ms)} ms · max ${fmt(r.max_ms)} ms (Δt = ${fmt(r.slow_step_ms)} ms) · missed deadlines ${r.missed_deadlines} · NS share ${fmt(r.ns_share_percent)} %`);
}
function study(studies) {
  if (!studies) return;
  $("p-study").hidden = false;
  if (!live.info) $("test-name").textContent = "study: " + Object.keys(studies).join(", ");
  setHtml($("study"), Object.entries(studies).map(([name, s]) => {
    const head = `<div><b>${escapeHtml(name)}</b>: ${s.done === undefined ? "–" : s.done} / ${s.total === undefined ? "–" : s.total} runs · ${s.runs_per_minute === null || s.runs_per_minute === undefined ? "–" : fmt(s.runs_per_minute)} runs per minute</div>`;
    const rows = Object.entries(s.J || {}).map(([j, d]) => `<tr><td>${j} [${d.unit}]</td><td>${d.n}</td><td>${fmt(d.min)}</td><td>${fmt(d.p50)}</td><td>${fmt(d.max)}</td></tr>`);
    const table = rows.length ? `<table><thead><tr><th>index (mean over components)</th><th>runs</th><th>min</th><th>median</th><th>max</th></tr></thead><tbody>${rows.join("")}</tbody></table>` : "";
    return head + table;
  }).join(""));
  const first = Object.values(studies).find((s) => s.histogram && s.histogram.values.length);
  if (first) histogram(first.histogram);
}
function histogram(h) {
  const values = h.values.filter((v) => v !== null);
  const [lo, hi] = extent(values), bins = Math.max(5, Math.min(30, Math.ceil(Math.sqrt(values.length)) + 2));
  const binWidth = (hi - lo) / bins, centres = [], counts = new Array(bins).fill(0);
  for (let i = 0; i < bins; i++) centres.push(lo + (i + 0.5) * binWidth);
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / binWidth))]++;
  const el = $("c-study");
  if (!charts.study) {
    charts.study = new uPlot({ width: width(el), height: 170,
      // half a bin beyond the first and last centres: the end bars are drawn whole
      scales: { x: { time: false, range: (u, lo, hi) => { const c = u.data[0], w = c.length > 1 ? c[1] - c[0] : 1; return [lo - w / 2, hi + w / 2]; } },
        y: { range: (u, lo, hi) => [0, Math.max(1, hi) * 1.1] } },
      axes: [axis(`${h.name} [${h.unit}] (mean over components)`), axis("runs")],
      series: [{ label: h.name }, { label: "runs", stroke: "#37474f", fill: "rgba(55,71,79,0.35)", paths: uPlot.paths.bars({ size: [0.9, 60] }), points: { show: false } }],
      legend: { show: false }, cursor: { show: false } }, [centres, counts], el);
  } else charts.study.setData([centres, counts]);
}
function log(st) {
  const items = (st.phases || []).map(([p, s]) => `<li>${p} … ${s.toFixed(2)} s</li>`);
  for (const n of st.notes || []) items.push(`<li>${escapeHtml(n)}</li>`);
  if (st.stop_requested) items.push(`<li class="stop">STOP: ${escapeHtml(st.stop_requested.reason)}</li>`);
  if (st.state === "ended") items.push(`<li class="${st.how === "complete" ? "" : "stop"}">run ${escapeHtml(st.how)}${st.reason ? ": " + escapeHtml(st.reason) : ""}</li>`);
  if (st.dropped_steps) items.push(`<li>${st.dropped_steps} slow steps not shown (the page fell behind; the record has them)</li>`);
  if (st.page_error) items.push(`<li class="stop">page: ${escapeHtml(st.page_error)}</li>`);
  setHtml($("log"), items.join(""));
}
function escapeHtml(text) { return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]); }

// ---------------------------------------------------------------- connection, STOP
function connect() {
  const ws = new WebSocket(`ws://${location.host}/ws?token=${encodeURIComponent(token)}`);
  live.ws = ws;
  ws.onopen = () => { live.connected = true; };
  ws.onmessage = (e) => { const received = Date.now() / 1e3; const frame = JSON.parse(e.data);
    live.bytes += e.data.length; if (frame.type === "snapshot") live.snapshots++;
    frame.received = received; frame.parsed = Date.now() / 1e3; onFrame(frame); };
  ws.onclose = () => {
    live.connected = false;
    if (live.status && live.status.state === "ended") live.ended = true;
    status(live.status || {});
    if (!live.ended) setTimeout(connect, 1000);
  };
}
$("stop").addEventListener("click", () => {
  if (!live.ws || live.ws.readyState !== WebSocket.OPEN) return;
  live.ws.send(JSON.stringify({ type: "stop", token }));
  live.stopSent = true;
  status(live.status || {});
});
connect();
