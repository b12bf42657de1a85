// A widget's state source without a server: an object with the same synced
// properties a live component has (model.x, model.on(names, cb), model.send_msg),
// answering the page's messages from the states the Python model computed when
// the course was exported (app/export). The same bundle draws over it.
//
// Reset, Play, Pause and Step run here from the anchor, as the playhead already
// does; a paused copy shows the moment the export recorded for the last Step
// passed (the server's readouts and words for that time). An edit, a named
// configuration or an experiment switches to its recorded state; anything the
// export does not hold is said at the control that asked, with a link to the
// live lab, and the shown state is kept. No module imports: it is copied as is.

const CLOCK_ACTIONS = new Set(["reset", "play", "pause", "step"]);
const QUIET_ACTIONS = new Set(["table", "embed", "unembed"]);
/** Slack (ms) after a run's end before the end's moment is shown, as the server's timer. */
const END_SLACK_MS = 20;

/** Two control texts name the same value ("4" and "4.0"). */
function sameValue(a, b) {
  if (a === b) return true;
  const x = String(a ?? "").trim();
  const y = String(b ?? "").trim();
  if (x === "" || y === "") return x === y;
  const nx = Number(x);
  return Number.isFinite(nx) && nx === Number(y);
}

/**
 * A model over one widget's exported states: `widget = {name, title, fields, records,
 * configurations, notes, start}`; `live` is the live lab's address, or "".
 */
export function staticModel(widget, live = "") {
  const listeners = new Map();
  const model = { fields: widget.fields };
  let index = widget.start;
  let wall0 = performance.now();
  let endTimer = null;
  let revision = 0;

  const record = () => widget.records[index];
  const now = () => {
    const a = model.anchor;
    if (!a.playing) return a.elapsed;
    return Math.min(a.horizon, a.elapsed + (a.speed * (performance.now() - wall0)) / 1000);
  };

  /** Set properties, then tell each listener once per changed property, as Bokeh does. */
  const set = (changes) => {
    const changed = [];
    for (const [name, value] of Object.entries(changes)) {
      if (JSON.stringify(model[name]) === JSON.stringify(value)) continue;
      model[name] = value;
      changed.push(name);
    }
    if ("anchor" in changes) wall0 = performance.now();
    for (const name of changed) for (const cb of listeners.get(name) || []) cb();
  };

  const stateOf = (r) => {
    const out = {};
    for (const [k, v] of Object.entries(r)) {
      if (!["query", "moments", "experiments", "message", "reset"].includes(k)) out[k] = v;
    }
    return out;
  };
  const anchor = (a) => ({ ...a, revision: ++revision });

  /** Show a recorded state at its start (Reset), keeping what `extra` says. */
  const load = (i, extra = {}) => {
    index = i;
    stopTimer();
    const r = record();
    set({ ...stateOf(r), anchor: anchor(r.anchor), ...extra });
  };

  /** Show moment `k` of the current state (-1: its start), paused. */
  const moment = (k) => {
    stopTimer();
    const r = record();
    const m = k < 0 ? {} : r.moments[k];
    set({
      state: m.state ?? r.state,
      steady: m.steady ?? r.steady,
      description: m.description ?? r.description,
      anchor: anchor({ ...r.anchor, ...(m.anchor || {}), playing: false }),
    });
  };

  /** The last recorded moment at or before model time `t` (-1: the start). */
  const momentAt = (t) => {
    const ms = record().moments;
    let k = -1;
    for (let i = 0; i < ms.length; i++) {
      const e = { ...record().anchor, ...ms[i].anchor }.elapsed;
      if (e <= t + 1e-9) k = i;
    }
    return k;
  };

  const stopTimer = () => {
    if (endTimer !== null) clearTimeout(endTimer);
    endTimer = null;
  };

  const play = () => {
    let t = now();
    if (t >= model.anchor.horizon) {
      moment(-1);
      t = 0;
    }
    stopTimer();
    set({ anchor: anchor({ ...model.anchor, elapsed: t, playing: true }) });
    const ms = ((model.anchor.horizon - t) / model.anchor.speed) * 1000 + END_SLACK_MS;
    endTimer = setTimeout(() => moment(record().moments.length - 1), Math.max(0, ms));
  };

  const link = () => (live ? `${live}/${widget.name}${record().query ? `?${record().query}` : ""}` : "");
  const noServer = (what) => ({
    text: `This copy has no server: open the live lab to change ${what}.`,
    ...(live ? { href: link(), link: "Open the live lab" } : {}),
  });

  /** The recorded state an edit of `name` to `text` leads to, or undefined. */
  const target = (name, text) => {
    const values = record().values;
    const found = widget.records.findIndex(
      (r) =>
        sameValue(r.values[name], text) &&
        Object.keys(values).every((k) => k === name || r.values[k] === values[k]),
    );
    if (found >= 0) return found;
    const chosen = (widget.configurations[name] || {})[String(text).trim()];
    return chosen;
  };

  const edit = (name, text) => {
    const spec = widget.fields.find((f) => f.name === name);
    const errors = { ...model.errors };
    delete errors[name];
    if (sameValue(model.values[name], text)) {
      set({ errors });
      return;
    }
    const found = target(name, text);
    if (found === undefined) {
      set({ errors: { ...errors, [name]: noServer(`${spec.label.toLowerCase()} to “${String(text).slice(0, 40)}”`) } });
      return;
    }
    const midRun = now() > 0;
    load(found, {
      errors: midRun
        ? { [name]: { text: "This copy has no server: with this setting the run starts again from 0." } }
        : {},
    });
  };

  const experiment = (number) => {
    // A state reached by Reset or an edit may not have recorded the experiments: the
    // widget's start did (an experiment loads every setting it names, then resets).
    const found = record().experiments[String(number)] ?? widget.records[widget.start].experiments[String(number)];
    if (found === undefined) return;
    load(found, { errors: {}, message: { text: widget.notes[number], n: (model.message.n || 0) + 1 } });
  };

  model.on = (names, cb) => {
    for (const name of [].concat(names)) {
      if (!listeners.has(name)) listeners.set(name, []);
      listeners.get(name).push(cb);
    }
  };
  model.send_msg = (msg) => {
    if (!msg || typeof msg !== "object") return;
    const action = msg.action;
    if (action === "reset") load(record().reset ?? index, { errors: {}, message: {} });
    else if (action === "play") play();
    else if (action === "pause" || action === "step") {
      const k = momentAt(now());
      moment(action === "step" ? Math.min(k + 1, record().moments.length - 1) : k);
    } else if (typeof msg.edit === "string" && typeof msg.text === "string") edit(msg.edit, msg.text);
    else if (!CLOCK_ACTIONS.has(action) && !QUIET_ACTIONS.has(action)) {
      const note = `This copy has no server: open the live lab${live ? ` (${link()})` : ""} for that button.`;
      set({ notices: [...model.notices.filter((n) => !n.startsWith("This copy")), note] });
    }
  };
  model.experiment = experiment;
  // A page around the copy (a class round) sets what it owns, such as the lock.
  model.update = set;
  const r = record();
  Object.assign(model, stateOf(r), { anchor: anchor(r.anchor), message: {} });
  return model;
}

/** Gunzip and parse gzipped bytes (states inlined in a page, or fetched). */
async function inflate(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

/** States sent as base64 text of gzipped JSON (inlined in a page, or posted into it). */
export async function unpack(text) {
  const bin = atob(text.trim());
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return inflate(bytes);
}

/** The page's states: inlined as base64 (`#ol-states`), or fetched beside the page. */
export async function pageStates(doc = document) {
  const inline = doc.getElementById("ol-states");
  if (inline) return unpack(inline.textContent);
  const response = await fetch("states.json.gz");
  return inflate(await response.arrayBuffer());
}

/**
 * Mount every widget slot of the page (`[data-widget=i]`) with its bundle's `render`
 * (`renders[name]`) over its static model, and wire the lesson's experiment buttons.
 */
export async function mountPage(renders, doc = document) {
  const page = await pageStates(doc);
  const models = page.widgets.map((w) => staticModel(w, page.live));
  for (const slot of doc.querySelectorAll("[data-widget]")) {
    const i = Number(slot.dataset.widget);
    const el = slot.attachShadow({ mode: "open" });
    renders[page.widgets[i].name]({ model: models[i], el });
  }
  doc.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-experiment]");
    if (!button) return;
    const number = Number(button.dataset.experiment);
    const target = page.experiments[number];
    if (target !== undefined) models[target].experiment(number);
  });
  return models;
}
