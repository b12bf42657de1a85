// A page our server sent as a file (app/pages/first_page.py), made live in place.
//
// Each widget starts over the static state source with the states the server computed
// for the page's address: reading, Play, Pause, Step, Reset, the data table and the
// downloads need nothing more. The first message those states cannot answer (an edit,
// an upload, Embed, a widget's own button, an experiment not recorded) opens a live
// session for that widget alone (app/server/live_socket.py): a websocket to the
// widget's component, built with the settings shown and placed at the moment shown.
// The same model object then answers from the server, so the widget, its scroll
// position and its focus stay as they were. A learner who focuses a control opens the
// session early, so the first edit is answered as quickly as the later ones. When the
// session cannot be opened (the server restarting), the page keeps what it shows and
// says so at the control that asked.

import { staticModel, unpack } from "./static_source.js";

/** What a page says when its session cannot be opened or was lost. */
const UNREACHABLE = "The server could not be reached, so this was not done; the page shows what it showed. Try again in a moment.";

/** True when the event's target is a setting a learner may change (a field or a choice). */
function isControl(event) {
  const el = event.composedPath()[0];
  return el instanceof Element && el.matches("input:not([type=file]):not([readonly]), select, textarea:not([readonly])");
}

/**
 * One widget's live session: `server` for its static model (`need`, `share`), and
 * `attach(model)`, `prepare()` (open early).
 */
function liveSession(entry, slot, info) {
  let model = null;
  let socket = null;
  // "static": answered by the states; "connecting"; "ready": open, not yet in use;
  // "live": answered by the server; "dropped": was live, the connection was lost.
  let phase = "static";
  let nextId = 0;
  let pending = [];
  let readyProps = null;
  let lastQuery = "";
  let openFrame = null;
  // Whether the messages waiting when the session opened were sent with its opening.
  let sentWithOpen = false;
  // Those messages, until the session is known to have opened (said where they came from
  // if it does not).
  let inFlight = [];
  // The server's anchor and when it arrived: where the live clock is now.
  let anchorAt = 0;

  const liveClock = () => {
    const a = model.anchor || {};
    if (!a.playing) return { at: a.elapsed || 0, playing: false };
    const t = Math.min(a.horizon, a.elapsed + (a.speed * (performance.now() - anchorAt)) / 1000);
    return { at: t, playing: t < a.horizon };
  };
  const clockNow = () => (phase === "static" || !readyOnce ? model.clock() : liveClock());
  let readyOnce = false;

  const address = () => {
    const url = new URL(`${info.socket}/${entry.name}`, window.location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    if (info.own_page) url.searchParams.set("own_page", "1");
    if (info.lesson) {
      url.searchParams.set("lesson", info.lesson);
      url.searchParams.set("slot", String(slot));
    }
    return url.toString();
  };
  const frame = (body) => {
    socket.send(JSON.stringify({ id: ++nextId, ...body }));
  };
  // What the page's address asked for and could not have stays said above the widget (a
  // session opened from the settings shown has not seen the address).
  const addressNotices = (entry.records[entry.start].notices || []).slice();
  const apply = (props) => {
    if (!props) return;
    if ("anchor" in props) anchorAt = performance.now();
    if (Array.isArray(props.notices)) {
      const own = props.notices.filter((n) => !addressNotices.includes(n));
      props = { ...props, notices: [...addressNotices, ...own] };
    }
    model.update(props);
  };

  /** Say at the control (or above the widget) that a message could not be sent. */
  const refuse = (items, why) => {
    const errors = { ...model.errors };
    let notices = null;
    for (const item of items) {
      const msg = item.msg || {};
      if (typeof msg.edit === "string") errors[msg.edit] = { text: why };
      else if (Array.isArray(msg.upload_files)) {
        const u = model.upload || {};
        model.update({ upload: { ...u, status: "", error: why, n: (u.n || 0) + 1 } });
      } else notices = [...(model.notices || []).filter((n) => n !== why), why];
    }
    model.update(notices ? { errors, notices } : { errors });
  };

  const fail = (why) => {
    const items = [...inFlight, ...pending];
    pending = [];
    inFlight = [];
    sentWithOpen = false;
    readyProps = null;
    socket = null;
    // A session never used (opened early, or refused) leaves the page as it was: a file.
    phase = readyOnce ? "dropped" : "static";
    if (items.length) refuse(items, why);
  };

  const open = () => {
    if (socket) return;
    const wasLive = readyOnce;
    phase = "connecting";
    openFrame = null;
    let opened = false;
    try {
      socket = new WebSocket(address());
    } catch {
      fail(UNREACHABLE);
      return;
    }
    socket.onopen = () => {
      opened = true;
      openFrame = { query: wasLive ? lastQuery : model.query(), ...clockNow() };
      frame({ open: openFrame });
      // What the learner already asked for goes right behind the opening, not a round
      // trip later: the first edit is answered in one.
      sentWithOpen = pending.length > 0;
      inFlight = pending;
      pending = [];
      for (const item of inFlight) frame(item);
    };
    const ws = socket;
    socket.onmessage = (event) => {
      // A socket given up on (refused, or closed for another) says nothing more here.
      if (socket !== ws) return;
      let reply;
      try {
        reply = JSON.parse(event.data);
      } catch {
        return;
      }
      receive(reply);
    };
    socket.onclose = () => {
      if (socket !== ws) return;
      if (phase === "live" && opened) {
        socket = null;
        phase = "dropped";
      } else if (socket) fail(UNREACHABLE);
    };
  };

  const receive = (reply) => {
    if (typeof reply.query === "string") lastQuery = reply.query;
    if (reply.error) {
      if (phase === "connecting") {
        const s = socket;
        fail(reply.error);
        if (s) s.close();
      } else refuse([{ msg: { action: "?" } }], reply.error);
      return;
    }
    if (phase === "connecting") {
      readyProps = reply.props || {};
      phase = "ready";
      if (pending.length || sentWithOpen) goLive();
      return;
    }
    if (phase === "ready") {
      readyProps = { ...readyProps, ...(reply.props || {}) };
      return;
    }
    apply(reply.props);
  };

  /** The session answers from now on: its state in, the clock where the page's is, then the queue. */
  const goLive = () => {
    const here = clockNow();
    if (!readyOnce) model.detach();
    readyOnce = true;
    phase = "live";
    const { anchor, ...rest } = readyProps || {};
    readyProps = null;
    const sent = sentWithOpen;
    sentWithOpen = false;
    inFlight = [];
    // Opened just now with the page's clock as it still is: the session's anchor is the
    // page's. Otherwise only its words and numbers come in, and the clock stays where the
    // page shows it until the session's own anchor for it arrives.
    const moved = !openFrame || Math.abs(here.at - openFrame.at) > 1e-9 || here.playing !== openFrame.playing;
    if (sent && !moved) {
      apply({ ...rest, anchor });
    } else {
      apply(rest);
      frame({ clock: here });
    }
    const queued = pending;
    pending = [];
    for (const item of queued) frame(item);
  };

  const itemOf = (msg) =>
    msg && typeof msg === "object" && Number.isInteger(msg.experiment) && Object.keys(msg).length === 1
      ? { experiment: msg.experiment }
      : { msg };

  /** A message the page's states cannot answer: send it, opening the session first if need be. */
  const need = (msg) => {
    if (phase === "live" && socket && socket.readyState === WebSocket.OPEN) {
      frame(itemOf(msg));
      return;
    }
    if (phase === "connecting" && openFrame && socket && socket.readyState === WebSocket.OPEN) {
      // Opened, its answer on the way: this goes right behind it, not a round trip later.
      const item = itemOf(msg);
      inFlight.push(item);
      sentWithOpen = true;
      frame(item);
      return;
    }
    pending.push(itemOf(msg));
    if (phase === "ready") goLive();
    else open();
  };

  const share = (query) => {
    const link = `${info.origin}/${entry.name}${query ? `?${query}` : ""}`;
    return { link, query, own_page: Boolean(info.own_page) };
  };

  return {
    server: { need, share },
    attach(m) {
      model = m;
      const answerStatic = m.send_msg;
      const answerExperiment = m.experiment;
      // Once live, every message goes to the session (the clock's too: it is the session's).
      m.send_msg = (msg) => (readyOnce ? need(msg) : answerStatic(msg));
      m.experiment = (number) => (readyOnce ? need({ experiment: number }) : answerExperiment(number));
    },
    prepare() {
      if (phase === "static") open();
    },
    get phase() {
      return phase;
    },
  };
}

/**
 * Mount every widget slot of a served page (`[data-widget=i]`) with its bundle's `render`
 * (`renders[name]`), live-ready, and wire the lesson's experiment buttons.
 */
export async function mountServed(renders, doc = document) {
  const info = JSON.parse(doc.getElementById("ol-live").textContent);
  const page = await unpack(doc.getElementById("ol-states").textContent);
  const slots = Array.from(doc.querySelectorAll("[data-widget]"));
  const models = [];
  const sessions = [];
  for (const slot of slots) {
    const i = Number(slot.dataset.widget);
    const entry = page.widgets[i];
    const session = liveSession(entry, i, info);
    const model = staticModel(entry, "", "", session.server);
    session.attach(model);
    models[i] = model;
    sessions[i] = session;
    const root = slot.attachShadow({ mode: "open" });
    renders[entry.name]({ model, el: root });
    // A learner about to change a setting: open the session now, not at Enter. Listened
    // for in the shadow root: focus moving within it never reaches the slot.
    const early = (event) => {
      if (isControl(event)) session.prepare();
    };
    root.addEventListener("focusin", early);
    root.addEventListener("pointerdown", early);
  }
  doc.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-experiment]");
    if (!button) return;
    const number = Number(button.dataset.experiment);
    const target = page.experiments[number];
    if (target !== undefined && models[target]) models[target].experiment(number);
  });
  // For tests and tools: which of the page's widgets are live.
  window.__olSessions = sessions;
  doc.documentElement.dataset.olServed = "ready";
  return models;
}
