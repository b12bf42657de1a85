// Reset, Play (Pause while playing) and Step: the one time control. Each press is
// one message to the server, which answers with the clock's new anchor.

import { h } from "./dom.js";

/** `{el, update(playing, atEnd)}`; `act(name)` sends "reset", "play", "pause" or "step". */
export function timeControl(act) {
  const reset = h("button", { type: "button", class: "ol-button" }, "Reset");
  const play = h("button", { type: "button", class: "ol-button ol-primary" }, "Play");
  const step = h("button", { type: "button", class: "ol-button" }, "Step");
  const note = h("p", { class: "ol-hint ol-end-note", role: "status" });
  let playing = false;
  reset.addEventListener("click", () => act("reset"));
  play.addEventListener("click", () => act(playing ? "pause" : "play"));
  step.addEventListener("click", () => act("step"));
  const el = h("div", { class: "ol-time" }, h("div", { class: "ol-buttons", role: "group", "aria-label": "Run" }, reset, play, step), note);
  return {
    el,
    update(isPlaying, atEnd, horizonText) {
      playing = isPlaying;
      play.textContent = isPlaying ? "Pause" : "Play";
      step.disabled = atEnd && !isPlaying;
      note.textContent = atEnd && !isPlaying
        ? `The run ended at ${horizonText}. Play replays it from the start; Reset starts a fresh run.`
        : "";
    },
  };
}
