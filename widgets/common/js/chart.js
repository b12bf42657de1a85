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
 * A chart frame: `{svg, plot, x, y, band}`. `x` is `{domain, label}`; `y` is
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
  const xt = niceTicks(x.domain[0], x.domain[1], Math.max(2, Math.floor((w - m.left - m.right) / 70)));
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

/** A marker of a given shape centred on (x, y), as drawn in charts and keys. */
export function marker(shape, x, y, size, fill, stroke = "#ffffff", strokeWidth = 1.5) {
  const r = size / 2;
  const style = { fill, stroke, "stroke-width": strokeWidth };
  if (shape === "circle") return s("circle", { cx: x, cy: y, r, ...style });
  if (shape === "square") return s("rect", { x: x - r, y: y - r, width: size, height: size, ...style });
  const points = {
    diamond: [[0, -1.25], [1, 0], [0, 1.25], [-1, 0]],
    triangle: [[0, -1.1], [1.05, 0.8], [-1.05, 0.8]],
    "inverted-triangle": [[0, 1.1], [1.05, -0.8], [-1.05, -0.8]],
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
 * A key swatch as the chart draws it: `{kind: "line", color, dash}`,
 * `{kind: "marker", shape, color, stroke}`, `{kind: "bar", color, hatch}` or `{kind: "playhead"}`.
 */
export function swatch(entry) {
  const svg = s("svg", { width: 26, height: 16, viewBox: "0 0 26 16", "aria-hidden": "true", focusable: "false" });
  if (entry.kind === "line") {
    svg.append(s("line", { x1: 1, x2: 25, y1: 8, y2: 8, stroke: entry.color, "stroke-width": 3, "stroke-dasharray": entry.dash || null }));
  } else if (entry.kind === "marker") {
    svg.append(marker(entry.shape, 13, 8, 11, entry.color, entry.stroke || "#ffffff", entry.strokeWidth || 1.5));
  } else if (entry.kind === "bar") {
    if (entry.hatch) svg.append(hatchDefs("key-hatch", entry.color));
    svg.append(
      s("rect", {
        x: 2, y: 3, width: 22, height: 10, rx: 2,
        fill: entry.hatch ? "url(#key-hatch)" : entry.color,
        stroke: entry.stroke || entry.color, "stroke-width": 1.5,
        "stroke-dasharray": entry.dash || null,
      }),
    );
  } else if (entry.kind === "playhead") {
    svg.append(s("line", { x1: 13, x2: 13, y1: 1, y2: 15, stroke: COLORS.ink, "stroke-width": 2 }));
  }
  return svg;
}

/** A diagonal hatch pattern (for marks that must differ from others by more than colour). */
export function hatchDefs(id, color) {
  return s(
    "defs", {},
    s("pattern", { id, width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
      s("rect", { width: 6, height: 6, fill: "#ffffff" }),
      s("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: color, "stroke-width": 3 })),
  );
}
