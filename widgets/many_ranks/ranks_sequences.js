// When ranks disagree on which collectives run: each rank's sequence instead of a
// timeline, as a chart, its key and a table with what happens and what fixes it.

import { h, s } from "../common/js/dom.js";
import { hatchDefs, patternId } from "../common/js/chart.js";
import { fmt } from "../common/js/rules.js";
import { COLORS, FONT } from "../common/js/theme.js";
import { MB, TEXT_ON, bucketEntries, colour, laneHeight, title } from "./ranks_chart_parts.js";

export function sequencesChart(state, width) {
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

export function sequenceKey(state) {
  return [
    ...bucketEntries(state).map((e) => ({ ...e, label: e.label + " (launched)" })),
    { kind: "bar", hatch: true, color: COLORS.vermillion, dash: "4 3", label: "Never launched: the rank waits forever" },
    { kind: "line", color: COLORS.vermillion, label: "Where the sequences stop matching" },
  ];
}

export function drawSequenceTable(section, titleId, state) {
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
