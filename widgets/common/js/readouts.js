// Readouts: a visible label that is the accessible name, and a value that starts
// with its number ("4.00 s"), with an optional note under it.

import { h, uid } from "./dom.js";

/**
 * `{el, set(value, note, tone)}`; tone is "good", "off" or "" (a coloured edge, never
 * alone). A `wide` readout holds a formula or a sentence rather than one number.
 */
export function readout(label, { wide = false } = {}) {
  const id = uid("readout");
  const value = h("output", { class: "ol-value", "aria-labelledby": id });
  const note = h("span", { class: "ol-note" });
  const base = wide ? "ol-readout ol-wide" : "ol-readout";
  const el = h("div", { class: base }, h("span", { class: "ol-label", id }, label), value, note);
  let last = null;
  return {
    el,
    set(text, noteText = "", tone = "") {
      const key = `${text}\u0000${noteText}\u0000${tone}`;
      if (key === last) return; // frames that change nothing touch nothing
      last = key;
      value.textContent = text;
      note.textContent = noteText;
      note.hidden = !noteText;
      el.className = base + (tone ? ` ol-${tone}` : "");
    },
  };
}
