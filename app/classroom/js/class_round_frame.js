// The class page's side of the round's frame (its other side is round_frame.js): the
// round's widget is a file, so the phase (and at Reveal the revealed states) reach it from
// this page's stream by postMessage, never through a connection of its own; the widget
// reports its height (the frame takes it, so the page scrolls as one) and that it is
// ready to follow the round. Messages of any other origin or window are ignored.

/** The learner's frame: `load(src, title)` a round's file, `tell()` it the phase of `currentView()`. */
export function roundFrame(frame, currentView) {
  let ready = false;
  const tell = () => {
    const view = currentView();
    if (!ready || !view || !view.mode) return;
    frame.contentWindow.postMessage({ type: "overlap-lab:round", mode: view.mode, states: view.states || null }, location.origin);
  };
  addEventListener("message", (e) => {
    if (e.origin !== location.origin || e.source !== frame.contentWindow || !e.data) return;
    if (e.data.type === "overlap-lab:height") frame.style.height = `${Math.ceil(e.data.height) + 8}px`;
    else if (e.data.type === "overlap-lab:round-ready") {
      ready = true;
      tell();
    }
  });
  return {
    tell,
    load(src, title) {
      frame.dataset.base = src;
      ready = false;
      frame.src = src;
      frame.title = title;
    },
  };
}
