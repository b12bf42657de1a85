// Hand-drawn SVG charts: a frame with axes, grid and title; marks; a playhead;
// and a key whose swatches are drawn by the same functions as the chart's marks.
// Styles are attributes, not CSS, so a chart saved as PNG looks as it does here.

import { s } from "./dom.js";
import { fmt } from "./rules.js";
import { linear, niceTicks, tickDigits } from "./ticks.js";
import { COLORS, FONT } from "./theme.js";

const AXIS = { stroke: "#8c959f", "stroke-width": 1 };
const TICK_TEXT = { fill: COLORS.muted, "font-size": 12, "font-family": FONT };

/**
 * A chart frame: `{svg, plot, x, y, band}`. `x` is `{domain, label, spacing?}` (about
 * `spacing` px between x ticks, 70 by default); `y` is
 * `{domain, label}` for a numeric axis or `{lanes: [names], label}` for lanes
 * (then `band(i)` gives the lane's top and height).
 */
export function chartFrame({ width, height, title, x, y, margin = {} }) {
  const laneNames = y.lanes || null;
  const longest = laneNames ? Math.max(...laneNames.map((n) => n.length)) : 0;
  const m = {
    top: title ? 30 : 12,
    right: 18,
    bottom: 44,
    left: laneNames ? Math.min(170, 16 + longest * 6.6) : 58,
    ...margin,
  };
  const w = Math.max(200, width);
  const svg = s("svg", {
    width: w,
    height,
    viewBox: `0 0 ${w} ${height}`,
    xmlns: "http://www.w3.org/2000/svg",
    "font-family": FONT,
  });
  svg.append(s("rect", { x: 0, y: 0, width: w, height, fill: "#ffffff" }));
  if (title) {
    svg.append(s("text", { x: m.left, y: 18, "font-size": 14, fill: COLORS.ink, "font-weight": 600 }, title));
  }
  const xs = linear(x.domain[0], x.domain[1], m.left, w - m.right);
  const plotBottom = height - m.bottom;
  const grid = s("g", {});
  const axes = s("g", {});
  svg.append(grid, axes);

  // x axis: ticks that fit the width; the last label is kept inside the frame.
  const xt = niceTicks(x.domain[0], x.domain[1], Math.max(2, Math.floor((w - m.left - m.right) / (x.spacing || 70))));
  const xd = tickDigits(xt);
  axes.append(s("line", { x1: m.left, x2: w - m.right, y1: plotBottom, y2: plotBottom, ...AXIS }));
  for (const v of xt) {
    const px = xs(v);
    grid.append(s("line", { x1: px, x2: px, y1: m.top, y2: plotBottom, stroke: COLORS.grid }));
    axes.append(s("line", { x1: px, x2: px, y1: plotBottom, y2: plotBottom + 5, ...AXIS }));
    const anchor = px > w - m.right - 14 ? "end" : px < m.left + 14 ? "start" : "middle";
    axes.append(s("text", { x: px, y: plotBottom + 18, "text-anchor": anchor, ...TICK_TEXT }, fmt(v, { digits: xd })));
  }
  axes.append(
    s("text", { x: (m.left + w - m.right) / 2, y: height - 8, "text-anchor": "middle", "font-size": 13, fill: COLORS.ink }, x.label),
  );

  let ys = null;
  let band = null;
  if (laneNames) {
    const n = laneNames.length;
    const lane = (plotBottom - m.top) / Math.max(1, n);
    band = (i) => ({ top: m.top + i * lane + lane * 0.14, height: lane * 0.72, mid: m.top + (i + 0.5) * lane });
    laneNames.forEach((name, i) => {
      if (i > 0) grid.append(s("line", { x1: m.left, x2: w - m.right, y1: m.top + i * lane, y2: m.top + i * lane, stroke: COLORS.grid }));
      axes.append(s("text", { x: m.left - 8, y: band(i).mid + 4, "text-anchor": "end", "font-size": 12, fill: COLORS.ink }, name));
    });
  } else {
    ys = linear(y.domain[0], y.domain[1], plotBottom, m.top);
    const yt = niceTicks(y.domain[0], y.domain[1], Math.max(2, Math.floor((plotBottom - m.top) / 45)));
    const yd = tickDigits(yt);
    axes.append(s("line", { x1: m.left, x2: m.left, y1: m.top, y2: plotBottom, ...AXIS }));
    for (const v of yt) {
      if (v < y.domain[0]) continue;
      const py = ys(v);
      grid.append(s("line", { x1: m.left, x2: w - m.right, y1: py, y2: py, stroke: COLORS.grid }));
      axes.append(s("text", { x: m.left - 8, y: py + 4, "text-anchor": "end", ...TICK_TEXT }, fmt(v, { digits: yd })));
    }
    const cy = (m.top + plotBottom) / 2;
    axes.append(
      s("text", { x: 14, y: cy, transform: `rotate(-90 14 ${cy})`, "text-anchor": "middle", "font-size": 13, fill: COLORS.ink }, y.label),
    );
  }
  const clipId = `clip-${Math.random().toString(36).slice(2)}`;
  svg.append(
    s("defs", {}, s("clipPath", { id: clipId }, s("rect", { x: m.left, y: m.top - 8, width: w - m.left - m.right, height: plotBottom - m.top + 16 }))),
  );
  const plot = s("g", { "clip-path": `url(#${clipId})` });
  svg.append(plot);
  return { svg, plot, x: xs, y: ys, band, top: m.top, bottom: plotBottom, left: m.left, right: w - m.right };
}

/**
 * Rows for intervals that overlap in time, so none hides another: each interval
 * `[start[i], end[i])` goes to the lowest row of its group (`group[i]`, one group when
 * omitted) that is free by its start, in order of start (the greedy colouring of an
 * interval graph, which uses as few rows as the most intervals open at one moment).
 * Returns `{row: [...], rows: {group: count}}` (a group's count is at least 1).
 */
export function subRows(start, end, group = null) {
  const row = new Array(start.length).fill(0);
  const rows = {};
  const order = start.map((_, i) => i).sort((a, b) => start[a] - start[b] || a - b);
  const ends = {};
  for (const i of order) {
    const g = group ? group[i] : 0;
    const free = (ends[g] ||= []);
    let k = free.findIndex((e) => e <= start[i] + 1e-9);
    if (k < 0) {
      k = free.length;
      free.push(0);
    }
    free[k] = end[i];
    row[i] = k;
    rows[g] = Math.max(rows[g] || 1, k + 1);
  }
  return { row, rows };
}

/** Row `k` of `n` inside a band `[top, top + height]`: `[top, height]` with a 1 px gap between rows. */
export function subRow([top, height], k, n) {
  const sub = height / n;
  return [top + k * sub, sub - (n > 1 ? 1 : 0)];
}

/** A five-pointed star's corners, outer radius 1.25 (its points reach as far as a diamond's). */
const STAR = Array.from({ length: 10 }, (_, i) => {
  const r = i % 2 === 0 ? 1.25 : 0.5;
  const a = (Math.PI * i) / 5 - Math.PI / 2;
  return [r * Math.cos(a), r * Math.sin(a)];
});

let patternCount = 0;

/** A pattern id unique in the page (every key swatch with a hatch defines its own). */
export function patternId(prefix = "hatch") {
  patternCount += 1;
  return `ol-${prefix}-${patternCount}`;
}

/** A marker of a given shape centred on (x, y), as drawn in charts and keys (circle, square,
 * diamond, triangle, inverted-triangle, star). */
export function marker(shape, x, y, size, fill, stroke = "#ffffff", strokeWidth = 1.5) {
  const r = size / 2;
  // The shape is named on the element, so a test can read a key's glyphs as a lesson names them.
  const style = { fill, stroke, "stroke-width": strokeWidth, "data-shape": shape };
  if (shape === "circle") return s("circle", { cx: x, cy: y, r, ...style });
  if (shape === "square") return s("rect", { x: x - r, y: y - r, width: size, height: size, ...style });
  const points = {
    diamond: [[0, -1.25], [1, 0], [0, 1.25], [-1, 0]],
    triangle: [[0, -1.1], [1.05, 0.8], [-1.05, 0.8]],
    "inverted-triangle": [[0, 1.1], [1.05, -0.8], [-1.05, -0.8]],
    star: STAR,
  }[shape];
  return s("polygon", { points: points.map(([a, b]) => `${x + a * r},${y + b * r}`).join(" "), ...style });
}

/** A polyline through (xs[i], ys[i]) in chart coordinates. */
export function polyline(frame, xs, ys, attrs) {
  const pts = xs.map((v, i) => `${frame.x(v).toFixed(2)},${frame.y(ys[i]).toFixed(2)}`).join(" ");
  return s("polyline", { points: pts, fill: "none", "stroke-linejoin": "round", ...attrs });
}

/** The playhead: a vertical line at model time t. */
export function playheadLine(frame, t) {
  const px = frame.x(t);
  return s("line", { x1: px, x2: px, y1: frame.top - 4, y2: frame.bottom, stroke: COLORS.ink, "stroke-width": 2, "stroke-opacity": 0.8 });
}

/**
 * A key swatch as the chart draws it: `{kind: "line", color, dash, shape?}` (a marker
 * on the line when `shape` is given), `{kind: "marker", shape, color, stroke, size?}`,
 * `{kind: "bar", color, hatch, angle?, hatchColor?, hatchOn?, hatchWidth?, stroke?, dash?,
 * opacity?, strokeOpacity?}`, `{kind: "stack", color, color2}` (two overlapping bars, one above
 * the other) or `{kind: "playhead"}`. A hatch (see `hatchDefs`) is drawn
 * in `hatchColor` (default `color`) on `hatchOn` (default white); `opacity` is the fill's.
 */
export function swatch(entry) {
  const svg = s("svg", { width: 26, height: 16, viewBox: "0 0 26 16", "aria-hidden": "true", focusable: "false" });
  if (entry.kind === "line") {
    svg.append(s("line", { x1: 1, x2: 25, y1: 8, y2: 8, stroke: entry.color, "stroke-width": 3, "stroke-dasharray": entry.dash || null }));
    if (entry.shape) svg.append(marker(entry.shape, 13, 8, 8, entry.color));
  } else if (entry.kind === "marker") {
    svg.append(marker(entry.shape, 13, 8, entry.size || 11, entry.color, entry.stroke || "#ffffff", entry.strokeWidth || 1.5));
  } else if (entry.kind === "bar") {
    const id = entry.hatch ? patternId("key") : null;
    if (entry.hatch) svg.append(hatchDefs(id, entry.hatchColor || entry.color, entry.angle ?? 45, entry.hatchOn || "#ffffff", entry.hatchWidth ?? 3));
    svg.append(
      s("rect", {
        x: 2, y: 3, width: 22, height: 10, rx: 2,
        fill: entry.hatch ? `url(#${id})` : entry.color,
        "fill-opacity": entry.opacity ?? null,
        stroke: entry.stroke || entry.color, "stroke-width": 1.5,
        "stroke-opacity": entry.strokeOpacity ?? null,
        "stroke-dasharray": entry.dash || null,
      }),
    );
  } else if (entry.kind === "stack") {
    // Two bars that overlap in time, drawn one above the other.
    svg.append(s("rect", { x: 1, y: 1, width: 18, height: 6, fill: entry.color, stroke: "#ffffff", "stroke-width": 1 }));
    svg.append(s("rect", { x: 7, y: 9, width: 18, height: 6, fill: entry.color2, stroke: "#ffffff", "stroke-width": 1 }));
  } else if (entry.kind === "playhead") {
    svg.append(s("line", { x1: 13, x2: 13, y1: 1, y2: 15, stroke: COLORS.ink, "stroke-width": 2 }));
  }
  return svg;
}

/**
 * A diagonal hatch pattern (for marks that must differ from others by more than colour):
 * lines in `color`, `lineWidth` wide every 6 px, at `angle` degrees (45 leans like /,
 * -45 like a backslash) on `background` ("none": see-through).
 */
export function hatchDefs(id, color, angle = 45, background = "#ffffff", lineWidth = 3) {
  return s(
    "defs", {},
    s("pattern", { id, width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: `rotate(${angle})` },
      s("rect", { width: 6, height: 6, fill: background }),
      s("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: color, "stroke-width": lineWidth })),
  );
}
