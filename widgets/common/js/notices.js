// What a page ignored (bad URL keys) or wants the learner to know, where they look first.

import { h } from "./dom.js";

/** `{el, update(notices)}`: a live list of notices, hidden when empty. */
export function noticeList() {
  const el = h("div", { class: "ol-notices", role: "status", "aria-label": "Notices" });
  return {
    el,
    update(notices) {
      el.replaceChildren(...notices.map((n) => h("div", { class: "ol-notice" }, n)));
      el.hidden = notices.length === 0;
    },
  };
}
