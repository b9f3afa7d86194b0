// The operator console: polls /console/stats every second, keeps two minutes of history and
// draws each chart on its canvas (no library). Rates are differences between two answers;
// latency percentiles come from the difference of the histogram buckets over a recent window.
"use strict";

const POLL_MS = 1000;
const HISTORY = 120; // points kept per chart (two minutes at one poll a second)
const COLORS = ["#1f6fd1", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#e377c2"];
const TOKEN_KEY = "appliance-console-token";

const state = { polls: 0, snapshots: [], charts: {}, errors: 0 };
window.applianceConsole = state; // read by scripts/console-test

// ---- numbers -------------------------------------------------------------------------------

/** The q quantile of per-bucket counts (last = overflow), linear inside the bucket. */
function quantile(bounds, counts, q) {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < bounds.length; i++) {
    const count = counts[i];
    if (count > 0 && below + count >= rank) {
      const lower = i === 0 ? 0 : bounds[i - 1];
      return lower + (bounds[i] - lower) * Math.min(1, Math.max(0, (rank - below) / count));
    }
    below += count;
  }
  return bounds[bounds.length - 1];
}

function diffCounts(now, before) {
  return now.map((count, i) => Math.max(0, count - (before ? before[i] : 0)));
}

/** Per-second rate of a counter between two snapshots (0 after a restart). */
function rate(now, before, pick) {
  if (!before) return null;
  const seconds = (now.unix_ms - before.unix_ms) / 1000;
  const a = pick(now);
  const b = pick(before);
  if (seconds <= 0 || a == null || b == null) return null;
  return Math.max(0, (a - b) / seconds);
}

/** The snapshot about `seconds` before the newest (or the oldest held). */
function snapshotBefore(seconds) {
  const newest = state.snapshots[state.snapshots.length - 1];
  for (let i = state.snapshots.length - 2; i >= 0; i--) {
    if (newest.unix_ms - state.snapshots[i].unix_ms >= seconds * 1000) return state.snapshots[i];
  }
  return state.snapshots.length > 1 ? state.snapshots[0] : null;
}

function niceCeiling(value) {
  if (!(value > 0)) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 2.5, 5, 10]) {
    if (step * power >= value) return step * power;
  }
  return 10 * power;
}

function formatNumber(value) {
  if (value == null) return "–";
  const abs = Math.abs(value);
  if (abs >= 1e9) return (value / 1e9).toFixed(1) + "G";
  if (abs >= 1e6) return (value / 1e6).toFixed(1) + "M";
  if (abs >= 1e5) return (value / 1e3).toFixed(0) + "k";
  if (abs >= 1e4) return (value / 1e3).toFixed(1).replace(/\.0$/, "") + "k";
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 1) return value.toFixed(1);
  return value.toFixed(2);
}

// ---- charts --------------------------------------------------------------------------------

/** A chart: its figure, canvas, series names and points ({label, values: {name: number}}). */
function chart(name) {
  if (!state.charts[name]) {
    const figure = document.querySelector(`figure[data-chart="${name}"]`);
    state.charts[name] = { figure, canvas: figure.querySelector("canvas"), series: [], points: [] };
  }
  return state.charts[name];
}

function addSeries(entry, names) {
  for (const name of names) if (!entry.series.includes(name)) entry.series.push(name);
}

/** Appends one point to a time chart and redraws it. */
function pushPoint(name, values) {
  const entry = chart(name);
  addSeries(entry, Object.keys(values));
  entry.points.push(values);
  if (entry.points.length > HISTORY) entry.points.shift();
  drawLines(entry);
}

/** Replaces a bar chart's groups ({label, values: {name: number}}) and redraws it. */
function setBars(name, groups) {
  const entry = chart(name);
  addSeries(entry, groups.flatMap((group) => Object.keys(group.values)));
  entry.points = groups;
  drawBars(entry);
}

function prepare(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const width = Math.max(200, canvas.clientWidth);
  const height = Math.max(120, canvas.clientHeight);
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.font = "11px system-ui, sans-serif";
  return { ctx, width, height, left: 48, right: width - 8, top: 8, bottom: height - 20 };
}

function drawAxes(area, max, xLabels) {
  const { ctx, left, right, top, bottom } = area;
  ctx.strokeStyle = "#d8dce2";
  ctx.fillStyle = "#5f6670";
  ctx.lineWidth = 1;
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (let i = 0; i <= 4; i++) {
    const y = bottom - ((bottom - top) * i) / 4;
    ctx.beginPath();
    ctx.moveTo(left, y + 0.5);
    ctx.lineTo(right, y + 0.5);
    ctx.stroke();
    ctx.fillText(formatNumber((max * i) / 4), left - 6, y);
  }
  ctx.textBaseline = "top";
  for (const [x, label] of xLabels) {
    // Labels at the edges stay inside the canvas.
    ctx.textAlign = x >= right - 1 ? "right" : x <= left + 1 ? "left" : "center";
    ctx.fillText(label, x, bottom + 5);
  }
}

/** Data values drawn (not null), recorded on the figure for the browser test. */
function record(entry, values) {
  const drawn = values.filter((v) => v != null && Number.isFinite(v));
  entry.figure.dataset.points = String(drawn.length);
  entry.figure.dataset.max = String(drawn.length ? Math.max(...drawn) : 0);
}

function drawLines(entry) {
  const area = prepare(entry.canvas);
  const all = entry.points.flatMap((p) => entry.series.map((s) => p[s]));
  const max = niceCeiling(Math.max(0, ...all.filter((v) => v != null)));
  const step = (area.right - area.left) / (HISTORY - 1);
  const xOf = (i) => area.right - (entry.points.length - 1 - i) * step;
  const xLabels = [[area.right, "now"], [area.right - 60 * step, "−60 s"], [area.left + 1, "−2 min"]];
  drawAxes(area, max, xLabels);
  const { ctx } = area;
  ctx.lineWidth = 2;
  ctx.lineJoin = "round";
  entry.series.forEach((name, index) => {
    ctx.strokeStyle = COLORS[index % COLORS.length];
    ctx.beginPath();
    let pen = false;
    entry.points.forEach((point, i) => {
      const value = point[name];
      if (value == null) {
        pen = false;
        return;
      }
      const y = area.bottom - ((area.bottom - area.top) * value) / max;
      if (pen) ctx.lineTo(xOf(i), y);
      else ctx.moveTo(xOf(i), y);
      pen = true;
    });
    ctx.stroke();
  });
  legend(entry, (name) => formatNumber(entry.points.length ? entry.points[entry.points.length - 1][name] : null));
  record(entry, all);
}

function drawBars(entry) {
  const area = prepare(entry.canvas);
  const all = entry.points.flatMap((g) => entry.series.map((s) => g.values[s]));
  const max = niceCeiling(Math.max(0, ...all.filter((v) => v != null)));
  const groupWidth = (area.right - area.left) / Math.max(1, entry.points.length);
  const barWidth = (groupWidth * 0.8) / Math.max(1, entry.series.length);
  const xLabels = entry.points.map((g, i) => [area.left + groupWidth * (i + 0.5), g.label]);
  drawAxes(area, max, xLabels);
  const { ctx } = area;
  entry.points.forEach((group, i) => {
    entry.series.forEach((name, s) => {
      const value = group.values[name];
      if (value == null) return;
      const height = ((area.bottom - area.top) * value) / max;
      ctx.fillStyle = COLORS[s % COLORS.length];
      const x = area.left + groupWidth * i + groupWidth * 0.1 + barWidth * s;
      ctx.fillRect(x, area.bottom - height, Math.max(1, barWidth - 2), Math.max(value > 0 ? 2 : 0, height));
    });
  });
  legend(entry, () => "");
  record(entry, all);
}

function legend(entry, latest) {
  const box = entry.figure.querySelector(".legend");
  box.replaceChildren(
    ...entry.series.map((name, index) => {
      const item = document.createElement("span");
      const swatch = document.createElement("i");
      swatch.className = `swatch c${index % COLORS.length}`;
      const value = latest(name);
      item.append(swatch, document.createTextNode(value ? `${name} ${value}` : name));
      return item;
    })
  );
}

// ---- sections ------------------------------------------------------------------------------

function show(section, running, extra) {
  const root = document.getElementById(section);
  root.classList.toggle("not-running", !running);
  root.querySelector(".off").classList.toggle("hidden", running);
  if (extra) extra(root);
}

function latencyWindow(pickLatency, seconds) {
  const newest = state.snapshots[state.snapshots.length - 1];
  const before = snapshotBefore(seconds);
  const now = pickLatency(newest);
  if (!now) return null;
  const then = before ? pickLatency(before) : null;
  const counts = diffCounts(now.counts, then ? then.counts : null);
  return { bounds: now.bounds_us, counts };
}

function percentiles(window) {
  if (!window) return { p50: null, p90: null, p99: null };
  return {
    p50: quantile(window.bounds, window.counts, 0.5),
    p90: quantile(window.bounds, window.counts, 0.9),
    p99: quantile(window.bounds, window.counts, 0.99),
  };
}

function drawStream(now, before) {
  show("stream", now.stream != null);
  if (!now.stream) return;
  const shreds = {};
  for (const source of now.stream.sources) {
    shreds[source.name] = rate(now, before, (s) => s.stream && (s.stream.sources.find((x) => x.name === source.name) || {}).packets);
  }
  pushPoint("shreds", shreds);
  const fec = {};
  for (const outcome of Object.keys(now.stream.fec_sets)) {
    fec[outcome] = rate(now, before, (s) => s.stream && s.stream.fec_sets[outcome]);
  }
  pushPoint("fec", fec);
  pushPoint("throughput", {
    "transactions/s": rate(now, before, (s) => s.stream && s.stream.transactions),
    "updates/s": rate(now, before, (s) => s.stream && s.stream.updates_published),
  });
  const stages = now.stream.latency.map((stage, index) => {
    const window = latencyWindow((s) => s.stream && s.stream.latency[index], 10);
    const p = percentiles(window);
    const label = stage.stage === "first_read_to_publish" ? "end to end" : stage.stage;
    return { label, values: { p50: p.p50, p90: p.p90, p99: p.p99 } };
  });
  setBars("latency", stages);
  const whole = now.stream.latency.findIndex((stage) => stage.stage === "first_read_to_publish");
  const recent = percentiles(latencyWindow((s) => s.stream && s.stream.latency[whole], 5));
  pushPoint("end_to_end", { p50: recent.p50, p99: recent.p99 });
  pushPoint("subscribers", {
    subscribers: now.stream.subscribers,
    "sent/s": rate(now, before, (s) => s.stream && s.stream.updates_sent),
    "dropped/s": rate(now, before, (s) => s.stream && s.stream.updates_dropped),
  });
}

function drawArchive(now, before) {
  show("archive", now.archive != null);
  if (!now.archive) return;
  pushPoint("archive_rate", {
    "requests/s": rate(now, before, (s) => s.archive && s.archive.http_requests),
    "calls/s": rate(now, before, (s) => s.archive && s.archive.calls),
  });
  const recent = percentiles(latencyWindow((s) => s.archive && s.archive.latency, 5));
  const ms = (us) => (us == null ? null : us / 1000);
  pushPoint("archive_latency", { p50: ms(recent.p50), p99: ms(recent.p99) });
}

function drawInsights(now) {
  const insights = now.insights;
  show("insights", insights != null, (root) => {
    const ready = insights != null && insights.state === "ready";
    root.querySelector(".filling").classList.toggle("hidden", !(insights && insights.state === "filling"));
    root.querySelector(".grid").classList.toggle("hidden", !ready);
    const caption = root.querySelector(".window");
    caption.classList.toggle("hidden", !ready);
    if (ready) {
      caption.textContent = `Slots ${insights.first_slot}–${insights.last_slot}, ${insights.tx_count} transactions, congestion ${insights.congestion_level}.`;
    }
  });
  if (!insights || insights.state !== "ready") return;
  const levels = insights.fee_levels;
  setBars(
    "fees",
    Object.keys(levels).map((level) => ({ label: level.replace("_", " "), values: { fee: levels[level] } }))
  );
  pushPoint("congestion", {
    score: insights.congestion_score,
    compute: insights.factors.compute_saturation,
    "write locks": insights.factors.write_lock_contention,
    drops: insights.factors.tx_drop_rate,
  });
}

// ---- polling -------------------------------------------------------------------------------

function setStatus(text, bad) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.classList.toggle("bad", Boolean(bad));
}

async function poll() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const headers = token ? { "x-token": token } : {};
  try {
    const response = await fetch("/console/stats", { headers, cache: "no-store" });
    if (response.status === 401) {
      document.getElementById("token-form").classList.remove("hidden");
      setStatus("this appliance needs an access token", true);
      return;
    }
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const now = await response.json();
    const before = state.snapshots[state.snapshots.length - 1];
    state.snapshots.push(now);
    if (state.snapshots.length > 12) state.snapshots.shift();
    drawStream(now, before);
    drawArchive(now, before);
    drawInsights(now);
    state.polls += 1;
    setStatus(`live · ${new Date(now.unix_ms).toLocaleTimeString()}`);
  } catch (error) {
    state.errors += 1;
    setStatus(`stats unavailable: ${error.message}`, true);
  }
}

function start() {
  document.getElementById("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById("token").value);
    document.getElementById("token-form").classList.add("hidden");
    poll();
  });
  poll();
  setInterval(poll, POLL_MS);
}

start();
