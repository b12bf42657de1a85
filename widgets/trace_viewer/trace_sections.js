// The sections under the trace viewer's chart: the step's numbers in the order they happen,
// what the run was, the machine, who defined each bucket's readiness, the fit and the
// what-if bucket cap.

import { h, show } from "../common/js/dom.js";
import { readout } from "../common/js/readouts.js";
import { fmt } from "../common/js/rules.js";
import { MS, PCT, plain } from "./trace_units.js";

const QUANTITY_NOTES = {
  compute_end_ms: "the exposed tail starts",
  communication_end_ms: "the last all-reduce ends",
  exposed_tail_ms: "communication end − last gradient ready",
  backward_return_ms: "DDP lets backward return",
  step_ms: "forward start to the last optimizer end",
};
export const WHAT_IF_ORDER = ["communication_end_ms", "exposed_tail_ms", "backward_return_ms", "step_ms"];

// The readout grid of the step is built once per set of quantities, then only updated.
// Without a model (it could not be fitted) only the measured readouts are drawn.
export function drawQuantities(r, state) {
  const order = `${state.order.join()} ${state.has_model}`;
  if (r.qOrder !== order) {
    r.qOrder = order;
    r.q = {};
    const cells = [];
    for (const q of state.order) {
      r.q[q] = { measured: readout(`${state.names[q]}, measured`), model: state.has_model ? readout(`${state.names[q]}, model`) : null };
      cells.push(r.q[q].measured.el);
      if (r.q[q].model) cells.push(r.q[q].model.el);
    }
    r.qGrid.replaceChildren(...cells);
  }
  for (const q of state.order) {
    const v = state.quantities[q];
    const worst = q === state.largest_error;
    r.q[q].measured.set(fmt(v.measured, MS), `${state.title.toLowerCase()}: ${QUANTITY_NOTES[q]}`);
    if (!state.has_model) continue;
    r.q[q].model.set(
      fmt(v.model, MS),
      `${fmt(v.error_pct, PCT, true)} against the measurement${worst ? " (the largest error)" : ""}`,
      v.error_pct !== null && Math.abs(v.error_pct) > 10 ? "off" : "",
    );
  }
}

export function drawRun(el, run) {
  const parts = [h("p", {}, h("strong", {}, "The run: "), run.description)];
  if (run.cannot_know) parts.push(h("p", { class: "tv-cannot" }, run.cannot_know));
  el.replaceChildren(...parts);
}

const EFFECTS = {
  shared:
    "The ranks' compute and gloo's all-reduces share these cores, so they slow each other down " +
    "(contention): backward is slower while a transfer runs, and a transfer is slower while backward " +
    "runs. Overlap hides less than the diagrams suggest, and a busier overlap can be slower.",
  roomy: "There are enough cores for compute and communication to run side by side, so they interfere little.",
  device:
    "On a GPU the all-reduce kernels run beside backward's kernels and take some of the GPU's compute " +
    "units and memory bandwidth while they run, so backward can be slower under a transfer (contention), " +
    "far less than on shared CPU cores.",
  unknown:
    "The file does not say how many CPU cores the run had. Where compute and gloo's all-reduces share " +
    "the cores, they slow each other down (contention); the fitted contention says how much they did here.",
};

export function drawMachine(el, m) {
  let busy = "";
  if (m.load_low !== null) {
    const [low, high] = [m.load_low, m.load_high].map((v) => (100 * v).toFixed(0));
    busy = ` Other processes kept ${low === high ? `${low} %` : `${low}–${high} %`} of the cores busy during these iterations.`;
  }
  const effect = EFFECTS[m.effect] || (m.shares_cores ? EFFECTS.shared : EFFECTS.roomy);
  el.replaceChildren(
    h("p", {}, h("strong", {}, "Recorded on: "), `${m.summary} (${m.model}).${busy}`),
    h("p", {}, h("strong", {}, "What that does to overlap: "), effect),
  );
}

function table(head, rows, caption) {
  return h(
    "table", { class: "tv-table" },
    caption ? h("caption", {}, caption) : null,
    h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, row.map((v, i) => (i === 0 ? h("th", { scope: "row" }, v) : h("td", {}, v)))))),
  );
}

// On a GPU trace the defining rank is the one whose gradients were ready last on the
// device (the host runs ahead of it); on a CPU trace, the one that issued last.
export function definingNote(state) {
  return state.defined_on_device
    ? "The rank whose gradients for a bucket were ready last on the GPU: every other rank's all-reduce waited for it. (Which host issued last says little: hosts run ahead of their GPUs.)"
    : "The rank that issued a bucket's all-reduce last: every other rank waited for it.";
}

export function drawDefining(el, state) {
  const n = state.n_iterations;
  const what = state.defined_on_device ? "Ready last" : "Issued last";
  const shown = `${what}, ${state.median ? "median iteration" : "this iteration"}`;
  const who = state.ranks.map((lane) => lane.run_rank);
  const rows = state.defining.map((d) => [
    String(d.bucket),
    String(d.parameters),
    d.mib == null ? "size unknown" : String(Number(d.mib.toPrecision(3))),
    `Rank ${d.rank}`,
    d.counts.map((c, k) => `rank ${who[k]}: ${c}`).join(", ") + ` of ${n}`,
  ]);
  // A soft hyphen lets the longest heading break on a phone instead of widening the table.
  const head = ["Bucket", "Param\u00ADeters", "MiB", shown, `${what}, in the ${n} iterations`];
  el.replaceChildren(table(head, rows));
}

// Each rank's peer wait: how long its all-reduce kernels spun, already started, until the
// last rank's kernel of the bucket started (only a profile of every rank holds it).
export function drawPeerWaits(el, state) {
  const waits = state.peer_waits;
  if (!waits) {
    el.replaceChildren();
    return;
  }
  const when = state.median ? "median iteration" : "this iteration";
  const rows = waits.map((w) => [
    `Rank ${w.rank}`,
    fmt(w.wait_ms, MS),
    fmt(w.allreduce_ms, MS),
    w.allreduce_ms > 0 ? fmt((100 * w.wait_ms) / w.allreduce_ms, PCT) : "—",
  ]);
  const head = ["Rank", `Peer wait (${when})`, "All-reduce kernels ran", "Share spent waiting"];
  el.replaceChildren(table(head, rows));
}

export function drawFit(r, state) {
  const f = state.fit;
  if (f.error) {
    r.fitText.textContent = f.caveat;
    r.fit.replaceChildren();
    return;
  }
  let source;
  if (f.fitted_on_self) {
    source = `fitted on this trace itself (${f.iterations_used} iterations): its parameters differ from the shipped traces', so this is a fit, not a prediction`;
  } else {
    source = `fitted on ${f.sources.join(", ")} (${f.iterations_used} iterations), ` +
      (f.includes_shown ? "which include the trace shown" : "not on the trace shown: what is drawn is a prediction");
  }
  r.fitText.textContent = `The schedule model, ${source}. ${f.caveat}`;
  const r2 = (v) => (v === null ? "—" : v.toFixed(2).replace("-", "\u2212"));
  const c2 = (v) => v.toFixed(2);
  const rows = [
    ["Backward, all layers", fmt(f.backward_total_ms, MS), "at normal speed"],
    ["Per-transfer overhead", fmt(f.overhead_ms, MS), ""],
    ["Bandwidth", `${f.bandwidth_gbps.toFixed(2)} GB/s`, ""],
    ["Contention, backward", c2(f.contention), "slows by 1 + c while a transfer runs"],
    ["Contention by rank", f.rank_contention.map(c2).join(" / "), "each iteration's most slowed rank first"],
    ["Contention, transfers", c2(f.transfer_contention), "slows by 1 + c while any rank computes"],
    ["Backward fit quality", `R² ${r2(f.backward_quality.r2)}`, `RMS ${fmt(f.backward_quality.rms_ms, MS)} over ${f.backward_quality.samples} intervals`],
    ["Transfer fit quality", `R² ${r2(f.transfer_quality.r2)}`, `RMS ${fmt(f.transfer_quality.rms_ms, MS)} over ${f.transfer_quality.samples} transfers`],
  ];
  r.fit.replaceChildren(table(["Fitted", "Value", "Meaning"], rows));
}

export function drawWhatIf(r, w, fit) {
  show(r.whatIfGrid, Boolean(w));
  if (!w) {
    r.whatIfText.textContent = `No prediction: the model could not be fitted to this trace (${fit.error}).`;
    r.whatIfTerms.replaceChildren();
    return;
  }
  const cap = plain(w.cap_mb);
  const beside = w.measured
    ? `Measured beside it: ${w.measured_name}, recorded with that layout (medians).`
    : "No shipped trace has this layout: record one to check the prediction.";
  let vouch = w.refusal ? ` The fit cannot vouch for this layout: ${w.refusal}.` : "";
  if (w.one_layout) {
    const n = w.terms.length;
    const fitted = w.terms.filter((t) => t.fitted).length;
    vouch += ` The model was fitted on this trace's one bucket layout: from it, ${fitted} of the model's ${n} terms ` +
      (fitted < n
        ? `could be fitted and ${n - fitted} could not (the table says which, and why). The prediction takes the terms it could not fit as they stand, so it is only as good as they are.`
        : "could all be fitted (the table says from what).");
  }
  r.whatIfText.textContent = `At ${cap} MiB DDP makes ${w.layout}. ${beside}${vouch}`;
  r.whatIfTerms.replaceChildren(
    ...(w.one_layout
      ? [table(["Term", "Fitted from this one layout?", "From what, or why not"],
          w.terms.map((t) => [t.label, t.fitted ? "Yes" : "No", t.why]),
          "What one bucket layout could fit")]
      : []),
  );
  const names = { communication_end_ms: "Communication end", exposed_tail_ms: "Exposed tail", backward_return_ms: "Backward return", step_ms: "Step" };
  for (const q of WHAT_IF_ORDER) {
    const card = r.whatIf[q];
    card.el.querySelector(".ol-label").textContent = `${names[q]}, model at ${cap} MiB`;
    card.set(fmt(w.predicted[q], MS), w.measured ? `measured ${fmt(w.measured[q], MS)} (median)` : "no trace of this cap recorded");
  }
}
