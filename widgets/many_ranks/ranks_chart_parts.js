// What the many-ranks charts share: the units, a bucket's colour and the text on it, a
// wrapped title, a lane's height and the key's bucket entries.

import { s } from "../common/js/dom.js";
import { CATEGORY, COLORS } from "../common/js/theme.js";

export const MS = { digits: 2, unit: "ms" };
export const MB = { digits: 1, unit: "MB" };
export const TEXT_ON = { [COLORS.blue]: "#ffffff", [COLORS.vermillion]: "#ffffff", [COLORS.green]: "#ffffff" };

export const colour = (bucket) => CATEGORY[bucket % CATEGORY.length];

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
export function title(text, left, width) {
  const lines = wrap(text, Math.max(20, Math.floor((width - left - 10) / 7.6)));
  const node = s("text", { x: left, y: 18, "font-size": 14, fill: COLORS.ink, "font-weight": 600 },
    ...lines.map((line, i) => s("tspan", { x: left, dy: i === 0 ? 0 : 17 }, line)));
  return { node, height: 12 + 17 * lines.length };
}

export function laneHeight(width) {
  return width < 500 ? 46 : 54;
}

export function bucketEntries(state) {
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
