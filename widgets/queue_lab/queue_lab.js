// The fluid queue lab as the page draws it: rates and initial items, predictions,
// the run's queue length over time revealed up to the playhead, and its readouts.

import { h, show } from "../common/js/dom.js";
import { chartFrame, marker, playheadLine, polyline } from "../common/js/chart.js";
import { mountWidget } from "../common/js/frame.js";
import { autoscaledEnd, fmt, interp, revealPoints, revealPolyline } from "../common/js/rules.js";
import { COLORS } from "../common/js/theme.js";

const SECONDS = { digits: 2, unit: "s" };
const ITEMS = { digits: 2, unit: "items" };
const RATE = { digits: 2, unit: "items/s" };
const HEADROOM = 1.12;
const FOOT = 0.04;
const TREND = { drains: "The queue drains.", grows: "The queue grows.", constant: "The queue holds steady." };

const LIMITS =
  "What this analogy leaves out. The fluid queue only tracks average pressure: traffic arrives as a " +
  "smooth stream and the link drains it at a steady rate. A real training step has no such smoothness. " +
  "It has bucket identities (which gradients travel together), dependencies (a bucket can leave only " +
  "when its last layer is ready), a collective order every rank must follow, streams, and tensor " +
  "lifetimes. None of those appear here. Use the lab to build intuition for rates; an actual " +
  "per-bucket trace is what validates overlap.";

/** A number as Python's `{:g}` writes a rate (2, 2.5). */
const plain = (v) => String(Number(v.toPrecision(6)));

export function render({ model, el }) {
  let r = {};
  let outcome = {};
  mountWidget({ model, el }, {
    name: "queue-lab",
    time: SECONDS,
    chartLabel: "Queue length over the run",

    layout(p) {
      const f = p.fields;
      r = {
        elapsed: p.readout("Elapsed time"),
        length: p.readout("Queue length"),
        rate: p.readout("Net rate"),
        formula: p.readout("Formula", { wide: true }),
      };
      outcome = {
        drain: p.readout("Actual drain time"),
        drainPending: h("p", { class: "ol-hint" }, "Checked when the run reaches the moment the queue empties."),
        length: p.readout("Actual queue length"),
        lengthPending: h("p", { class: "ol-hint" }, "Checked when the run reaches that time."),
      };
      r.initialNote = h("p", { class: "ol-status", role: "status" });
      r.lengthQuestion = h("div", { class: "ol-section" }, f.prediction_time.el, f.predicted_length.el, outcome.length.el, outcome.lengthPending);
      return {
        main: [
          h("div", { class: "ol-readouts" }, r.elapsed.el, r.length.el, r.rate.el),
          r.formula.el,
        ],
        controls: [
          p.section("Predict, then run", f.predicted_drain_time.el, outcome.drain.el, outcome.drainPending, r.lengthQuestion),
          p.section("Rates", f.arrival.el, f.service.el, f.initial.el, r.initialNote, f.duration.el),
          h("details", { class: "ol-more" }, h("summary", {}, "What this analogy leaves out"), h("p", { class: "ol-limits" }, LIMITS)),
        ],
      };
    },

    update(state) {
      const seg = state.segment;
      r.rate.set(fmt(seg.net, RATE, true), TREND[seg.trend]);
      const sign = seg.net < 0 ? "−" : "+";
      const q0 = seg.length.toFixed(2), t0 = seg.start.toFixed(2);
      r.formula.set(
        `q(t) = max(0, ${q0} ${sign} ${Math.abs(seg.net).toFixed(2)} × (t − ${t0}))`,
        `From t = ${t0} s with ${q0} items: arrival ${plain(seg.arrival)} − service ${plain(seg.service)} items/s.`,
      );
      r.initialNote.textContent = state.initial_pending === null ? "" : `Initial items ${plain(state.initial_pending)} applies at the next Reset.`;
      show(r.initialNote, state.initial_pending !== null);
      show(r.lengthQuestion, state.ask_length);
    },

    draw({ state, t, playing, width }) {
      // Live readouts: the browser's interpolation while playing, the server's values when paused.
      const length = playing ? interp(state.run.x, state.run.y, t) : state.now.length;
      const at = playing ? t : state.now.t;
      r.elapsed.set(fmt(at, SECONDS));
      r.length.set(fmt(length, ITEMS));
      gate(outcome.drain, outcome.drainPending, state.drain_check, t, SECONDS);
      gate(outcome.length, outcome.lengthPending, state.length_check, t, ITEMS);

      const shown = revealPolyline(state.run.x, state.run.y, t);
      const predictions = [];
      const actuals = [];
      const d = state.drain_check, l = state.length_check;
      if (d) {
        predictions.push([d.predicted, 0]);
        if (d.actual !== null && t >= d.at) actuals.push([d.actual, 0]);
      }
      if (l) {
        predictions.push([l.at, l.predicted]);
        if (l.actual !== null && t >= l.at) actuals.push([l.at, l.actual]);
      }
      // Scaled to what has happened so far: a range fitted to the whole run would give
      // away how high a growing queue gets before the learner predicts it.
      const top = autoscaledEnd([...shown.y, ...predictions.map((p) => p[1]), ...actuals.map((a) => a[1])], HEADROOM);
      const height = width < 500 ? 250 : 320;
      const frame = chartFrame({
        width, height,
        title: "Queue length over the run",
        x: { domain: [0, state.horizon], label: "Time (s)" },
        y: { domain: [-FOOT * top, top], label: "Queue length (items)" },
      });
      const g = frame.plot;
      if (shown.x.length) {
        g.append(polyline(frame, shown.x, shown.y, { stroke: COLORS.blue, "stroke-width": 3 }));
        shown.x.forEach((x, i) => g.append(marker("circle", frame.x(x), frame.y(shown.y[i]), 7, COLORS.blue)));
      }
      for (const i of revealPoints(state.edits.x, t)) {
        g.append(marker("diamond", frame.x(state.edits.x[i]), frame.y(state.edits.y[i]), 13, COLORS.green));
      }
      for (const [x, y] of predictions) g.append(marker("inverted-triangle", frame.x(x), frame.y(y), 15, COLORS.vermillion));
      for (const [x, y] of actuals) g.append(marker("circle", frame.x(x), frame.y(y), 12, "#ffffff", COLORS.ink, 2.5));
      frame.svg.append(playheadLine(frame, t));
      // The queue now, above the playhead and outside the plot's clip: at t = 0 it would
      // otherwise sit half hidden under the y axis, and a new run's chart look empty.
      frame.svg.append(marker("circle", frame.x(at), frame.y(length), 12, COLORS.blue, "#ffffff", 2));
      return frame.svg;
    },

    keyEntries() {
      return [
        { kind: "line", color: COLORS.blue, shape: "circle", label: "Queue length" },
        { kind: "marker", shape: "diamond", color: COLORS.green, label: "Rate change" },
        { kind: "marker", shape: "inverted-triangle", color: COLORS.vermillion, label: "Your prediction" },
        { kind: "marker", shape: "circle", color: "#ffffff", stroke: COLORS.ink, strokeWidth: 2.5, label: "Actual (shown when reached)" },
        { kind: "playhead", label: "Playhead" },
      ];
    },

    csvReadouts({ state, t, playing }) {
      return [
        ["Elapsed time", fmt(playing ? t : state.now.t, SECONDS)],
        ["Queue length", fmt(playing ? interp(state.run.x, state.run.y, t) : state.now.length, ITEMS)],
        ["Net rate", fmt(state.segment.net, RATE, true)],
      ];
    },
  });
}

/** A prediction's outcome, shown once the run reaches the moment it is checked. */
function gate(readout, pending, check, t, spec) {
  const reached = check !== null && t >= check.at;
  show(readout.el, reached);
  show(pending, check !== null && !reached);
  if (!reached) return;
  if (check.actual === null) {
    readout.set("—", `Your prediction: ${fmt(check.predicted, spec)}. ${check.missing}`, "off");
  } else {
    const verdict = check.close ? "spot on" : `off by ${fmt(check.error, spec, true)}`;
    readout.set(fmt(check.actual, spec), `Your prediction: ${fmt(check.predicted, spec)} (${verdict}).`, check.close ? "good" : "off");
  }
}
