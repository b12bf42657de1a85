// The many-ranks sweep over bucket sizes: step time and overlap share for every bucket
// size, its key and its data as a table.

import { s } from "../common/js/dom.js";
import { chartFrame, marker, polyline } from "../common/js/chart.js";
import { fmt } from "../common/js/rules.js";
import { linear } from "../common/js/ticks.js";
import { COLORS, FONT } from "../common/js/theme.js";
import { MS, title } from "./ranks_chart_parts.js";

export function sweepChart(state, width) {
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

export function sweepKey() {
  return [
    { kind: "line", color: COLORS.blue, shape: "circle", label: "Step time (left axis)" },
    { kind: "line", color: COLORS.vermillion, dash: "8 5", shape: "square", label: "Overlap share (right axis)" },
    { kind: "marker", shape: "circle", color: "none", stroke: COLORS.ink, strokeWidth: 2, size: 14, label: "Current setting" },
    { kind: "marker", shape: "star", color: COLORS.orange, stroke: COLORS.ink, strokeWidth: 1, size: 13, label: "Shortest step" },
  ];
}

export function sweepTable(sw) {
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
