// The bucket timeline as the page draws it: one training step's lanes (backward per
// layer, bucket fill, order and link waits, all-reduces, the optimizer), the exposed
// tail, the sweep over bucket sizes, and the readouts. Every number is the server's;
// the page only reveals the bars up to the playhead.

import { h, s, show } from "../common/js/dom.js";
import { chartFrame, hatchDefs, marker, patternId, playheadLine, polyline, subRows, swatch } from "../common/js/chart.js";
import { mountWidget } from "../common/js/frame.js";
import { fmt, revealSpans } from "../common/js/rules.js";
import { dataTable } from "../common/js/table.js";
import { CATEGORY, COLORS } from "../common/js/theme.js";
import CSS from "./bucket_timeline.css";

const MS = { digits: 2, unit: "ms" };
/** Readouts by the server's key, in the order shown (Elapsed time is the page's own). */
const TOP = [["tail", "Exposed tail"], ["step", "Step time"]];
const MORE = [
  ["backward_end", "Backward end"],
  ["comm_end", "Communication end"],
  ["buckets", "Buckets"],
  ["overhead", "Per-transfer overhead"],
  ["overlap", "Overlap"],
];
const GHOST = 0.22;
const LINES = {
  backward_end: { color: COLORS.blue, dash: "6 4", label: "Backward end (dashed)" },
  comm_end: { color: COLORS.vermillion, dash: "2 3", label: "Communication end (dotted)" },
  optimizer_start: { color: COLORS.green, dash: "8 3 2 3", label: "Optimizer start (dash-dot)" },
};
const OPTIMIZER = { fill: COLORS.grey, stroke: COLORS.ink, dash: "4 2" };
const NO_SYNC = { fill: "#c8c8c8" };
const TAIL = { color: COLORS.vermillion, opacity: 0.45, dash: "5 3" };

/** A number as Python's `{:g}` writes a rate (12.5, 14.29). */
const plain = (v) => String(Number(v.toPrecision(6)));
const colour = (b) => CATEGORY[((b % CATEGORY.length) + CATEGORY.length) % CATEGORY.length];
const striped = (b) => b % 2 === 1;

export function render({ model, el }) {
  const r = {};
  let sweepState = null;
  let sweepWidth = 600;
  const sweepHost = h("div", { class: "ol-chart", role: "img", "aria-label": "Step time and exposed tail for every number of layers per bucket" });
  const sweepKey = h("ul", { class: "ol-key", "aria-label": "Key of the sweep" });
  const sweepTable = dataTable("The sweep's data as a table");
  const presetNote = h("p", { class: "ol-hint", role: "status" });
  const presetSource = h("p", { class: "ol-hint ol-source" });
  const explanation = h("p", { class: "ol-explanation" });
  const bridge = h("p", { class: "ol-note" });

  mountWidget({ model, el }, {
    name: "bucket-timeline",
    time: MS,
    chartLabel: "One training step: each layer's backward, bucket fill, waits, all-reduces and the optimizer over time",

    layout(p) {
      const f = p.fields;
      r.elapsed = p.readout("Elapsed time");
      for (const [key, label] of [...TOP, ...MORE]) r[key] = p.readout(label);
      r.regime = p.readout("Regime", { wide: true });
      r.reload = h("button", { type: "button", class: "ol-button" }, "Load the preset again");
      r.reload.addEventListener("click", () => model.send_msg({ edit: "preset", text: model.state.preset.name }));
      r.best = h("button", { type: "button", class: "ol-button" }, "Use the best setting");
      r.best.addEventListener("click", () => p.act("best"));
      return {
        main: [h("div", { class: "ol-readouts ol-top" }, r.elapsed.el, ...TOP.map(([k]) => r[k].el))],
        after: [
          h("div", { class: "ol-readouts" }, ...MORE.map(([k]) => r[k].el)),
          h("div", { class: "ol-section" }, r.regime.el, explanation),
          h("section", { class: "ol-section", "aria-label": "Step time by bucket size" },
            h("figure", { class: "ol-figure" }, sweepHost, sweepKey),
            h("div", { class: "ol-buttons" }, r.best),
            sweepTable.el),
          bridge,
        ],
        controls: [
          h("div", { class: "ol-section" }, f.preset.el, presetNote, presetSource, h("div", { class: "ol-buttons" }, r.reload)),
          p.section("Buckets", f.layers_per_bucket.el, f.bucket_cap_mb.el),
          p.section("DDP", f.ddp_bucketing.el, f.iteration.el, f.find_unused_parameters.el, f.enqueue_ms.el),
          p.section("Hardware", f.backward_ms.el, f.grad_mb.el, f.bandwidth.el, f.latency_ms.el, f.algorithm.el, f.ranks.el, f.straggler_pct.el),
          p.section("Rest of the step", f.accumulation_steps.el, f.forward_ms.el, f.optimizer_ms.el),
        ],
      };
    },

    update(state) {
      for (const [key] of [...TOP, ...MORE, ["regime"]]) {
        const [value, note] = state.readouts[key];
        r[key].set(value, note);
      }
      explanation.replaceChildren(h("strong", {}, state.regime.lead), " ", state.regime.text);
      const preset = state.preset;
      const changed = preset.changed.length ? `${preset.name}, changed: ${preset.changed.join(", ")}. ` : "";
      presetNote.textContent = changed + preset.description;
      presetSource.textContent = `Source: ${preset.source}`;
      show(r.reload, preset.changed.length > 0);
      r.best.disabled = state.sweep.best_in_use;
      drawBridge(bridge, state.bridge);
      // The curve is steady (sent only when it changes); where this setting sits on it is not.
      const sw = (sweepState = { ...state.curve, ...state.sweep });
      drawSweep();
      sweepTable.update({
        caption: "Each number of layers per bucket, its buckets, step time and exposed tail.",
        columns: [
          { key: "layers_per_bucket", label: "Layers per bucket" },
          { key: "buckets", label: "Buckets" },
          { key: "step_ms", label: "Step time (ms)", digits: 2 },
          { key: "tail_ms", label: "Exposed tail (ms)", digits: 2 },
        ],
        rows: sw.x.map((x, i) => [x, sw.buckets[i], sw.step[i], sw.tail[i]]),
      });
    },

    draw({ state, t, playing, width }) {
      // Paused, t is the server's elapsed time (the anchor); playing, the page's own.
      r.elapsed.set(fmt(t, MS), state.micro_batches > 1 ? "from the start of the first micro-batch's backward" : "from the start of backward");
      return drawTimeline(state, t, width);
    },

    keyEntries(state) {
      const kinds = new Set(state.bars.kind.map((k) => state.bar_kinds[k]));
      const entries = [
        { kind: "bar", color: colour(0), stroke: "#ffffff", label: "A layer's backward, in its bucket's colour" },
        { kind: "bar", color: colour(0), stroke: COLORS.ink, label: "A bucket's all-reduce (its number on the bar)" },
      ];
      if (state.n_buckets > 1) {
        entries.push({ kind: "bar", color: colour(1), hatch: true, hatchColor: "#ffffff", hatchOn: colour(1), hatchWidth: 1.5, angle: -45, stroke: COLORS.ink, label: "Odd-numbered buckets: striped" });
      }
      entries.push(
        { kind: "bar", color: colour(0), opacity: 0.45, label: "A bucket filling, until it is ready" },
        { kind: "bar", color: COLORS.ink, hatch: true, stroke: COLORS.ink, label: "A bucket waiting for the link (hatched /)" },
        { kind: "bar", color: COLORS.ink, hatch: true, angle: -45, stroke: COLORS.ink, label: "A ready bucket waiting for an earlier one (hatched \\)" },
      );
      if (kinds.has("backward (no_sync)")) {
        entries.push(
          { kind: "bar", color: NO_SYNC.fill, stroke: COLORS.ink, label: "A micro-batch's backward under no_sync(): nothing reduced" },
          { kind: "bar", color: "#ffffff", stroke: COLORS.ink, dash: "3 3", label: "The next micro-batch's forward" },
        );
      }
      if (kinds.has("enqueue")) {
        entries.push({ kind: "bar", color: "#dddddd", stroke: COLORS.ink, dash: "2 2", label: "The host enqueueing an all-reduce" });
      }
      entries.push(
        { kind: "bar", color: OPTIMIZER.fill, stroke: OPTIMIZER.stroke, dash: OPTIMIZER.dash, label: "Optimizer (in the Backward lane)" },
        { kind: "bar", color: TAIL.color, hatch: true, opacity: TAIL.opacity, dash: TAIL.dash, label: "Exposed tail: backward end to communication end" },
        ...Object.values(LINES).map((l) => ({ kind: "line", color: l.color, dash: l.dash, label: l.label })),
        { kind: "bar", color: colour(0), opacity: GHOST, stroke: "#ffffff", label: "Faint: not reached yet" },
        { kind: "playhead", label: "Playhead" },
      );
      return entries;
    },

    csvReadouts({ state, t }) {
      return [
        ["Elapsed time", fmt(t, MS)],
        ...[...TOP, ...MORE, ["regime", "Regime"]].map(([key, label]) => [label, state.readouts[key][0]]),
      ];
    },
  });

  function drawSweep() {
    if (!sweepState) return;
    sweepHost.replaceChildren(sweepChart(sweepState, sweepWidth));
    sweepKey.replaceChildren(
      ...[
        { kind: "line", color: COLORS.blue, shape: "circle", label: "Step time" },
        { kind: "line", color: COLORS.vermillion, dash: "6 4", shape: "square", label: "Exposed tail (dashed)" },
        { kind: "marker", shape: "circle", color: "none", stroke: COLORS.ink, strokeWidth: 2.5, label: "Current setting" },
        { kind: "marker", shape: "star", color: COLORS.orange, stroke: COLORS.ink, strokeWidth: 1, label: "Best setting" },
      ].map((e) => h("li", {}, swatch(e), h("span", {}, e.label))),
    );
  }

  el.append(h("style", {}, CSS));

  new ResizeObserver(() => {
    const width = Math.floor(sweepHost.getBoundingClientRect().width);
    if (width > 0 && width !== sweepWidth) {
      sweepWidth = width;
      drawSweep();
    }
  }).observe(sweepHost);
}

/** The timeline: a faint ghost of the whole step, drawn in full up to the playhead. */
function drawTimeline(state, t, width) {
  const narrow = width < 560;
  const frame = chartFrame({
    width,
    height: narrow ? 240 : 290,
    title: "One training step",
    x: { domain: [0, state.horizon * 1.02], label: narrow ? (state.micro_batches > 1 ? "Time from first backward (ms)" : "Time from backward start (ms)") : state.micro_batches > 1 ? "Time from the start of the first micro-batch's backward (ms)" : "Time from the start of backward (ms)", spacing: narrow ? 40 : 70 },
    y: { lanes: state.lanes },
  });
  const g = frame.plot;
  const ids = patterns(frame.svg, state);
  const bars = { ...state.bars, kinds: state.bar_kinds };
  const m = state.marks;

  if (m.tail > 0) {
    const x0 = frame.x(m.backward_end), x1 = frame.x(m.comm_end);
    g.append(s("rect", {
      x: x0, y: frame.top, width: x1 - x0, height: frame.bottom - frame.top,
      fill: `url(#${ids.tail})`, "fill-opacity": TAIL.opacity, stroke: TAIL.color, "stroke-width": 1.5, "stroke-dasharray": TAIL.dash,
    }));
  }
  // Bars that overlap in time on one lane (a bucket filling while another does, two
  // buckets waiting for the link) each get a row of their own in that lane.
  const rows = subRows(bars.start, bars.end, bars.lane);
  bars.start.forEach((_, i) => g.append(bar(frame, bars, rows, i, bars.end[i], ids, true)));
  const shown = revealSpans(bars.start, bars.end, t);
  shown.keep.forEach((i, k) => g.append(bar(frame, bars, rows, i, shown.end[k], ids, false)));
  for (const [key, line] of Object.entries(LINES)) {
    const px = frame.x(m[key]);
    g.append(s("line", { x1: px, x2: px, y1: frame.top, y2: frame.bottom, stroke: line.color, "stroke-width": 2, "stroke-dasharray": line.dash }));
  }
  frame.svg.append(playheadLine(frame, t));
  return frame.svg;
}

/** The patterns one timeline uses: link and order waits, the tail, and each striped bucket. */
function patterns(svg, state) {
  const ids = { link: patternId("link"), order: patternId("order"), tail: patternId("tail"), stripes: {} };
  const defs = [hatchDefs(ids.link, COLORS.ink, 45), hatchDefs(ids.order, COLORS.ink, -45), hatchDefs(ids.tail, TAIL.color, 45)];
  for (let b = 1; b < state.n_buckets; b += 2) {
    const c = colour(b);
    if (!(c in ids.stripes)) {
      ids.stripes[c] = patternId("stripes");
      defs.push(hatchDefs(ids.stripes[c], "#ffffff", -45, c, 1.5));
    }
  }
  svg.insertBefore(s("g", {}, defs), svg.firstChild.nextSibling);
  return ids;
}

/** One bar, as the key shows it; `ghost` draws the faint not-yet-reached version. */
function bar(frame, bars, rows, i, end, ids, ghost) {
  const kind = bars.kinds[bars.kind[i]], b = bars.bucket[i];
  const band = frame.band(bars.lane[i]);
  const n = rows.rows[bars.lane[i]] || 1;
  const sub = band.height / n;
  const lane = { top: band.top + rows.row[i] * sub, height: sub - (n > 1 ? 1 : 0), mid: band.top + (rows.row[i] + 0.5) * sub };
  const x0 = frame.x(bars.start[i]), x1 = frame.x(end);
  const w = Math.max(0.5, x1 - x0);
  let fill = colour(b), stroke = "#ffffff", dash = null, fillOpacity = null, label = null;
  if (kind === "backward") {
    if (striped(b)) fill = `url(#${ids.stripes[colour(b)]})`;
    label = String(bars.layer[i]);
  } else if (kind === "transfer") {
    if (striped(b)) fill = `url(#${ids.stripes[colour(b)]})`;
    stroke = COLORS.ink;
    label = String(b);
  } else if (kind === "filling") {
    fillOpacity = 0.45;
    stroke = colour(b);
  } else if (kind === "waiting") {
    fill = `url(#${ids.link})`;
    stroke = COLORS.ink;
    label = String(b);
  } else if (kind === "waiting for bucket") {
    fill = `url(#${ids.order})`;
    stroke = COLORS.ink;
    const k = bars.waits_for[i];
    label = [`waiting for bucket ${k}`, `waits for ${k}`, `for ${k}`];
  } else if (kind === "enqueue") {
    fill = "#dddddd";
    stroke = COLORS.ink;
    dash = "2 2";
  } else if (kind === "backward (no_sync)") {
    fill = NO_SYNC.fill;
    stroke = COLORS.ink;
    label = ["backward (no_sync)", "no_sync"];
  } else if (kind === "forward") {
    fill = "#ffffff";
    stroke = COLORS.ink;
    dash = "3 3";
    label = ["forward", "fwd"];
  } else if (kind === "optimizer") {
    fill = OPTIMIZER.fill;
    stroke = OPTIMIZER.stroke;
    dash = OPTIMIZER.dash;
    label = "optimizer";
  }
  const rect = s("rect", {
    x: x0, y: lane.top, width: w, height: lane.height,
    fill, "fill-opacity": ghost ? GHOST * (fillOpacity ?? 1) : fillOpacity,
    stroke, "stroke-width": 1.2, "stroke-opacity": ghost ? 0.4 : null, "stroke-dasharray": dash,
    "data-layer": ghost ? "not-reached" : null,
  });
  if (ghost) return rect;
  const fit = labelFit(label, w);
  if (fit === null) return rect;
  return s("g", {}, rect, s("text", {
    x: x0 + w / 2, y: lane.mid + fit.size * 0.36, "text-anchor": "middle", "font-size": fit.size, fill: COLORS.ink,
    stroke: "#ffffff", "stroke-width": 3, "paint-order": "stroke", "stroke-linejoin": "round",
  }, fit.text));
}

/** Label sizes, largest first: 11 px where it fits, down to 9 px on a narrow bar (a phone). */
const LABEL_SIZES = [11, 10, 9];

/**
 * The longest of a bar's labels that fits in `w` px, at the largest size it fits
 * (a digit is about 0.64 of the size wide in the fonts a system-ui falls back to, plus
 * 1 px either side), or null.
 */
function labelFit(label, w) {
  for (const text of [label].flat()) {
    if (text === null) continue;
    const size = LABEL_SIZES.find((px) => w >= text.length * px * 0.64 + 2);
    if (size !== undefined) return { text, size };
  }
  return null;
}

/** Step time and tail for every bucket size; the current one ringed, the best starred. */
function sweepChart(sw, width) {
  const top = Math.max(...sw.step, ...sw.tail) * 1.1;
  const frame = chartFrame({
    width,
    height: width < 500 ? 220 : 250,
    title: `Best: ${sw.best} layers per bucket (${fmt(sw.best_step, MS)})`,
    x: { domain: [0.5, sw.x.length + 0.5], label: "Layers per bucket", spacing: 40 },
    y: { domain: [0, top], label: "Time (ms)" },
  });
  const g = frame.plot;
  g.append(polyline(frame, sw.x, sw.step, { stroke: COLORS.blue, "stroke-width": 3 }));
  g.append(polyline(frame, sw.x, sw.tail, { stroke: COLORS.vermillion, "stroke-width": 3, "stroke-dasharray": "6 4" }));
  sw.x.forEach((x, i) => {
    g.append(marker("circle", frame.x(x), frame.y(sw.step[i]), 8, COLORS.blue));
    g.append(marker("square", frame.x(x), frame.y(sw.tail[i]), 7, COLORS.vermillion));
  });
  if (sw.current !== null) g.append(marker("circle", frame.x(sw.current), frame.y(sw.current_step), 18, "none", COLORS.ink, 2.5));
  g.append(marker("star", frame.x(sw.best), frame.y(sw.best_step), 20, COLORS.orange, COLORS.ink, 1));
  return frame.svg;
}

/** The link to the queue lab with this step's average rates, and what it leaves out. */
function drawBridge(el, b) {
  const words = "open the queue lab with these average rates";
  const link = b.href ? h("a", { href: b.href, target: "_blank", rel: "noopener" }, words, " (in a new tab)") : words;
  const capped = b.capped.length ? ` (${b.capped.join("; ")})` : "";
  el.replaceChildren(
    "Compare with the fluid picture: ", link,
    `: gradients arrive at ${plain(b.arrival)} MB/ms during backward and the link reduces ` +
      `${plain(b.service)} MB/ms${capped} (read items as MB and seconds as ms). The fluid queue ` +
      "ignores buckets and their order, so it shows pressure, not the tail.",
  );
}
