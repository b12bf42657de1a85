// A class round's widget in the learner's frame: the widget's bundle over the static
// state source, following the round as the class page tells it (postMessage), with no
// connection of its own. Inlined by app/classroom/round_file.py after the imports of
// `render`, `staticModel` and `unpack`.
//
// While voting the run's controls do nothing (and a hidden round holds no state to
// draw); at Reveal the class page passes the revealed states in and the run plays from
// the start; once unlocked, the learner's first edit opens the live widget (a session
// for this learner alone) with the same settings and that edit.

const CLOCK = new Set(["reset", "play", "pause", "step"]);

function mountRound(render, staticModel, unpack) {
  const data = JSON.parse(document.getElementById("ol-round").textContent);
  const host = document.getElementById("round-widget");
  const modeCss = document.getElementById("ol-mode-css").textContent;
  let mode = data.mode;
  let model = null, slot = null, send = null, full = false, leaving = false;

  const lockFor = () => (mode === "open" ? "" : data.locked);
  const style = () => {
    if (slot) slot.className = `cl-${mode}`;
    if (model) model.update({ lock: lockFor() });
  };

  const openLive = (name, text) => {
    if (leaving) return;
    leaving = true;
    const url = new URL(data.live, location.href);
    url.searchParams.set(name, text);
    location.assign(url.toString());
  };

  const mount = async (packed, isFull) => {
    const widget = await unpack(packed);
    model = staticModel(widget, "");
    model.lock = lockFor();
    send = model.send_msg;
    model.send_msg = (msg) => {
      if (!msg || typeof msg !== "object") return;
      if (typeof msg.edit === "string") {
        if (mode === "open" && typeof msg.text === "string") openLive(msg.edit, msg.text);
        return;
      }
      if (CLOCK.has(msg.action) && (mode === "hidden" || mode === "locked")) return;
      send(msg);
    };
    slot = document.createElement("div");
    const root = slot.attachShadow({ mode: "open" });
    render({ model, el: root });
    const css = document.createElement("style");
    css.textContent = modeCss;
    root.append(css);
    host.replaceChildren(slot);
    full = isFull;
    style();
  };

  const follow = async (message) => {
    const was = mode;
    mode = message.mode;
    if (message.states && !full) {
      await mount(message.states, true);
      if (was === "hidden" || was === "locked") {
        send({ action: "reset" });
        send({ action: "play" });
      }
    }
    style();
  };

  addEventListener("message", (e) => {
    if (e.origin !== location.origin || e.source !== window.parent || !e.data) return;
    if (e.data.type === "overlap-lab:round") follow(e.data);
  });

  // The frame is as tall as the widget: the class page applies the height it is told.
  const content = document.querySelector("main");
  let last = 0;
  new ResizeObserver(() => {
    const height = Math.ceil(content.getBoundingClientRect().bottom + window.scrollY);
    if (height !== last) window.parent.postMessage({ type: "overlap-lab:height", height: (last = height) }, location.origin);
  }).observe(content);

  const ready = () => window.parent.postMessage({ type: "overlap-lab:round-ready" }, location.origin);
  if (data.states) mount(data.states, mode !== "locked").then(ready);
  else ready();
}
