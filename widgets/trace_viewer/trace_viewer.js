// The real-trace viewer as the page draws it: each rank's layers and all-reduces as
// measured (solid, revealed by the playhead) with the model's prediction beside them
// (hatched, the lower half of each row), where the exposed tail starts, the step's
// numbers in the order they happen, what the run was (and, for torch.profiler files, what a
// profile cannot show), the fit, who defined each bucket's readiness, the machine, a
// what-if bucket cap, and the upload of a trace file or profiler files of one's own.

import { h, s, show, uid } from "../common/js/dom.js";
import { chartFrame, hatchDefs, marker, patternId, playheadLine } from "../common/js/chart.js";
import { mountWidget } from "../common/js/frame.js";
import { readout } from "../common/js/readouts.js";
import { fmt, revealPoints } from "../common/js/rules.js";
import { CATEGORY, COLORS } from "../common/js/theme.js";
import CSS from "./trace_viewer.css";

const MS = { digits: 2, unit: "ms" };
const PCT = { digits: 1, unit: "%" };
const OPTIMIZER = "#424a53";
const TAIL = COLORS.ink;
const TAIL_NOTE =
  "The exposed tail is the communication left after the last gradient is ready on any rank: " +
  "communication end − last gradient ready (0 if the all-reduces finished first). Backward returns " +
  "only after both, once DDP has finished its buckets; the step then runs the optimizer.";
const MEDIAN_NOTE =
  "Each number is its own median over the iterations, so the tail need not be exactly the " +
  "difference of the two medians above it. Choose one iteration (Iteration 1 or more) to see them add up.";
const QUANTITY_NOTES = {
  compute_end_ms: "the exposed tail starts",
  communication_end_ms: "the last all-reduce ends",
  exposed_tail_ms: "communication end − last gradient ready",
  backward_return_ms: "DDP lets backward return",
  step_ms: "forward start to the last optimizer end",
};
const WHAT_IF_ORDER = ["communication_end_ms", "exposed_tail_ms", "backward_return_ms", "step_ms"];

const colour = (b) => CATEGORY[((b % CATEGORY.length) + CATEGORY.length) % CATEGORY.length];
/** A number as Python's `{:g}` writes a cap (20, 20.5). */
const plain = (v) => String(Number(v.toPrecision(6)));
/** A colour mixed with white: the opaque tint of a bar the playhead has not reached. */
function tint(hex, share = 0.66) {
  const n = parseInt(hex.slice(1), 16);
  const mix = (c) => Math.round(c + (255 - c) * share);
  const [r, g, b] = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map(mix);
  return `#${((1 << 24) | (r << 16) | (g << 8) | b).toString(16).slice(1)}`;
}
const bytes = (n) => n.toLocaleString("en-US");
/** `a`, `a and b`, `a, b and c`. */
const listing = (items) => (items.length <= 2 ? items.join(" and ") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`);
const NO_MODEL = "no model: it could not be fitted to this trace";

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
          p.section("Which rank defined each bucket's readiness",
            h("p", { class: "tv-note" }, "The rank that issued a bucket's all-reduce last: every other rank waited for it."),
            r.defining),
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
      drawDefining(r.defining, state);
      drawFit(r, state);
      drawWhatIf(r, state.what_if, state.fit);
    },

    draw(ctx) {
      // Paused, t is the server's elapsed time (the anchor); playing, the page's own clock.
      r.elapsed.set(fmt(ctx.t, MS), "from the last rank's backward start");
      return drawChart(ctx);
    },

    keyEntries(state) {
      const model = state.has_model;
      const buckets = state.n_buckets <= CATEGORY.length
        ? Array.from({ length: state.n_buckets }, (_, b) => ({ kind: "bar", color: colour(b), stroke: "#ffffff", label: `Bucket ${b}` }))
        : [{ kind: "bar", color: colour(0), stroke: "#ffffff", label: `Buckets 0 to ${state.n_buckets - 1}: colours repeat every ${CATEGORY.length}` }];
      return [
        ...buckets,
        { kind: "bar", color: OPTIMIZER, stroke: "#ffffff", label: "Optimizer" },
        model
          ? { kind: "bar", color: colour(0), stroke: "#ffffff", label: "Measured (solid, upper half of a row)" }
          : { kind: "bar", color: colour(0), stroke: "#ffffff", label: "Measured (solid; no model: it could not be fitted)" },
        model ? { kind: "bar", color: colour(0), hatch: true, hatchWidth: 2, label: "Model (hatched, lower half)" } : null,
        { kind: "bar", color: tint(colour(0)), stroke: "#ffffff", label: "Measured, not yet reached by the playhead (tinted)" },
        { kind: "marker", shape: "inverted-triangle", color: COLORS.ink, label: "Bucket ready on this rank" },
        { kind: "marker", shape: "circle", color: "none", stroke: COLORS.ink, strokeWidth: 2, label: "Issued last: defined the bucket's readiness" },
        { kind: "marker", shape: "diamond", color: COLORS.ink, label: "Backward returned" },
        { kind: "line", color: TAIL, dash: "5 3", label: "Last gradient ready: the exposed tail starts" },
        { kind: "bar", color: TAIL, label: "Exposed tail, measured" },
        model ? { kind: "bar", color: TAIL, hatch: true, hatchWidth: 2, label: "Exposed tail, model" } : null,
        { kind: "playhead", label: "Playhead" },
      ].filter(Boolean);
    },

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

  // The readout grid of the step is built once per set of quantities, then only updated.
  // Without a model (it could not be fitted) only the measured readouts are drawn.
  function drawQuantities(r, state) {
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
}

// --- the chart ---------------------------------------------------------------------------------

function drawChart({ state, t, width }) {
  const narrow = width < 560;
  const lanes = [];
  for (const lane of state.ranks) lanes.push(`Rank ${lane.run_rank} layers`, `Rank ${lane.run_rank} all-reduces`);
  const laneHeight = narrow ? 54 : 62;
  const top = 62;
  const height = top + laneHeight * lanes.length + 44;
  const frame = chartFrame({
    width, height,
    title: narrow || !state.has_model ? state.title : `${state.title}: measured and model`,
    x: { domain: state.x_domain, label: narrow ? "Time (ms from the last backward start)" : "Time (ms from the last rank's backward start)" },
    y: { lanes: narrow ? lanes.map(() => "") : lanes },
    margin: narrow ? { top, left: 84 } : { top },
  });
  const { svg, plot } = frame;
  if (narrow) {
    // Two lines per lane label on a phone: "Rank 0" above "layers".
    lanes.forEach((name, i) => {
      const mid = frame.band(i).mid;
      const [who, what] = [name.split(" ").slice(0, 2).join(" "), name.split(" ").slice(2).join(" ")];
      svg.append(s("text", { x: frame.left - 8, y: mid - 3, "text-anchor": "end", "font-size": 12, fill: COLORS.ink, "font-weight": 600 }, who));
      svg.append(s("text", { x: frame.left - 8, y: mid + 12, "text-anchor": "end", "font-size": 12, fill: COLORS.ink }, what));
    });
  }
  // One hatch per colour in use: the model's bars (and the model's tail).
  const hatches = new Map();
  const hatch = (color) => {
    if (!hatches.has(color)) {
      const id = patternId("tv");
      hatches.set(color, id);
      svg.append(hatchDefs(id, color, 45, "#ffffff", 2));
    }
    return `url(#${hatches.get(color)})`;
  };
  const x = frame.x;
  const rect = (a, b, y0, hgt, attrs) => s("rect", { x: x(a), y: y0, width: Math.max(1, x(b) - x(a)), height: hgt, ...attrs });
  const rows = (i) => {
    const band = frame.band(i);
    // Without a model the measurement takes the whole row.
    const measured = state.has_model ? band.height * 0.56 : band.height;
    return { measured: [band.top, measured], model: [band.top + measured + 3, band.height - measured - 3], band };
  };
  // A measured bar: tinted where the playhead has not reached, solid where it has (both opaque).
  const measuredBar = (a, b, [y0, hgt], color) => {
    plot.append(rect(a, b, y0, hgt, { fill: tint(color), stroke: "#ffffff", "stroke-width": 1, "data-layer": "not-reached" }));
    if (a < t) plot.append(rect(a, Math.min(b, t), y0, hgt, { fill: color, stroke: "#ffffff", "stroke-width": 1 }));
  };
  const modelBar = (a, b, [y0, hgt], color) =>
    plot.append(rect(a, b, y0, hgt, { fill: hatch(color), stroke: color, "stroke-width": 1.2 }));

  state.ranks.forEach((lane, k) => {
    const compute = rows(2 * k);
    const comm = rows(2 * k + 1);
    const m = lane.model;
    lane.layers.start.forEach((a, p) => measuredBar(a, lane.layers.end[p], compute.measured, colour(lane.layers.bucket[p])));
    measuredBar(lane.optimizer[0], lane.optimizer[1], compute.measured, OPTIMIZER);
    lane.comm.start.forEach((a, b) => measuredBar(a, lane.comm.end[b], comm.measured, colour(b)));
    if (m) {
      m.layers.start.forEach((a, p) => modelBar(a, m.layers.end[p], compute.model, colour(m.layers.bucket[p])));
      modelBar(m.optimizer[0], m.optimizer[1], compute.model, OPTIMIZER);
      m.comm.start.forEach((a, b) => modelBar(a, m.comm.end[b], comm.model, colour(b)));
    }
    // Events as measured, shown once the playhead reaches them.
    for (const b of revealPoints(lane.comm.ready, t)) {
      plot.append(marker("inverted-triangle", x(lane.comm.ready[b]), comm.band.top - 1, 10, COLORS.ink));
    }
    for (const b of revealPoints(lane.comm.issue, t)) {
      if (!lane.comm.defines[b]) continue;
      const [y0, hgt] = comm.measured;
      plot.append(marker("circle", x(lane.comm.issue[b]), y0 + hgt / 2, 16, "none", COLORS.ink, 2));
    }
    if (lane.backward_return <= t) {
      const [y0, hgt] = compute.measured;
      plot.append(marker("diamond", x(lane.backward_return), y0 + hgt / 2, 12, COLORS.ink));
    }
  });

  // The exposed tail: from the last gradient ready (a line through every lane) to the
  // communication end, measured (solid) above the model (hatched).
  const q = state.quantities;
  const tailRow = (y, a, b, fill, label) => {
    svg.append(s("text", { x: frame.left - 8, y: y + 8, "text-anchor": "end", "font-size": 12, fill: COLORS.ink }, label));
    if (b > a) svg.append(rect(a, b, y, 9, { fill, stroke: TAIL, "stroke-width": 1 }));
    else svg.append(s("line", { x1: x(a), x2: x(a), y1: y, y2: y + 9, stroke: TAIL, "stroke-width": 2 }));
  };
  const measuredTail = [q.compute_end_ms.measured, Math.max(q.compute_end_ms.measured, q.communication_end_ms.measured)];
  tailRow(28, ...measuredTail, TAIL, narrow ? "Tail" : "Tail, measured");
  if (state.has_model) {
    const modelTail = [q.compute_end_ms.model, Math.max(q.compute_end_ms.model, q.communication_end_ms.model)];
    tailRow(42, ...modelTail, hatch(TAIL), "Tail, model");
  }
  plot.append(s("line", {
    x1: x(measuredTail[0]), x2: x(measuredTail[0]), y1: frame.top - 6, y2: frame.bottom,
    stroke: TAIL, "stroke-width": 1.5, "stroke-dasharray": "5 3",
  }));
  svg.append(playheadLine(frame, t));
  return svg;
}

// --- the sections under the chart ----------------------------------------------------------

function drawRun(el, run) {
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

function drawMachine(el, m) {
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

function drawDefining(el, state) {
  const n = state.n_iterations;
  const shown = state.median ? "Issued last, median iteration" : "Issued last, this iteration";
  const who = state.ranks.map((lane) => lane.run_rank);
  const rows = state.defining.map((d) => [
    String(d.bucket),
    String(d.parameters),
    d.mib == null ? "size unknown" : String(Number(d.mib.toPrecision(3))),
    `Rank ${d.rank}`,
    d.counts.map((c, k) => `rank ${who[k]}: ${c}`).join(", ") + ` of ${n}`,
  ]);
  el.replaceChildren(table(["Bucket", "Parameters", "MiB", shown, `Issued last, in the ${n} iterations`], rows));
}

function drawFit(r, state) {
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
  const r2 = (v) => (v === null ? "—" : v.toFixed(2));
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

function drawWhatIf(r, w, fit) {
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

// --- the upload ------------------------------------------------------------------------------

const ACCEPT = ".json,.gz,application/json,application/gzip";

/** Bytes as base64, in pieces (one `String.fromCharCode` call per 32 KiB). */
function toBase64(data) {
  let text = "";
  for (let i = 0; i < data.length; i += 0x8000) text += String.fromCharCode.apply(null, data.subarray(i, i + 0x8000));
  return btoa(text);
}

/**
 * A native file input labelled "Upload a trace or profiler files" that takes several files at
 * once: one overlap-lab trace, or torch.profiler files (one per rank, .json or .json.gz).
 * The files' bytes are read here and sent in base64 in one message; too many files, an
 * empty one, or more bytes than the limit (which keeps the message within the server's
 * websocket limit) are refused here, before sending, with the message at the control. The
 * server checks again, unpacks, reads the files as data and answers through `model.upload`.
 */
function uploadControl(model) {
  const id = uid("upload");
  const hintId = `${id}-hint`;
  const messageId = `${id}-message`;
  const limits = () => model.upload || {};
  const mib = (n) => Math.round((n || 0) / (1024 * 1024));
  const hint = h("div", { id: hintId, class: "ol-hint" });
  const input = h("input", {
    id, type: "file", multiple: true, accept: ACCEPT, class: "tv-file", "aria-describedby": `${hintId} ${messageId}`,
  });
  const message = h("div", { id: messageId, class: "ol-hint", "aria-live": "polite" });
  const back = h("button", { type: "button", class: "ol-button" }, "Show the shipped trace again");
  back.addEventListener("click", () => model.send_msg({ action: "shipped" }));

  const say = (text, kind) => {
    message.textContent = text;
    message.className = kind === "error" ? "ol-error" : "ol-hint";
    if (kind === "error") message.setAttribute("role", "alert");
    else if (kind === "status") message.setAttribute("role", "status");
    else message.removeAttribute("role");
    if (kind === "error") input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  };
  const refuse = (why) => say(`Not loaded: ${why}. The trace shown is unchanged.`, "error");

  input.addEventListener("change", async () => {
    const files = Array.from(input.files || []);
    input.value = ""; // the same files chosen again are read again
    if (!files.length) return;
    const u = limits();
    const names = files.map((f) => f.name.slice(0, 80));
    const what = files.length === 1 ? names[0] : `${files.length} files`;
    if (files.length > u.max_files) return refuse(`${files.length} files; an upload takes at most ${u.max_files} (one per rank)`);
    const empty = files.findIndex((f) => f.size === 0);
    if (empty >= 0) return refuse(`${names[empty]} is empty (0 bytes)`);
    const total = files.reduce((sum, f) => sum + f.size, 0);
    if (total > u.max_bytes) {
      return refuse(
        `${what}: ${bytes(total)} bytes is more than the ${bytes(u.max_bytes)}-byte limit (${mib(u.max_bytes)} MiB) ` +
          "of an upload here; import larger profiles with `overlap-lab import` and upload the trace it writes",
      );
    }
    say(`Reading ${listing(names)}…`, "status");
    let sent;
    try {
      sent = await Promise.all(
        files.map(async (f, i) => ({ name: names[i], size: f.size, base64: toBase64(new Uint8Array(await f.arrayBuffer())) })),
      );
    } catch {
      return refuse(`${listing(names)} could not be read`);
    }
    if (sent.reduce((sum, f) => sum + f.base64.length, 0) > u.max_message_bytes) {
      return refuse(`${what}: more than the ${mib(u.max_bytes)} MiB limit of an upload here`);
    }
    say(`Checking ${listing(names)}…`, "status");
    model.send_msg({ upload_files: sent });
  });

  const update = () => {
    const u = limits();
    hint.textContent =
      `One trace file written by overlap-lab (.json), or torch.profiler files, one per rank, chosen together ` +
      `(.json or .json.gz): at most ${mib(u.max_bytes)} MiB together, ${mib(u.max_unpacked_bytes)} MiB unpacked. ` +
      "Read as data and checked, never run.";
    if (u.error) say(u.error, "error");
    else if (u.status) say(u.status, "status");
    else say("", "");
    show(back, Boolean(u.shown));
  };
  model.on("upload", update);
  update();
  const el = h(
    "div", { class: "ol-field tv-upload" },
    h("label", { for: id }, "Upload a trace or profiler files"),
    hint,
    input,
    message,
    h("div", { class: "ol-buttons" }, back),
  );
  return { el };
}
