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
// live lab, and the shown state is kept. A widget's own page reads its address
// (`?preset=Latency-bound&layers_per_bucket=2`) as a live page does: it shows the
// recorded state those settings give, and names at its control each key and
// value the copy does not hold. No module imports: it is copied as is.
//
// On a page our server serves first as a file (app/pages/first_page.py), `server` is
// given: every edit, upload and button the states do not answer goes to
// `server.need(msg)`, which opens a live session for the page (live_source.js), and
// the share bar links to the server (`server.share(query)`).

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
 * A model over one widget's exported states: `widget = {name, title, fields, keys,
 * settings, records, configurations, notes, start}`; `live` is the live lab's address,
 * or ""; `search` is the page's query string (`?key=value&…`) to start from, or "";
 * `server`, on a page a server sent, is `{need(msg), share(query)}` (see above).
 */
export function staticModel(widget, live = "", search = "", server = null) {
  const listeners = new Map();
  const model = { fields: widget.fields };
  let index = widget.start;
  // What the page's address asked for that the copy cannot show: kept above the widget.
  let addressNotices = [];
  let wall0 = performance.now();
  let endTimer = null;
  let revision = 0;
  // Once a live session answers for the page, this copy's timer must not draw again.
  let detached = false;

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
    out.notices = [...(r.notices || []), ...addressNotices];
    if (server) {
      out.share = server.share(r.query || "");
      return out;
    }
    // An upload needs the server: the control says so at once, not after the files are read.
    if (out.upload) out.upload = { ...out.upload, status: uploadNote(), error: "" };
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
    endTimer = setTimeout(() => detached || moment(record().moments.length - 1), Math.max(0, ms));
  };

  const link = () => (live ? `${live}/${widget.name}${record().query ? `?${record().query}` : ""}` : "");
  const uploadNote = () => `This copy has no server: uploading a trace needs the live lab${live ? ` (${live}/${widget.name})` : ""}.`;
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

  /**
   * The recorded state whose controls read `want` (texts by field name) and otherwise
   * as in record `base`, or -1.
   */
  const matching = (base, want) => {
    const from = widget.records[base].values;
    return widget.records.findIndex((r) =>
      widget.fields.every((f) => (f.name in want ? sameValue(r.values[f.name], want[f.name]) : r.values[f.name] === from[f.name])),
    );
  };

  /**
   * Where the page's address leads, as a live page reads it: the last value of each key,
   * a named configuration (preset, scenario, trace) first, then every other setting; an
   * empty value keeps the setting. `{index, errors, notices}`: the recorded state with
   * as many of the asked settings as the copy holds together, each setting it does not
   * hold said at its control, each unknown key in the notices above the widget.
   */
  const fromAddress = (query) => {
    const asked = new Map();
    for (const [k, v] of new URLSearchParams(query)) {
      asked.delete(k);
      asked.set(k, v);
    }
    const names = new Set(widget.fields.map((f) => f.name));
    const errors = {};
    const notices = [];
    const want = {};
    let base = widget.start;
    const notHeld = (k, v) => {
      const shown = (i) => widget.records[i].values[k];
      return {
        text: `This copy has no server: open the live lab for ${k}=${v.slice(0, 40)} from this page's address (this copy shows ${k}=${shown(index)}).`,
        ...(live ? { href: `${live}/${widget.name}?${query.replace(/^\?/, "")}`, link: "Open the live lab" } : {}),
      };
    };
    for (const [k, v] of asked) {
      if ((widget.page_keys || []).includes(k)) continue; // the page's own (its theme)
      else if (!(widget.keys || []).includes(k)) notices.push(`Ignored unknown setting “${k.slice(0, 40)}” (known: ${(widget.settings || []).join(", ")}).`);
      else if (v.trim() === "") continue;
      else if (k in widget.configurations) {
        const chosen = widget.configurations[k][v.trim()];
        if (chosen === undefined) errors[k] = k;
        else base = chosen;
      } else want[k] = v;
    }
    let found = Object.keys(want).length ? matching(base, want) : base;
    if (found < 0) {
      // Not held together: keep each setting that is held with those kept before it.
      const held = {};
      for (const [k, v] of Object.entries(want)) {
        if (matching(base, { ...held, [k]: v }) >= 0) held[k] = v;
        else errors[k] = k;
      }
      found = Object.keys(held).length ? matching(base, held) : base;
    }
    index = found;
    for (const k of Object.keys(errors)) {
      if (names.has(k)) {
        errors[k] = notHeld(k, asked.get(k));
        // Also where a learner looks first: the setting may be a screen away on a phone.
        const label = widget.fields.find((f) => f.name === k).label;
        notices.push(`This copy does not hold ${k}=${asked.get(k).slice(0, 40)} from this page's address: see the setting “${label}”.`);
      } else {
        notices.push(notHeld(k, asked.get(k)).text);
        delete errors[k];
      }
    }
    return { errors, notices };
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
    if (found === undefined) {
      if (server) server.need({ experiment: number });
      return;
    }
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
    const answered = CLOCK_ACTIONS.has(action) || action === "table" || action === "unembed";
    if (server && !answered) server.need(msg);
    else if (Array.isArray(msg.upload_files)) {
      // Said again on every try (its count changes), so "Checking …" never stays.
      const u = model.upload || {};
      set({ upload: { ...u, status: "", error: uploadNote(), n: (u.n || 0) + 1 } });
    } else if (action === "reset") load(record().reset ?? index, { errors: {}, message: {} });
    else if (action === "play") play();
    else if (action === "pause" || action === "step") {
      const t = now();
      const k = momentAt(t);
      const last = record().moments.length - 1;
      // A served page's Pause stops at the next recorded moment, so time never runs back
      // (a copy's stops at the last one passed, as the recorded words say).
      const between = k < last && (k < 0 ? 0 : { ...record().anchor, ...record().moments[k].anchor }.elapsed) < t - 1e-9;
      moment(action === "step" || (server && between) ? Math.min(k + 1, last) : k);
    } else if (typeof msg.edit === "string" && typeof msg.text === "string") edit(msg.edit, msg.text);
    else if (!CLOCK_ACTIONS.has(action) && !QUIET_ACTIONS.has(action)) {
      const note = `This copy has no server: open the live lab${live ? ` (${link()})` : ""} for that button.`;
      set({ notices: [...model.notices.filter((n) => !n.startsWith("This copy")), note] });
    }
  };
  model.experiment = experiment;
  /** Model time shown now, and whether it is playing (where a live session takes over). */
  model.clock = () => ({ at: now(), playing: Boolean(model.anchor.playing) && now() < model.anchor.horizon });
  /** Stop answering: a live session now does (the end-of-run timer is stopped). */
  model.detach = () => {
    detached = true;
    stopTimer();
  };
  /** The shown state's settings as a URL query (`preset=Latency-bound&layers_per_bucket=2`). */
  model.query = () => record().query || "";
  // A page around the copy (a class round) sets what it owns, such as the lock.
  model.update = set;
  const asked = search && search !== "?" ? fromAddress(search) : { errors: {}, notices: [] };
  addressNotices = asked.notices;
  const r = record();
  Object.assign(model, stateOf(r), { anchor: anchor(r.anchor), message: {}, errors: asked.errors });
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

/**
 * States fetched as bytes: gzipped JSON as written, or JSON when the host sent the file
 * with `Content-Encoding: gzip` and the browser already unpacked it.
 */
export async function statesFrom(bytes) {
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return inflate(bytes);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new Error("states.json.gz holds neither gzip nor JSON");
  }
}

/** The page's states: inlined as base64 (`#ol-states`), or fetched beside the page. */
export async function pageStates(doc = document) {
  const inline = doc.getElementById("ol-states");
  if (inline) return unpack(inline.textContent);
  const response = await fetch("states.json.gz");
  if (!response.ok) throw new Error(`states.json.gz: ${response.status} ${response.statusText}`.trim());
  return statesFrom(new Uint8Array(await response.arrayBuffer()));
}

/** Say in a widget's slot that it could not be shown, and why (never a blank page). */
function failed(slot, what, error) {
  const why = error && error.message ? error.message : String(error);
  const p = slot.ownerDocument.createElement("p");
  p.className = "ol-load-error";
  p.setAttribute("role", "alert");
  // Inline: the page's styles do not reach into a widget's shadow root.
  p.style.cssText = "border:1px solid #b3261e;border-radius:6px;padding:12px 16px;color:#8c1d18;background:#fdf2f2;font:16px/1.5 system-ui,sans-serif";
  p.textContent =
    `This widget could not be shown: ${what} (${why}). ` +
    "Reload the page; if this stays, copy the export's whole folder to the host again.";
  (slot.shadowRoot || slot).replaceChildren(p);
}

/**
 * On a widget's own page the address follows the settings shown, as on a live page: a
 * copy's address is a link to what is on screen (a state the copy holds).
 */
function followAddress(model, win) {
  model.on("values", () => {
    const url = new URL(win.location.href);
    // The page's own keys (its theme, noted by the page's theme script) stay in the address.
    const page = win.document.documentElement.dataset.olPageQuery || "";
    const both = [model.query(), page].filter(Boolean).join("&");
    url.search = both ? `?${both}` : "";
    if (url.href === win.location.href) return;
    try {
      win.history.replaceState(win.history.state, "", url.href);
    } catch {
      // A browser that keeps a file's address as it is: the page works the same.
    }
  });
}

/**
 * Mount every widget slot of the page (`[data-widget=i]`) with its bundle's `render`
 * (`renders[name]`) over its static model, and wire the lesson's experiment buttons.
 */
export async function mountPage(renders, doc = document) {
  const slots = Array.from(doc.querySelectorAll("[data-widget]"));
  let page;
  try {
    page = await pageStates(doc);
  } catch (error) {
    for (const slot of slots) failed(slot, "its states did not load", error);
    return [];
  }
  // A widget's own page starts from its address's settings; a lesson from its own.
  const search = page.address ? (doc.defaultView || window).location.search : "";
  const models = [];
  for (const slot of slots) {
    const i = Number(slot.dataset.widget);
    try {
      models[i] = staticModel(page.widgets[i], page.live, search);
      renders[page.widgets[i].name]({ model: models[i], el: slot.attachShadow({ mode: "open" }) });
    } catch (error) {
      failed(slot, "its states are not what this page expects", error);
    }
  }
  if (page.address && models[0]) followAddress(models[0], doc.defaultView || window);
  doc.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-experiment]");
    if (!button) return;
    const number = Number(button.dataset.experiment);
    const target = page.experiments[number];
    if (target !== undefined && models[target]) models[target].experiment(number);
  });
  return models;
}
