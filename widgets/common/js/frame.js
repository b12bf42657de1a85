// The frame every widget shares: its controls, readouts, chart with key and text
// description, data table, downloads, notices and share bar, wired to the
// server's state. A widget module supplies only what it draws (see mountWidget).
//
// Synced properties from the server: fields (once), values, errors, anchor,
// state and steady (drawn together: steady holds what few edits change),
// description, notices, share, snippets, lock. To the server: one message per
// action ({action}) or edit ({edit, text}); nothing per frame. Animation state
// lives in closures here, never in synced properties (writing model.x sends it).
// A played run's end travels with its anchor (`anchor.end`: the description and
// the parts of the state at the horizon), so the page shows the end with no
// message from the server: a notebook has no server session to send one.

import { h, linksLeaveFrame, uid } from "./dom.js";
import { exportButtons } from "./export.js";
import { fieldSet } from "./fields.js";
import { noticeList } from "./notices.js";
import { createPlayhead } from "./playhead.js";
import { readout } from "./readouts.js";
import { fmt } from "./rules.js";
import { reportHeightToHost, shareBar } from "./share.js";
import { dataTable, csvText } from "./table.js";
import { swatch } from "./chart.js";
import { followTheme } from "./theme.js";
import { timeControl } from "./time_control.js";
import CSS from "./styles.css";

const reducedMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

/**
 * The lesson's experiment button pressed last on this page, or null (the page, live or a
 * static copy, sends its experiment to the widget). Lessons sit in a shadow root on a
 * live page: the button is the first element of the click's composed path.
 */
let pressedExperiment = null;
if (!window.__olExperimentWatch) {
  window.__olExperimentWatch = true;
  document.addEventListener("click", (event) => {
    const button = event.composedPath().find((el) => el instanceof Element && el.matches("button[data-experiment]"));
    if (button) pressedExperiment = button;
  }, true);
}

/**
 * Mount a widget in `el`. `def` is the widget's own part:
 * - `name`: its route (file names of downloads);
 * - `time`: `{digits, unit}` of model time;
 * - `chartLabel`: the chart's accessible name;
 * - `layout(parts)`: `{main: [...], controls: [...], after?: [...]}` from the shared
 *   parts (`fields`, `readout(label)`, `section(title, ...nodes)`); the chart with
 *   the time control right under it (where a learner's eyes are, before a key that
 *   takes several rows on a phone) and its key follow `main`; then the `controls`
 *   (beside the chart on a wide screen, under it on a narrow one); then the
 *   description, the data table, the downloads and `after` (more readouts, a second
 *   chart), in the chart's column;
 * - `draw(ctx)`: draw the chart and live readouts for `ctx = {state, t, playing, width}`;
 *   returns the chart's SVG element;
 * - `keyEntries(state)`: the key, as `swatch` entries with labels;
 * - `csvReadouts(ctx)`: `[label, text]` rows above the CSV table;
 * - `update(state)`: anything else that follows the server's state.
 */
export function mountWidget({ model, el }, def) {
  const send = (message) => model.send_msg(message);
  const act = (action) => send({ action });
  const root = h("div", { class: "ol-widget" });
  followTheme(root);
  el.append(h("style", {}, CSS), root);

  const notices = noticeList();
  const loaded = h("p", { class: "ol-status", role: "status" });
  // After a lesson's experiment button brought the learner here: the way back to its paragraph.
  const back = h("button", { type: "button", class: "ol-button ol-back", hidden: true }, "Back to the text");
  let backTo = null; // the experiment's button
  back.addEventListener("click", () => {
    const button = backTo;
    back.hidden = true;
    if (!button || !button.isConnected) return;
    button.scrollIntoView({ behavior: reducedMotion() ? "auto" : "smooth", block: "center" });
    button.focus({ preventScroll: true });
  });
  const fields = fieldSet(model.fields, (name, text) => send({ edit: name, text }));
  const time = timeControl(act);
  const chartId = uid("chart");
  const chartHost = h("div", { class: "ol-chart", role: "img", "aria-label": def.chartLabel, id: chartId });
  const key = h("ul", { class: "ol-key", "aria-label": "Key" });
  const descriptionId = uid("description");
  const descriptionText = h("p", { "aria-live": "polite" });
  const description = h(
    "section", { class: "ol-description", "aria-labelledby": descriptionId },
    h("h3", { class: "ol-title", id: descriptionId }, "What the chart shows"),
    descriptionText,
  );
  const table = dataTable();
  let svg = null;
  /** The end of a played run once the playhead has reached it (what the anchor said), or null. */
  const endNow = () => {
    const a = model.anchor || {};
    return a.playing && a.end && !ctx.playing && ctx.t >= a.horizon ? a.end : null;
  };
  const drawnState = () => {
    const state = { ...model.steady, ...model.state };
    const end = endNow();
    return end ? { ...state, ...end.state } : state;
  };
  let ctx = { state: { ...model.steady, ...model.state }, t: 0, playing: false, width: 600, end: null };
  // The table comes from the server when first wanted (opened, or CSV asked for).
  let csvWanted = false;
  const download = () => csvText(def.csvReadouts(ctx), ctx.state.table);
  const exports = exportButtons(def.name, () => {
    if (ctx.state.table) return download();
    csvWanted = true;
    act("table");
    return null;
  }, () => svg, (deliver) => (pendingCsv = deliver));
  let pendingCsv = null;
  table.el.addEventListener("toggle", () => {
    if (table.el.open && !ctx.state.table) act("table");
  });
  const share = shareBar(act);
  const section = (title, ...nodes) =>
    h("section", { class: "ol-section", "aria-label": title }, h("h3", { class: "ol-title" }, title), ...nodes);
  const parts = {
    fields: fields.fields,
    readout,
    section,
    act,
  };
  const { main, controls, after = [] } = def.layout(parts);
  const controlsEl = h("div", { class: "ol-controls", role: "group", "aria-label": "Settings" }, ...controls);
  // A class round may lock the settings: inert (no focus, no input, for keyboards and
  // screen readers too), with the reason said above them.
  const lockNote = h("p", { class: "ol-lock-note", role: "status" });
  const showLock = () => {
    lockNote.textContent = model.lock || "";
    lockNote.hidden = !model.lock;
    controlsEl.inert = Boolean(model.lock);
  };
  root.append(
    notices.el,
    h("div", { class: "ol-loaded" }, loaded, back),
    // The settings come right after the chart in reading and Tab order, so on a phone they
    // sit under it, not a few screens down; on a wide screen they stand beside both.
    h("div", { class: "ol-body" },
      h("div", { class: "ol-main" }, ...main, h("figure", { class: "ol-figure" }, chartHost, time.el, key)),
      h("div", { class: "ol-controls-column" }, lockNote, controlsEl),
      h("div", { class: "ol-rest" }, description, table.el, exports, ...after)),
    share.el,
  );

  const draw = () => {
    const next = def.draw(ctx);
    if (next !== svg) {
      chartHost.replaceChildren(next);
      svg = next;
    }
  };
  const playhead = createPlayhead((t, playing) => {
    const was = ctx.playing;
    ctx = { ...ctx, t, playing };
    time.update(playing, !playing && t >= model.anchor.horizon, fmt(model.anchor.horizon, def.time));
    const end = endNow();
    if (end !== ctx.end) {
      ctx = { ...ctx, end };
      onState();
      describe();
    } else if (playing !== was) describe();
    draw();
  });
  const describe = () => {
    // While playing the text holds still (a live region that changed every frame
    // would never stop talking); paused, it is the server's description of that moment.
    const end = endNow();
    descriptionText.textContent = ctx.playing
      ? `Playing from ${fmt(model.anchor.elapsed, def.time)} to ${fmt(model.anchor.horizon, def.time)}. Pause for a description of that moment.`
      : end ? end.description : model.description;
  };
  const onState = () => {
    const state = drawnState();
    ctx = { ...ctx, state };
    key.replaceChildren(...def.keyEntries(state).map((e) => h("li", {}, swatch(e), h("span", {}, e.label))));
    if (state.table) {
      table.update(state.table);
      if (csvWanted && pendingCsv) {
        csvWanted = false;
        pendingCsv(download());
      }
    }
    if (def.update) def.update(state);
  };
  const resize = new ResizeObserver(() => {
    const width = Math.floor(chartHost.getBoundingClientRect().width);
    if (width > 0 && width !== ctx.width) {
      ctx = { ...ctx, width };
      draw();
    }
  });

  onState();
  fields.update(model.values, model.errors);
  notices.update(model.notices);
  const showLoaded = () => {
    loaded.textContent = model.message.text || "";
    loaded.hidden = !model.message.text;
    if (!model.message.text) back.hidden = true;
  };
  showLoaded();
  // An experiment loaded from a lesson: bring the widget into view, gently if allowed, with
  // a way back to the button's paragraph.
  const loadedHere = () => {
    showLoaded();
    if (!model.message.text) return;
    backTo = pressedExperiment;
    back.hidden = !backTo;
    root.scrollIntoView({ behavior: reducedMotion() ? "auto" : "smooth", block: "start" });
  };

  share.update(model.share, model.snippets);
  showLock();
  describe();
  playhead.sync(model.anchor);
  resize.observe(chartHost);
  reportHeightToHost();
  linksLeaveFrame(root);
  // A static copy's page around its widgets ("Open the live lab", the lesson's links), once.
  const ownPage = document.querySelector("main.ol-page");
  if (ownPage && !ownPage.dataset.olLinks) {
    ownPage.dataset.olLinks = "watched";
    linksLeaveFrame(ownPage);
  }

  // One message may change both state and steady, each its own change event:
  // draw once, after both, never from half of each.
  let statePending = false;
  model.on(["state", "steady"], () => {
    if (statePending) return;
    statePending = true;
    queueMicrotask(() => {
      statePending = false;
      onState();
      draw();
    });
  });
  model.on(["values", "errors"], () => fields.update(model.values, model.errors));
  model.on("anchor", () => playhead.sync(model.anchor));
  model.on("description", describe);
  model.on("notices", () => notices.update(model.notices));
  model.on("message", loadedHere);
  model.on("lock", showLock);
  model.on(["share", "snippets"], () => share.update(model.share, model.snippets));
  model.on("remove", () => {
    playhead.stop();
    resize.disconnect();
  });
  return { fields: fields.fields, playhead };
}
