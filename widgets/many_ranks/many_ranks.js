// Many ranks as the page draws it: every drawn rank's backward and the link, one
// lane each, with each bucket's events as markers of distinct shapes, revealed up
// to the playhead; the readouts; a sweep over bucket sizes; and, when ranks
// disagree on which collectives run, each rank's sequence instead of a timeline.
//
// Everything drawn comes from the server's state: the browser only places it.
// Before the playhead reaches them, bars are drawn faint (the step's shape) and
// event markers not at all; the key shows each mark exactly as it is drawn.

import { h, s, show, uid } from "../common/js/dom.js";
import { chartFrame, hatchDefs, marker, patternId, playheadLine, polyline, swatch } from "../common/js/chart.js";
import { mountWidget } from "../common/js/frame.js";
import { fmt, revealPoints, revealSpans } from "../common/js/rules.js";
import { dataTable } from "../common/js/table.js";
import { linear } from "../common/js/ticks.js";
import { CATEGORY, COLORS, FONT } from "../common/js/theme.js";

const MS = { digits: 2, unit: "ms" };
const MB = { digits: 1, unit: "MB" };
const FAINT = 0.2; // the opacity of a bar not reached yet
const IDLE_HATCH = COLORS.muted;
const OPTIMIZER = "#bdbdbd";
const OPTIMIZER_EDGE = "#8c959f";
const TEXT_ON = { [COLORS.blue]: "#ffffff", [COLORS.vermillion]: "#ffffff", [COLORS.green]: "#ffffff" };

/** Each event's marker: shape, size, where it sits in its lane, and its key text. */
const EVENTS = {
  gradient: { shape: "circle", size: 8, at: "above", label: "Gradient ready" },
  ready: { shape: "triangle", size: 9, at: "below", label: "Bucket ready on a rank" },
  launch: { shape: "inverted-triangle", size: 10, at: "on", label: "Launch (the host enqueues it)" },
  start: { shape: "diamond", size: 11, at: "above", label: "Start: all launched, link free" },
  end: { shape: "square", size: 9, at: "below", label: "Completion" },
  optimizer: { shape: "star", size: 12, at: "on", label: "Optimizer starts" },
};
const RING = { size: 15, width: 1.75, label: "Ring: launched last, so defines readiness" };
const MARKER_EDGE = { gradient: COLORS.ink, ready: COLORS.ink, launch: "#ffffff", start: COLORS.ink, end: COLORS.ink, optimizer: COLORS.ink };
const MARKER_EDGE_WIDTH = { gradient: 0.75, ready: 1, launch: 1.5, start: 1, end: 1, optimizer: 1 };

const SETTINGS = {
  scenario: ["scenario", "drawn_ranks", "slowdown_pct", "delay_ms", "seed"],
  buckets: ["layers_per_bucket", "enqueue_ms", "contention"],
  hardware: ["n_layers", "backward_ms", "grad_mb", "bandwidth", "latency_ms", "ranks"],
  rest: ["forward_ms", "optimizer_ms"],
};

const STYLE = `
.rk-now { max-width: 300px; }
.ol-readouts.rk-readouts { grid-template-columns: repeat(auto-fit, minmax(210px, 1fr)); }
@container (max-width: 520px) {
  .ol-readouts.rk-readouts { grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); }
  /* A long key in two columns, so Reset, Play and Step stay near the chart. */
  .ol-figure .ol-key { display: grid; grid-template-columns: 1fr 1fr; gap: 2px 8px; font-size: 13px; line-height: 1.3; }
  .ol-figure .ol-key li { align-items: flex-start; }
  .ol-figure .ol-key li svg { flex: none; margin-top: 1px; }
}
.rk-scenario { margin: 0; font-size: 14px; color: #57606a; }
.rk-scenario strong { display: block; color: #1f2328; font-size: 15px; }
.rk-seq { display: flex; flex-direction: column; gap: 8px; }
.rk-seq p { margin: 0; }
.rk-seq table { border-collapse: collapse; font-size: 14px; }
.rk-seq th, .rk-seq td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
.rk-seq thead th { background: #f6f8fa; }
.rk-seq tr.rk-mismatch th, .rk-seq tr.rk-mismatch td { border-top: 3px solid #a40e26; background: #fff8c5; }
.rk-seq .rk-missing { font-weight: 600; color: #a40e26; }
.rk-seq caption { text-align: left; font-size: 14px; color: #57606a; padding: 4px 0; }
.rk-scroll { overflow-x: auto; max-width: 100%; }
/* A folded table takes no room (its many columns scroll inside it once opened). */
.ol-data:not([open]) .ol-table-scroll { display: none; }
`;

const colour = (bucket) => CATEGORY[bucket % CATEGORY.length];

export function render({ model, el }) {
  const readouts = {};
  const ui = {};
  let makeReadout = null;
  let timeline = null; // the drawn step, kept while only the playhead moves
  let sweepDrawn = null;
  let sequencesDrawn = null;

  el.append(h("style", {}, STYLE));
  mountWidget({ model, el }, {
    name: "ranks",
    time: MS,
    chartLabel: "One training step on every drawn rank and the link",

    layout(p) {
      const f = p.fields;
      makeReadout = p.readout;
      ui.elapsed = p.readout("Elapsed time");
      ui.readoutGrid = h("div", { class: "ol-readouts rk-readouts" });
      ui.scenario = h("p", { class: "rk-scenario", role: "status" });
      ui.sequencesTitle = uid("sequences");
      ui.sequences = h("section", { class: "rk-seq ol-section", role: "region", "aria-labelledby": ui.sequencesTitle, hidden: true });
      ui.sweepHost = h("div", { class: "ol-chart", role: "img", "aria-label": "Step time and overlap by bucket size" });
      ui.sweepKey = h("ul", { class: "ol-key", "aria-label": "Key of the sweep" });
      ui.sweepTable = dataTable("The sweep's data as a table");
      ui.sweep = h("div", { class: "ol-section" },
        h("figure", { class: "ol-figure" }, ui.sweepHost, ui.sweepKey), ui.sweepTable.el);
      const pick = (names) => names.map((n) => f[n].el);
      return {
        main: [h("div", { class: "ol-readouts rk-now" }, ui.elapsed.el)],
        after: [ui.readoutGrid, ui.sequences, ui.sweep],
        controls: [
          p.section("Scenario", f.scenario.el, ui.scenario, ...pick(SETTINGS.scenario.slice(1))),
          p.section("Buckets and events", ...pick(SETTINGS.buckets)),
          p.section("Hardware", ...pick(SETTINGS.hardware)),
          p.section("Rest of the step", ...pick(SETTINGS.rest)),
        ],
      };
    },

    update(state) {
      const sc = state.scenario;
      // A live region: rewritten only when what it says changes.
      if (ui.scenario.dataset.shown !== sc.title + sc.description) {
        ui.scenario.dataset.shown = sc.title + sc.description;
        ui.scenario.replaceChildren(h("strong", {}, sc.title), sc.description);
      }
      // The readouts of this result, in the server's order; the others are hidden.
      const shown = new Set();
      for (const r of state.readouts) {
        if (!readouts[r.key]) {
          readouts[r.key] = makeReadout(r.label);
          ui.readoutGrid.append(readouts[r.key].el);
        }
        readouts[r.key].set(r.text, r.note);
        shown.add(r.key);
      }
      for (const [key, r] of Object.entries(readouts)) show(r.el, shown.has(key));
      show(ui.sequences, !state.timed);
      show(ui.sweep, state.timed);
      if (!state.timed) drawSequenceTable(ui.sequences, ui.sequencesTitle, state);
      if (state.timed) ui.sweepTable.update(sweepTable(state.sweep));
    },

    draw({ state, t, width }) {
      ui.elapsed.set(fmt(t, MS));
      if (!state.timed) {
        if (!sequencesDrawn || sequencesDrawn.state !== state || sequencesDrawn.width !== width) {
          sequencesDrawn = { state, width, svg: sequencesChart(state, width) };
        }
        return sequencesDrawn.svg;
      }
      if (!sweepDrawn || sweepDrawn.state !== state || sweepDrawn.width !== width) {
        sweepDrawn = { state, width };
        ui.sweepHost.replaceChildren(sweepChart(state, width));
        ui.sweepKey.replaceChildren(...sweepKey().map((e) => h("li", {}, swatch(e), h("span", {}, e.label))));
      }
      if (!timeline || timeline.state !== state || timeline.width !== width) {
        timeline = stepChart(state, width);
      }
      timeline.reveal(t);
      return timeline.svg;
    },

    keyEntries(state) {
      return state.timed ? stepKey(state) : sequenceKey(state);
    },

    csvReadouts({ state, t }) {
      return [
        ["Elapsed time", fmt(t, MS)],
        ...state.readouts.map((r) => [r.label, r.text]),
      ];
    },
  });
}

// --- the step: lanes, bars, events ----------------------------------------------------

/** Lines of at most `max` characters, broken at spaces. */
function wrap(text, max) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && (line + " " + word).length > max) {
      lines.push(line);
      line = word;
    } else {
      line = line ? line + " " + word : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** A title over the plot, wrapped to the chart's width: `{node, height}`. */
function title(text, left, width) {
  const lines = wrap(text, Math.max(20, Math.floor((width - left - 10) / 7.6)));
  const node = s("text", { x: left, y: 18, "font-size": 14, fill: COLORS.ink, "font-weight": 600 },
    ...lines.map((line, i) => s("tspan", { x: left, dy: i === 0 ? 0 : 17 }, line)));
  return { node, height: 12 + 17 * lines.length };
}

function laneHeight(width) {
  return width < 500 ? 46 : 54;
}

/** Every bar and marker of the step, placed once; `reveal(t)` draws what the playhead reached. */
function stepChart(state, width) {
  const tl = state.timeline;
  const n = tl.n_ranks;
  const lanes = [...Array.from({ length: n }, (_, r) => `Rank ${r}`), "Link"];
  const lane = laneHeight(width);
  const left = Math.min(170, 16 + 6 * 6.6);
  const head = title(`One step on every drawn rank (${state.scenario.title})`, left, width);
  const height = head.height + lane * lanes.length + 48;
  const frame = chartFrame({
    width, height,
    x: { domain: [0, state.horizon], label: "Time from the start of backward (ms)" },
    y: { lanes, label: "" },
    margin: { top: head.height + 6, left },
  });
  frame.svg.append(head.node);
  const idleId = patternId("idle");
  frame.svg.append(hatchDefs(idleId, IDLE_HATCH));
  const mid = (i) => frame.band(i).mid;
  const half = lane * 0.2;
  const offset = { above: -lane * 0.34, on: 0, below: lane * 0.34 };

  // Bars: each rank's layers, idle wait and optimizer; each transfer on the link.
  const bars = [];
  for (let r = 0; r < n; r++) {
    tl.layers.forEach((layer, i) => {
      bars.push({ lane: r, x0: tl.layer_start[r][i], x1: tl.layer_end[r][i], fill: colour(tl.layer_bucket[i]), edge: "#ffffff" });
    });
    if (tl.optimizer_start - tl.backward_end[r] > 1e-9 * Math.max(1, tl.optimizer_start)) {
      bars.push({ lane: r, x0: tl.backward_end[r], x1: tl.optimizer_start, fill: `url(#${idleId})`, edge: IDLE_HATCH, ghost: IDLE_HATCH });
    }
    bars.push({ lane: r, x0: tl.optimizer_start, x1: tl.optimizer_end, fill: OPTIMIZER, edge: OPTIMIZER_EDGE });
  }
  for (let b = 0; b < tl.n_buckets; b++) {
    bars.push({ lane: n, x0: tl.bucket_start[b], x1: tl.bucket_end[b], fill: colour(b), edge: "#ffffff", bucket: b });
  }

  // Markers, in the order they happen.
  const marks = [];
  const add = (event, x, laneIndex, bucket) => marks.push({ event, x, lane: laneIndex, color: bucket === null ? COLORS.green : colour(bucket) });
  for (let r = 0; r < n; r++) {
    tl.layers.forEach((_, i) => add("gradient", tl.layer_end[r][i], r, tl.layer_bucket[i]));
    for (let b = 0; b < tl.n_buckets; b++) {
      add("ready", tl.bucket_ready[r][b], r, b);
      if (tl.defines[r][b]) marks.push({ event: "defines", x: tl.bucket_ready[r][b], lane: r });
      add("launch", tl.bucket_launch[r][b], r, b);
    }
    add("optimizer", tl.optimizer_start, r, null);
  }
  for (let b = 0; b < tl.n_buckets; b++) {
    add("start", tl.bucket_start[b], n, b);
    add("end", tl.bucket_end[b], n, b);
  }
  marks.sort((a, b) => a.x - b.x);

  const rect = (bar, x1, faint) => {
    const x = frame.x(bar.x0);
    return s("rect", {
      x, y: mid(bar.lane) - half, width: Math.max(0.5, frame.x(x1) - x), height: 2 * half,
      fill: bar.fill, stroke: faint ? (bar.ghost || bar.fill) : bar.edge, "stroke-width": faint ? 1.5 : 1,
      "fill-opacity": faint ? FAINT : null, "stroke-opacity": faint ? FAINT : null,
    });
  };
  // The faint step, then the slowest rank's backward end.
  const ghosts = s("g", { "data-layer": "not-reached" }, bars.map((bar) => rect(bar, bar.x1, true)));
  const backwardEnd = frame.x(tl.last_backward_end);
  const lines = s("g", {},
    s("line", { x1: backwardEnd, x2: backwardEnd, y1: frame.top - 4, y2: frame.bottom, stroke: COLORS.ink, "stroke-width": 3, "stroke-dasharray": "6 4", "data-mark": "backward-end" }));
  const live = s("g", { "data-layer": "reached" });
  frame.plot.append(ghosts, lines, live);
  let head2 = playheadLine(frame, 0);
  frame.svg.append(head2);

  const starts = bars.map((b) => b.x0);
  const ends = bars.map((b) => b.x1);
  const xs = marks.map((m) => m.x);
  return {
    state, width, svg: frame.svg,
    reveal(t) {
      const { keep, end } = revealSpans(starts, ends, t);
      const drawn = keep.map((i, k) => rect(bars[i], end[k], false));
      for (let k = 0; k < keep.length; k++) {
        const bar = bars[keep[k]];
        // A transfer's bucket number, once the playhead has passed the whole bar.
        if (bar.bucket !== undefined && end[k] >= bar.x1) {
          const x0 = frame.x(bar.x0), x1 = frame.x(bar.x1);
          if (x1 - x0 >= 14) {
            drawn.push(s("text", {
              x: (x0 + x1) / 2, y: mid(bar.lane) + 4, "text-anchor": "middle", "font-size": 11, "font-weight": 600,
              fill: TEXT_ON[bar.fill] || COLORS.ink,
            }, String(bar.bucket)));
          }
        }
      }
      for (const i of revealPoints(xs, t)) {
        const m = marks[i];
        if (m.event === "defines") {
          drawn.push(withEvent(marker("circle", frame.x(m.x), mid(m.lane) + offset.below, RING.size, "none", COLORS.ink, RING.width), "defines"));
          continue;
        }
        const e = EVENTS[m.event];
        drawn.push(withEvent(
          marker(e.shape, frame.x(m.x), mid(m.lane) + offset[e.at], e.size, m.color, MARKER_EDGE[m.event], MARKER_EDGE_WIDTH[m.event]),
          m.event,
        ));
      }
      live.replaceChildren(...drawn);
      const next = playheadLine(frame, t);
      head2.replaceWith(next);
      head2 = next;
    },
  };
}

function withEvent(node, event) {
  node.setAttribute("data-event", event);
  return node;
}

function bucketEntries(state) {
  const nb = state.buckets.layers.length;
  const entries = [];
  for (let c = 0; c < Math.min(nb, CATEGORY.length); c++) {
    const same = [];
    for (let b = c; b < nb; b += CATEGORY.length) same.push(b);
    const label = same.length === 1
      ? `Bucket ${c}: layer${state.buckets.count[c] > 1 ? "s" : ""} ${state.buckets.layers[c].replace(/–/g, "–\u2060")}`
      : `Buckets ${same.join(", ")}`;
    entries.push({ kind: "bar", color: colour(c), stroke: "#ffffff", label });
  }
  return entries;
}

function stepKey(state) {
  const ev = (key) => ({
    kind: "marker", shape: EVENTS[key].shape, color: key === "optimizer" ? COLORS.green : colour(0),
    stroke: MARKER_EDGE[key], strokeWidth: MARKER_EDGE_WIDTH[key], size: EVENTS[key].size, label: EVENTS[key].label,
  });
  return [
    ...bucketEntries(state),
    { kind: "bar", color: colour(0), opacity: FAINT, strokeOpacity: FAINT, label: "Not reached yet (faint)" },
    { kind: "bar", hatch: true, color: IDLE_HATCH, label: "Idle until the optimizer" },
    { kind: "bar", color: OPTIMIZER, stroke: OPTIMIZER_EDGE, label: "Optimizer" },
    ev("gradient"), ev("ready"),
    { kind: "marker", shape: "circle", color: "none", stroke: COLORS.ink, strokeWidth: RING.width, size: RING.size, label: RING.label },
    ev("launch"), ev("start"), ev("end"), ev("optimizer"),
    { kind: "line", color: COLORS.ink, dash: "6 4", label: "Slowest rank's backward ends" },
    { kind: "playhead", label: "Playhead: events appear as it reaches them" },
  ];
}

// --- the sweep over bucket sizes --------------------------------------------------------

function sweepChart(state, width) {
  const sw = state.sweep;
  const n = sw.layers_per_bucket.length;
  const top = Math.ceil(Math.max(...sw.step_ms) * 1.12);
  const k = sw.best;
  const head = title(`Shortest step: ${k} layer${k > 1 ? "s" : ""} per bucket (${fmt(sw.best_step_ms, MS)})`, 58, width);
  const height = (width < 500 ? 222 : 262) + head.height;
  const frame = chartFrame({
    width, height,
    x: { domain: [0.5, n + 0.5], label: "Layers per bucket" },
    y: { domain: [0, top], label: "Step time (ms)" },
    margin: { right: 50, top: head.height + 6 },
  });
  frame.svg.append(head.node);
  // The overlap share on its own axis, on the right.
  const share = linear(0, 105, frame.bottom, frame.top);
  const axis = s("g", {});
  axis.append(s("line", { x1: frame.right, x2: frame.right, y1: frame.top, y2: frame.bottom, stroke: "#8c959f" }));
  for (const v of [0, 25, 50, 75, 100]) {
    axis.append(s("line", { x1: frame.right, x2: frame.right + 5, y1: share(v), y2: share(v), stroke: "#8c959f" }));
    axis.append(s("text", { x: frame.right + 8, y: share(v) + 4, "font-size": 12, fill: COLORS.muted, "font-family": FONT }, String(v)));
  }
  const cy = (frame.top + frame.bottom) / 2;
  axis.append(s("text", { x: width - 14, y: cy, transform: `rotate(90 ${width - 14} ${cy})`, "text-anchor": "middle", "font-size": 13, fill: COLORS.ink }, "Overlap share (%)"));
  frame.svg.append(axis);
  const g = frame.plot;
  const xs = sw.layers_per_bucket;
  g.append(polyline(frame, xs, sw.step_ms, { stroke: COLORS.blue, "stroke-width": 3 }));
  xs.forEach((x, i) => g.append(marker("circle", frame.x(x), frame.y(sw.step_ms[i]), 8, COLORS.blue)));
  const pts = xs.map((x, i) => `${frame.x(x).toFixed(2)},${share(sw.overlap_pct[i]).toFixed(2)}`).join(" ");
  g.append(s("polyline", { points: pts, fill: "none", stroke: COLORS.vermillion, "stroke-width": 3, "stroke-dasharray": "8 5" }));
  xs.forEach((x, i) => g.append(marker("square", frame.x(x), share(sw.overlap_pct[i]), 8, COLORS.vermillion)));
  g.append(marker("circle", frame.x(sw.current), frame.y(sw.current_step_ms), 14, "none", COLORS.ink, 2));
  g.append(marker("star", frame.x(k), frame.y(sw.best_step_ms), 13, COLORS.orange, COLORS.ink, 1));
  return frame.svg;
}

function sweepKey() {
  return [
    { kind: "line", color: COLORS.blue, shape: "circle", label: "Step time (left axis)" },
    { kind: "line", color: COLORS.vermillion, dash: "8 5", shape: "square", label: "Overlap share (right axis)" },
    { kind: "marker", shape: "circle", color: "none", stroke: COLORS.ink, strokeWidth: 2, size: 14, label: "Current setting" },
    { kind: "marker", shape: "star", color: COLORS.orange, stroke: COLORS.ink, strokeWidth: 1, size: 13, label: "Shortest step" },
  ];
}

function sweepTable(sw) {
  return {
    caption: "Every bucket size of this step, each solved event by event.",
    columns: [
      { key: "layers_per_bucket", label: "Layers per bucket" },
      { key: "buckets", label: "Buckets" },
      { key: "step_ms", label: "Step time (ms)", digits: 2 },
      { key: "overlap_pct", label: "Overlap share (%)", digits: 0 },
    ],
    rows: sw.layers_per_bucket.map((k, i) => [k, sw.n_buckets[i], sw.step_ms[i], sw.overlap_pct[i]]),
  };
}

// --- ranks disagree: each rank's collectives ------------------------------------------

function sequencesChart(state, width) {
  const d = state.disagreement;
  const nb = state.buckets.layers.length;
  const ranks = d.sequences.length;
  const lane = laneHeight(width);
  const left = 74;
  const right = 12;
  const head = title("No timeline: the ranks disagree on which collectives run", left, width);
  const colTop = head.height + 8;
  const top = colTop + 22;
  const height = top + lane * ranks + 12;
  const w = Math.max(200, width);
  const svg = s("svg", { width: w, height, viewBox: `0 0 ${w} ${height}`, xmlns: "http://www.w3.org/2000/svg", "font-family": FONT });
  svg.append(s("rect", { x: 0, y: 0, width: w, height, fill: "#ffffff" }), head.node);
  const missingId = patternId("missing");
  svg.append(hatchDefs(missingId, COLORS.vermillion));
  const col = (w - left - right) / nb;
  const x = (p) => left + p * col;
  const roomy = col >= 60; // room for the text inside each box
  const size = col >= 90 ? 12 : 11;
  const named = col >= 88; // room for "Collective 2" over each column
  if (!named) {
    svg.append(s("text", { x: left - 8, y: colTop + 12, "text-anchor": "end", "font-size": 12, fill: COLORS.muted }, "Collective"));
  }
  for (let p = 0; p < nb; p++) {
    svg.append(s("text", { x: x(p) + col / 2, y: colTop + 12, "text-anchor": "middle", "font-size": 12, fill: COLORS.muted },
      named ? `Collective ${p}` : String(p)));
  }
  for (let r = 0; r < ranks; r++) {
    const y = top + r * lane;
    svg.append(s("text", { x: left - 8, y: y + lane / 2 + 4, "text-anchor": "end", "font-size": 12, fill: COLORS.ink }, `Rank ${r}`));
    const seq = d.sequences[r];
    for (let p = 0; p < nb; p++) {
      const launched = p < seq.length;
      const fill = launched ? colour(seq[p]) : `url(#${missingId})`;
      svg.append(s("rect", {
        x: x(p) + 3, y: y + lane * 0.14, width: col - 6, height: lane * 0.72, rx: 3,
        fill, stroke: launched ? "#ffffff" : COLORS.vermillion, "stroke-width": 1.5, "stroke-dasharray": launched ? null : "4 3",
      }));
      if (roomy) {
        const lines = launched ? [`bucket ${seq[p]}`, fmt(state.buckets.size_mb[seq[p]], MB)] : ["never", "launched"];
        const ink = launched ? TEXT_ON[colour(seq[p])] || COLORS.ink : COLORS.ink;
        const t = s("text", { x: x(p) + col / 2, y: y + lane / 2 - 3, "text-anchor": "middle", "font-size": size, "font-weight": 600, fill: ink },
          s("tspan", { x: x(p) + col / 2, dy: 0, ...(launched ? {} : { stroke: "#ffffff", "stroke-width": 3, "paint-order": "stroke" }) }, lines[0]),
          s("tspan", { x: x(p) + col / 2, dy: size + 2, ...(launched ? {} : { stroke: "#ffffff", "stroke-width": 3, "paint-order": "stroke" }) }, lines[1]));
        svg.append(t);
      }
    }
  }
  // Where the sequences stop matching.
  const xm = x(d.mismatch);
  svg.append(s("line", { x1: xm, x2: xm, y1: colTop - 2, y2: height - 6, stroke: COLORS.vermillion, "stroke-width": 3 }));
  return svg;
}

function sequenceKey(state) {
  return [
    ...bucketEntries(state).map((e) => ({ ...e, label: e.label + " (launched)" })),
    { kind: "bar", hatch: true, color: COLORS.vermillion, dash: "4 3", label: "Never launched: the rank waits forever" },
    { kind: "line", color: COLORS.vermillion, label: "Where the sequences stop matching" },
  ];
}

function drawSequenceTable(section, titleId, state) {
  const d = state.disagreement;
  const nb = state.buckets.layers.length;
  const ranks = d.sequences.map((_, r) => r);
  const rows = [];
  for (let p = 0; p < nb; p++) {
    const mismatch = p === d.mismatch;
    const cells = ranks.map((r) => {
      const seq = d.sequences[r];
      if (p < seq.length) return h("td", {}, `bucket ${seq[p]}`, h("br"), fmt(state.buckets.size_mb[seq[p]], MB));
      if (p === seq.length) return h("td", { class: "rk-missing" }, "never launched", h("br"), `(waits for layer ${d.skipped_layer})`);
      return h("td", { class: "rk-missing" }, "never launched");
    });
    rows.push(h("tr", { class: mismatch ? "rk-mismatch" : null },
      h("th", { scope: "row" }, `Collective ${p}`, ...(mismatch ? [h("br"), "✗ stops matching here"] : [])), ...cells));
  }
  const layers = "Bucket layers: " + state.buckets.layers.map((x, b) => `bucket ${b}: ${x}`).join("; ");
  section.replaceChildren(
    h("h3", { class: "ol-title", id: titleId }, "Ranks disagree: no timeline to draw"),
    h("p", {}, `Rank ${d.skipping_rank} takes another branch and never computes layer ${d.skipped_layer} (a skipped layer, or a parameter left unused without `,
      h("code", {}, "find_unused_parameters=True"), "). Each rank's all-reduces, in the order it launches them:"),
    h("div", { class: "rk-scroll" },
      h("table", {},
        h("caption", {}, `Collectives launched per rank; they stop matching at collective ${d.mismatch}`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "In order"), ranks.map((r) => h("th", { scope: "col" }, `Rank ${r}`)))),
        h("tbody", {}, rows))),
    h("p", { class: "ol-hint" }, layers),
    h("p", {}, h("strong", {}, "What happens. "), d.outcome),
    h("p", {}, h("strong", {}, "What fixes it. "), d.fix),
  );
}
