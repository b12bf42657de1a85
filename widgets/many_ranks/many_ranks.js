// Many ranks as the page draws it: every drawn rank's backward and the link, one
// lane each, with each bucket's events as markers of distinct shapes, revealed up
// to the playhead; the readouts; a sweep over bucket sizes; and, when ranks
// disagree on which collectives run, each rank's sequence instead of a timeline.
//
// Everything drawn comes from the server's state: the browser only places it.

import { h, show, uid } from "../common/js/dom.js";
import { swatch } from "../common/js/chart.js";
import { mountWidget } from "../common/js/frame.js";
import { fmt } from "../common/js/rules.js";
import { dataTable } from "../common/js/table.js";
import STYLE from "./many_ranks.css";
import { MS } from "./ranks_chart_parts.js";
import { drawSequenceTable, sequenceKey, sequencesChart } from "./ranks_sequences.js";
import { stepChart, stepKey } from "./ranks_step.js";
import { sweepChart, sweepKey, sweepTable } from "./ranks_sweep.js";

const SETTINGS = {
  scenario: ["scenario", "drawn_ranks", "slowdown_pct", "delay_ms", "seed"],
  buckets: ["layers_per_bucket", "iteration", "enqueue_ms", "contention"],
  hardware: ["n_layers", "backward_ms", "grad_mb", "bandwidth", "latency_ms", "algorithm", "ranks"],
  rest: ["forward_ms", "optimizer_ms"],
};

export function render({ model, el }) {
  const readouts = {};
  const ui = {};
  let makeReadout = null;
  let timeline = null; // the drawn step, kept while only the playhead moves
  let sweepDrawn = null;
  let sequencesDrawn = null;

  el.append(h("style", {}, STYLE));
  mountWidget({ model, el }, {
    name: "ranks",
    time: MS,
    chartLabel: "One training step on every drawn rank and the link",

    layout(p) {
      const f = p.fields;
      makeReadout = p.readout;
      ui.elapsed = p.readout("Elapsed time");
      ui.readoutGrid = h("div", { class: "ol-readouts rk-readouts" });
      ui.scenario = h("p", { class: "rk-scenario", role: "status" });
      ui.sequencesTitle = uid("sequences");
      ui.sequences = h("section", { class: "rk-seq ol-section", role: "region", "aria-labelledby": ui.sequencesTitle, hidden: true });
      ui.sweepHost = h("div", { class: "ol-chart", role: "img", "aria-label": "Step time and overlap by bucket size" });
      ui.sweepKey = h("ul", { class: "ol-key", "aria-label": "Key of the sweep" });
      ui.sweepTable = dataTable("The sweep's data as a table");
      ui.sweep = h("div", { class: "ol-section" },
        h("figure", { class: "ol-figure" }, ui.sweepHost, ui.sweepKey), ui.sweepTable.el);
      const pick = (names) => names.map((n) => f[n].el);
      return {
        main: [h("div", { class: "ol-readouts rk-now" }, ui.elapsed.el)],
        after: [ui.readoutGrid, ui.sequences, ui.sweep],
        controls: [
          p.section("Scenario", f.scenario.el, ui.scenario, ...pick(SETTINGS.scenario.slice(1))),
          p.section("Buckets and events", ...pick(SETTINGS.buckets)),
          p.section("Hardware", ...pick(SETTINGS.hardware)),
          p.section("Rest of the step", ...pick(SETTINGS.rest)),
        ],
      };
    },

    update(state) {
      const sc = state.scenario;
      // A live region: rewritten only when what it says changes.
      if (ui.scenario.dataset.shown !== sc.title + sc.description) {
        ui.scenario.dataset.shown = sc.title + sc.description;
        ui.scenario.replaceChildren(h("strong", {}, sc.title), sc.description);
      }
      // The readouts of this result, in the server's order; the others are hidden.
      const shown = new Set();
      for (const r of state.readouts) {
        if (!readouts[r.key]) {
          readouts[r.key] = makeReadout(r.label);
          ui.readoutGrid.append(readouts[r.key].el);
        }
        readouts[r.key].set(r.text, r.note);
        shown.add(r.key);
      }
      for (const [key, r] of Object.entries(readouts)) show(r.el, shown.has(key));
      show(ui.sequences, !state.timed);
      show(ui.sweep, state.timed);
      if (!state.timed) drawSequenceTable(ui.sequences, ui.sequencesTitle, state);
      if (state.timed) ui.sweepTable.update(sweepTable(state.sweep));
    },

    draw({ state, t, width }) {
      ui.elapsed.set(fmt(t, MS));
      if (!state.timed) {
        if (!sequencesDrawn || sequencesDrawn.state !== state || sequencesDrawn.width !== width) {
          sequencesDrawn = { state, width, svg: sequencesChart(state, width) };
        }
        return sequencesDrawn.svg;
      }
      if (!sweepDrawn || sweepDrawn.state !== state || sweepDrawn.width !== width) {
        sweepDrawn = { state, width };
        ui.sweepHost.replaceChildren(sweepChart(state, width));
        ui.sweepKey.replaceChildren(...sweepKey().map((e) => h("li", {}, swatch(e), h("span", {}, e.label))));
      }
      if (!timeline || timeline.state !== state || timeline.width !== width) {
        timeline = stepChart(state, width);
      }
      timeline.reveal(t);
      return timeline.svg;
    },

    keyEntries(state) {
      return state.timed ? stepKey(state) : sequenceKey(state);
    },

    csvReadouts({ state, t }) {
      return [
        ["Elapsed time", fmt(t, MS)],
        ...state.readouts.map((r) => [r.label, r.text]),
      ];
    },
  });
}
