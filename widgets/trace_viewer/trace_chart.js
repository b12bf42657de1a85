// The trace viewer's chart: each rank's layers and all-reduces as measured (solid, revealed
// by the playhead) above the model's prediction (hatched), the exposed tail, and its key.

import { s } from "../common/js/dom.js";
import { chartFrame, hatchDefs, marker, patternId, playheadLine, subRow, subRows } from "../common/js/chart.js";
import { revealPoints } from "../common/js/rules.js";
import { CATEGORY, COLORS } from "../common/js/theme.js";

const OPTIMIZER = "#424a53";
const TAIL = COLORS.ink;

const colour = (b) => CATEGORY[((b % CATEGORY.length) + CATEGORY.length) % CATEGORY.length];
/** A colour mixed with white: the opaque tint of a bar the playhead has not reached. */
function tint(hex, share = 0.66) {
  const n = parseInt(hex.slice(1), 16);
  const mix = (c) => Math.round(c + (255 - c) * share);
  const [r, g, b] = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map(mix);
  return `#${((1 << 24) | (r << 16) | (g << 8) | b).toString(16).slice(1)}`;
}

/**
 * Each rank's all-reduces in rows of their own where they overlap in time (gloo runs
 * two at once): `[{measured, model}]` per rank, each `{row, rows: {0: count}}` (model null
 * without one). Computed once per state.
 */
const packed = new WeakMap();
export function commRows(state) {
  if (!packed.has(state)) {
    packed.set(state, state.ranks.map((lane) => ({
      measured: subRows(lane.comm.start, lane.comm.end),
      model: lane.model ? subRows(lane.model.comm.start, lane.model.comm.end) : null,
    })));
  }
  return packed.get(state);
}

/** The most rows any rank's all-reduces take, measured or model. */
export function mostCommRows(state) {
  return Math.max(1, ...commRows(state).flatMap((r) => [r.measured.rows[0] || 1, r.model ? r.model.rows[0] || 1 : 1]));
}

/** The key of the chart, each mark as it is drawn (the model's only when there is one). */
export function chartKey(state) {
  const model = state.has_model;
  const stacked = mostCommRows(state) > 1;
  const buckets = state.n_buckets <= CATEGORY.length
    ? Array.from({ length: state.n_buckets }, (_, b) => ({ kind: "bar", color: colour(b), stroke: "#ffffff", label: `Bucket ${b}` }))
    : [{ kind: "bar", color: colour(0), stroke: "#ffffff", label: `Buckets 0 to ${state.n_buckets - 1}: colours repeat every ${CATEGORY.length}` }];
  return [
    ...buckets,
    { kind: "bar", color: OPTIMIZER, stroke: "#ffffff", label: "Optimizer" },
    model
      ? { kind: "bar", color: colour(0), stroke: "#ffffff", label: "Measured (solid, upper half of a row)" }
      : { kind: "bar", color: colour(0), stroke: "#ffffff", label: "Measured (solid; no model: it could not be fitted)" },
    model ? { kind: "bar", color: colour(0), hatch: true, hatchWidth: 2, label: "Model (hatched, lower half)" } : null,
    { kind: "bar", color: tint(colour(0)), stroke: "#ffffff", label: "Measured, not yet reached by the playhead (tinted)" },
    stacked ? { kind: "stack", color: colour(1), color2: colour(2), label: "All-reduces that overlap in time: one above the other" } : null,
    { kind: "marker", shape: "inverted-triangle", color: COLORS.ink, label: "Bucket ready on this rank" },
    { kind: "marker", shape: "circle", color: "none", stroke: COLORS.ink, strokeWidth: 2, label: "Issued last: defined the bucket's readiness" },
    { kind: "marker", shape: "diamond", color: COLORS.ink, label: "Backward returned" },
    { kind: "line", color: TAIL, dash: "5 3", label: "Last gradient ready: the exposed tail starts" },
    { kind: "bar", color: TAIL, label: "Exposed tail, measured" },
    model ? { kind: "bar", color: TAIL, hatch: true, hatchWidth: 2, label: "Exposed tail, model" } : null,
    { kind: "playhead", label: "Playhead" },
  ].filter(Boolean);
}

/** The chart for one moment `t` at `width` pixels: an SVG element. */
export function drawChart({ state, t, width }) {
  const narrow = width < 560;
  const lanes = [];
  for (const lane of state.ranks) lanes.push(`Rank ${lane.run_rank} layers`, `Rank ${lane.run_rank} all-reduces`);
  // All-reduces that overlap in time take a row each: a taller lane when any do.
  const extra = mostCommRows(state) - 1;
  const laneHeight = (narrow ? 54 : 62) + extra * (narrow ? 18 : 20);
  const top = 62;
  const height = top + laneHeight * lanes.length + 44;
  const frame = chartFrame({
    width, height,
    title: narrow || !state.has_model ? state.title : `${state.title}: measured and model`,
    x: { domain: state.x_domain, label: narrow ? "Time (ms from the last backward start)" : "Time (ms from the last rank's backward start)" },
    y: { lanes: narrow ? lanes.map(() => "") : lanes },
    margin: narrow ? { top, left: 84 } : { top },
  });
  const { svg, plot } = frame;
  if (narrow) {
    // Two lines per lane label on a phone: "Rank 0" above "layers".
    lanes.forEach((name, i) => {
      const mid = frame.band(i).mid;
      const [who, what] = [name.split(" ").slice(0, 2).join(" "), name.split(" ").slice(2).join(" ")];
      svg.append(s("text", { x: frame.left - 8, y: mid - 3, "text-anchor": "end", "font-size": 12, fill: COLORS.ink, "font-weight": 600 }, who));
      svg.append(s("text", { x: frame.left - 8, y: mid + 12, "text-anchor": "end", "font-size": 12, fill: COLORS.ink }, what));
    });
  }
  // One hatch per colour in use: the model's bars (and the model's tail).
  const hatches = new Map();
  const hatch = (color) => {
    if (!hatches.has(color)) {
      const id = patternId("tv");
      hatches.set(color, id);
      svg.append(hatchDefs(id, color, 45, "#ffffff", 2));
    }
    return `url(#${hatches.get(color)})`;
  };
  const x = frame.x;
  const rect = (a, b, y0, hgt, attrs) => s("rect", { x: x(a), y: y0, width: Math.max(1, x(b) - x(a)), height: hgt, ...attrs });
  // `share`: the measured part of the row (a little over half); without a model, all of it.
  const rows = (i, share = 0.56) => {
    const band = frame.band(i);
    const measured = state.has_model ? band.height * share : band.height;
    return { measured: [band.top, measured], model: [band.top + measured + 3, band.height - measured - 3], band };
  };
  // A measured bar: tinted where the playhead has not reached, solid where it has (both opaque).
  // `mark` names an all-reduce's bar (`{"data-allreduce": "rank 0 bucket 1"}`) for a reader of the SVG.
  const measuredBar = (a, b, [y0, hgt], color, mark = {}) => {
    plot.append(rect(a, b, y0, hgt, { fill: tint(color), stroke: "#ffffff", "stroke-width": 1, "data-layer": "not-reached", ...mark }));
    if (a < t) plot.append(rect(a, Math.min(b, t), y0, hgt, { fill: color, stroke: "#ffffff", "stroke-width": 1 }));
  };
  const modelBar = (a, b, [y0, hgt], color, mark = {}) =>
    plot.append(rect(a, b, y0, hgt, { fill: hatch(color), stroke: color, "stroke-width": 1.2, ...mark }));

  const stacks = commRows(state);
  state.ranks.forEach((lane, k) => {
    const { measured: mine, model: theirs } = stacks[k];
    const compute = rows(2 * k);
    // The all-reduce row is shared by its measured and model sub-rows alike.
    const [nMine, nTheirs] = [mine.rows[0] || 1, theirs ? theirs.rows[0] || 1 : 1];
    const comm = rows(2 * k + 1, nMine === nTheirs ? 0.56 : nMine / (nMine + nTheirs));
    const m = lane.model;
    // Bucket b's all-reduce in its own row of the measured (or model) half of the lane.
    const commRow = (half, packing, b) => subRow(half, packing.row[b], packing.rows[0] || 1);
    lane.layers.start.forEach((a, p) => measuredBar(a, lane.layers.end[p], compute.measured, colour(lane.layers.bucket[p])));
    measuredBar(lane.optimizer[0], lane.optimizer[1], compute.measured, OPTIMIZER);
    const mark = (b, source) => ({ "data-allreduce": `rank ${lane.run_rank} bucket ${b}`, "data-source": source });
    lane.comm.start.forEach((a, b) => measuredBar(a, lane.comm.end[b], commRow(comm.measured, mine, b), colour(b), mark(b, "measured")));
    if (m) {
      m.layers.start.forEach((a, p) => modelBar(a, m.layers.end[p], compute.model, colour(m.layers.bucket[p])));
      modelBar(m.optimizer[0], m.optimizer[1], compute.model, OPTIMIZER);
      m.comm.start.forEach((a, b) => modelBar(a, m.comm.end[b], commRow(comm.model, theirs, b), colour(b), mark(b, "model")));
    }
    // Events as measured, shown once the playhead reaches them.
    for (const b of revealPoints(lane.comm.ready, t)) {
      plot.append(marker("inverted-triangle", x(lane.comm.ready[b]), comm.band.top - 1, 10, COLORS.ink));
    }
    for (const b of revealPoints(lane.comm.issue, t)) {
      if (!lane.comm.defines[b]) continue;
      const [y0, hgt] = commRow(comm.measured, mine, b);
      plot.append(marker("circle", x(lane.comm.issue[b]), y0 + hgt / 2, Math.min(16, hgt + 6), "none", COLORS.ink, 2));
    }
    if (lane.backward_return <= t) {
      const [y0, hgt] = compute.measured;
      plot.append(marker("diamond", x(lane.backward_return), y0 + hgt / 2, 12, COLORS.ink));
    }
  });

  // The exposed tail: from the last gradient ready (a line through every lane) to the
  // communication end, measured (solid) above the model (hatched).
  const q = state.quantities;
  const tailRow = (y, a, b, fill, label) => {
    svg.append(s("text", { x: frame.left - 8, y: y + 8, "text-anchor": "end", "font-size": 12, fill: COLORS.ink }, label));
    if (b > a) svg.append(rect(a, b, y, 9, { fill, stroke: TAIL, "stroke-width": 1 }));
    else svg.append(s("line", { x1: x(a), x2: x(a), y1: y, y2: y + 9, stroke: TAIL, "stroke-width": 2 }));
  };
  const measuredTail = [q.compute_end_ms.measured, Math.max(q.compute_end_ms.measured, q.communication_end_ms.measured)];
  tailRow(28, ...measuredTail, TAIL, narrow ? "Tail" : "Tail, measured");
  if (state.has_model) {
    const modelTail = [q.compute_end_ms.model, Math.max(q.compute_end_ms.model, q.communication_end_ms.model)];
    tailRow(42, ...modelTail, hatch(TAIL), "Tail, model");
  }
  plot.append(s("line", {
    x1: x(measuredTail[0]), x2: x(measuredTail[0]), y1: frame.top - 6, y2: frame.bottom,
    stroke: TAIL, "stroke-width": 1.5, "stroke-dasharray": "5 3",
  }));
  svg.append(playheadLine(frame, t));
  return svg;
}
