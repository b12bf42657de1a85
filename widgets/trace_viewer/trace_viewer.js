// The real-trace viewer as the page draws it: each rank's layers and all-reduces as
// measured (solid, revealed by the playhead) with the model's prediction beside them
// (hatched, the lower half of each row), where the exposed tail starts, the step's
// numbers in the order they happen, what the run was (and, for torch.profiler files, what a
// profile cannot show), the fit, who defined each bucket's readiness, the machine, a
// what-if bucket cap, and the upload of a trace file or profiler files of one's own.

import { h, show } from "../common/js/dom.js";
import { mountWidget } from "../common/js/frame.js";
import { fmt } from "../common/js/rules.js";
import CSS from "./trace_viewer.css";
import { chartKey, drawChart } from "./trace_chart.js";
import {
  WHAT_IF_ORDER, definingNote, drawDefining, drawFit, drawMachine, drawPeerWaits, drawQuantities, drawRun, drawWhatIf,
} from "./trace_sections.js";
import { MS, PCT, plain } from "./trace_units.js";
import { uploadControl } from "./trace_upload.js";

const TAIL_NOTE =
  "The exposed tail is the communication left after the last gradient is ready on any rank: " +
  "communication end − last gradient ready (0 if the all-reduces finished first). Backward returns " +
  "only after both, once DDP has finished its buckets; the step then runs the optimizer.";
const MEDIAN_NOTE =
  "Each number is its own median over the iterations, so the tail need not be exactly the " +
  "difference of the two medians above it. Choose one iteration (Iteration 1 or more) to see them add up.";
const NO_MODEL = "no model: it could not be fitted to this trace";
// NCCL's collectives block until every rank has called them (NCCL documentation,
// "Collective Operations"); HolisticTraceAnalysis calls this time a straggler wait.
const PEER_NOTE =
  "An all-reduce kernel starts when its own GPU reaches it, then spins until every rank's kernel " +
  "has started: nothing moves before the last rank joins. The peer wait is that spin, from this " +
  "rank's kernel start to the last rank's, summed over the buckets. It counts as all-reduce time, " +
  "but it is neither transfer nor overlap. Read from the profiles of every rank, on one clock.";

export function render({ model, el }) {
  const r = {};
  const specs = model.fields; // the objects the fields were drawn from (their hints follow the server)
  const { fields: frameFields } = mountWidget({ model, el }, {
    name: "trace",
    time: MS,
    chartLabel: "Each rank's layers and all-reduces, measured and model",

    layout(p) {
      const f = p.fields;
      r.elapsed = p.readout("Elapsed time");
      r.worst = p.readout("Largest model error");
      r.source = h("p", { class: "ol-hint tv-source" });
      r.q = {};
      r.qGrid = h("div", { class: "tv-pairs" });
      r.tailNote = h("p", { class: "tv-note" }, TAIL_NOTE);
      r.medianNote = h("p", { class: "ol-hint" }, MEDIAN_NOTE);
      r.run = h("div", { class: "tv-run" });
      r.machine = h("div", { class: "tv-machine" });
      r.defining = h("div", { class: "ol-table-scroll" });
      r.definingNote = h("p", { class: "tv-note" });
      r.peerWaits = h("div", { class: "ol-table-scroll" });
      r.peerSection = p.section("How long each rank's all-reduces waited for their peers",
        h("p", { class: "tv-note" }, PEER_NOTE), r.peerWaits);
      r.fitText = h("p", { class: "tv-note" });
      r.fit = h("div", { class: "ol-table-scroll" });
      r.whatIfText = h("p", { class: "tv-note" });
      r.whatIfTerms = h("div", { class: "ol-table-scroll" });
      r.whatIf = {};
      r.whatIfGrid = h("div", { class: "tv-pairs" });
      for (const q of WHAT_IF_ORDER) {
        r.whatIf[q] = p.readout("");
        r.whatIfGrid.append(r.whatIf[q].el);
      }
      r.upload = uploadControl(model);
      return {
        main: [r.source, h("div", { class: "ol-readouts" }, r.elapsed.el, r.worst.el)],
        after: [
          p.section("Measured and model, in the order of the step", r.tailNote, r.qGrid, r.medianNote),
          p.section("What this run was", r.run),
          p.section("Where this trace was recorded", r.machine),
          p.section("Which rank defined each bucket's readiness", r.definingNote, r.defining),
          r.peerSection,
          p.section("The fitted model", r.fitText, r.fit),
          p.section("What if the bucket cap were different?", r.whatIfText, r.whatIfTerms, r.whatIfGrid),
        ],
        controls: [
          p.section("Trace", f.trace.el, r.upload.el, f.iteration.el),
          p.section("What if", f.what_if_cap_mb.el),
        ],
      };
    },

    update(state) {
      r.source.textContent = state.source;
      if (state.has_model) {
        const worst = state.quantities[state.largest_error];
        const name = state.names[state.largest_error];
        r.worst.set(
          fmt(worst.error_pct, PCT, true),
          `${name}: model ${fmt(worst.model, MS)}, measured ${fmt(worst.measured, MS)}`,
          Math.abs(worst.error_pct) > 10 ? "off" : "",
        );
      } else {
        r.worst.set(fmt(null, PCT), NO_MODEL);
      }
      drawQuantities(r, state);
      show(r.medianNote, state.median);
      drawRun(r.run, state.run);
      drawMachine(r.machine, state.machine);
      r.definingNote.textContent = definingNote(state);
      drawDefining(r.defining, state);
      show(r.peerSection, !!state.peer_waits);
      drawPeerWaits(r.peerWaits, state);
      drawFit(r, state);
      drawWhatIf(r, state.what_if, state.fit);
    },

    draw(ctx) {
      // Paused, t is the server's elapsed time (the anchor); playing, the page's own clock.
      r.elapsed.set(fmt(ctx.t, MS), "from the last rank's backward start");
      return drawChart(ctx);
    },

    keyEntries: chartKey,

    csvReadouts({ state, t }) {
      const rows = [["Elapsed time", fmt(t, MS)]];
      if (state.has_model) {
        const worst = state.quantities[state.largest_error];
        rows.push(["Largest model error", `${fmt(worst.error_pct, PCT, true)} (${state.names[state.largest_error]})`]);
      } else {
        rows.push(["Largest model error", `${fmt(null, PCT)} (${NO_MODEL})`]);
      }
      for (const q of state.order) {
        rows.push([`${state.names[q]}, measured`, fmt(state.quantities[q].measured, MS)]);
        rows.push([`${state.names[q]}, model`, fmt(state.quantities[q].model, MS)]);
      }
      const w = state.what_if;
      if (w) for (const q of WHAT_IF_ORDER) rows.push([`${state.names[q]}, model at ${plain(w.cap_mb)} MiB`, fmt(w.predicted[q], MS)]);
      return rows;
    },
  });
  el.append(h("style", {}, CSS));

  // The server re-sends the fields when the trace's iteration count changes: their help follows.
  model.on("fields", () => {
    for (const next of model.fields) {
      const old = specs.find((o) => o.name === next.name);
      if (old) Object.assign(old, next);
    }
    for (const [name, f] of Object.entries(frameFields)) f.update(model.values[name], model.errors[name]);
  });
}
