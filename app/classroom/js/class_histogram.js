// The class's predictions as a histogram: SVG bars, the answer, the median and your
// prediction, a key and the same counts as a table.

import { el, fmt } from "./class_page.js";

const COLORS = { bar: "#0072B2", answer: "#1f2328", yours: "#D55E00", median: "#E69F00", grid: "#e6e8eb", muted: "#57606a" };

/** The step between count gridlines: a whole 1, 2 or 5 times ten, at most five steps up to ``most``. */
export function countStep(most) {
  const raw = most / 5;
  if (raw <= 1) return 1;
  const e = 10 ** Math.floor(Math.log10(raw));
  const b = raw / e;
  return (b <= 1 ? 1 : b <= 2 ? 2 : b <= 5 ? 5 : 10) * e;
}

/** A histogram of predictions: SVG bars, the answer, the median and your prediction, and a table. */
export function histogram(host, summary, question, marks = {}) {
  // Drawn at the width it is shown at, so its text stays legible on a phone; drawn
  // again when that width changes.
  if (!host.olResize) {
    host.olResize = new ResizeObserver(() => {
      const w = Math.floor(host.getBoundingClientRect().width);
      if (host.olArgs && w > 0 && w !== host.olWidth) histogram(host, ...host.olArgs);
    });
    host.olResize.observe(host);
  }
  host.olArgs = [summary, question, marks];
  host.olWidth = Math.floor(host.getBoundingClientRect().width);
  host.replaceChildren();
  const bins = (summary && summary.bins) || [];
  if (!bins.length) {
    host.append(el("p", { class: "cl-hint" }, "No predictions yet."));
    return;
  }
  const unit = question.unit || "";
  const W = Math.max(280, Math.min(720, host.olWidth || 640)), H = 260, L = 44, R = 16, T = 28, B = 52;
  let lo = bins[0].lo, hi = bins[bins.length - 1].hi;
  for (const v of [marks.answer, marks.yours]) {
    if (v !== null && v !== undefined) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  }
  if (hi === lo) { hi = lo + 1; }
  const pad = (hi - lo) * 0.04;
  lo -= pad; hi += pad;
  const most = Math.max(...bins.map((b) => b.count));
  const step = countStep(most);
  const top = Math.ceil(most / step) * step;
  const x = (v) => L + ((v - lo) / (hi - lo)) * (W - L - R);
  const y = (c) => H - B - (c / top) * (H - B - T);
  const count = summary.count;
  const svg = el("svg:svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Histogram of ${count} prediction${count === 1 ? "" : "s"}; the table below lists it` });
  svg.append(el("svg:rect", { x: 0, y: 0, width: W, height: H, fill: "#ffffff" }));
  for (let c = 0; c <= top; c += step) {
    svg.append(el("svg:line", { x1: L, x2: W - R, y1: y(c), y2: y(c), stroke: COLORS.grid }));
    svg.append(el("svg:text", { x: L - 6, y: y(c) + 4, "text-anchor": "end", "font-size": 12, fill: COLORS.muted }, String(c)));
  }
  for (const b of bins) {
    const x0 = x(b.lo), x1 = x(b.hi);
    svg.append(el("svg:rect", { x: x0 + 1, y: y(b.count), width: Math.max(1, x1 - x0 - 2), height: H - B - y(b.count), fill: COLORS.bar }));
  }
  const ticks = question.integer ? bins.map((b) => (b.lo + b.hi) / 2) : [bins[0].lo, ...bins.map((b) => b.hi)];
  const every = Math.ceil(ticks.length / Math.max(3, Math.floor(W / 80)));
  ticks.forEach((t, i) => {
    if (i % every) return;
    svg.append(el("svg:text", { x: x(t), y: H - B + 16, "text-anchor": "middle", "font-size": 12, fill: COLORS.muted }, fmt(t)));
  });
  svg.append(el("svg:text", { x: (L + W - R) / 2, y: H - 10, "text-anchor": "middle", "font-size": 13, fill: COLORS.answer }, `${question.label}`));
  const mid = (T + H - B) / 2;
  svg.append(el("svg:text", { x: 12, y: mid, transform: `rotate(-90 12 ${mid})`, "text-anchor": "middle", "font-size": 13, fill: COLORS.answer }, "Predictions"));
  const mark = (v, color, dash, label, row) => {
    if (v === null || v === undefined) return;
    svg.append(el("svg:line", { x1: x(v), x2: x(v), y1: T - 4, y2: H - B, stroke: color, "stroke-width": 3, "stroke-dasharray": dash }));
    svg.append(el("svg:text", { x: Math.min(Math.max(x(v), L + 40), W - R - 40), y: 12 + row * 0, "text-anchor": "middle", "font-size": 12, "font-weight": 600, fill: color === COLORS.median ? "#8a5a00" : color }, label));
  };
  mark(marks.median, COLORS.median, "2 3", "", 0);
  mark(marks.answer, COLORS.answer, "7 4", "The answer", 0);
  if (marks.yours !== null && marks.yours !== undefined) {
    const px = x(marks.yours);
    svg.append(el("svg:path", { d: `M${px - 8},${H - B + 2} L${px + 8},${H - B + 2} L${px},${H - B - 12} Z`, fill: COLORS.yours, stroke: "#ffffff" }));
  }
  const key = el("ul", { class: "cl-hint" });
  if (marks.answer !== undefined && marks.answer !== null) key.append(el("li", {}, "Dashed black line: the answer"));
  if (marks.median !== undefined && marks.median !== null) key.append(el("li", {}, "Dotted orange line: the class median"));
  if (marks.yours !== undefined && marks.yours !== null) key.append(el("li", {}, "Vermillion triangle: your prediction"));
  const rows = bins.map((b) => el("tr", {},
    el("td", {}, question.integer ? fmt((b.lo + b.hi) / 2, unit) : `${fmt(b.lo)} to ${fmt(b.hi, unit)}`),
    el("td", {}, String(b.count))));
  const table = el("table", {}, el("caption", { class: "cl-hint" }, "Predictions in each range"),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, question.integer ? "Answer" : "Range"), el("th", { scope: "col" }, "Predictions"))),
    el("tbody", {}, rows));
  host.append(svg, key.childNodes.length ? key : "", el("details", {}, el("summary", {}, "The histogram as a table"), table));
}
