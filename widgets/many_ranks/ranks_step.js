// The many-ranks step: every drawn rank's backward and the link, one lane each, with each
// bucket's events as markers of distinct shapes revealed up to the playhead, and its key.
// Before the playhead reaches them, bars are drawn faint (the step's shape) and event
// markers not at all; the key shows each mark exactly as it is drawn.

import { s } from "../common/js/dom.js";
import { chartFrame, hatchDefs, marker, patternId, playheadLine } from "../common/js/chart.js";
import { revealPoints, revealSpans } from "../common/js/rules.js";
import { COLORS } from "../common/js/theme.js";
import { TEXT_ON, bucketEntries, colour, laneHeight, title } from "./ranks_chart_parts.js";

const FAINT = 0.2; // the opacity of a bar not reached yet
const IDLE_HATCH = COLORS.muted;
const OPTIMIZER = "#bdbdbd";
const OPTIMIZER_EDGE = "#8c959f";

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

/** Every bar and marker of the step, placed once; `reveal(t)` draws what the playhead reached. */
export function stepChart(state, width) {
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

export function stepKey(state) {
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
