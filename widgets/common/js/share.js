// Copy link and Embed: a link to the current settings (the server writes it on
// every edit), and the iframe and script-tag snippets (written by the server
// only while Embed is open). The iframe snippet sizes itself: the page reports
// its height to the course page, and the snippet's few lines apply it.

import { h, uid } from "./dom.js";

/** The share bar: `{el, update(share, snippets)}`; `act("embed" | "unembed")` opens or closes Embed. */
export function shareBar(act) {
  const linkId = uid("link");
  const link = h("input", { id: linkId, type: "text", readonly: true, class: "ol-link" });
  const copy = h("button", { type: "button", class: "ol-button" }, "Copy link");
  const status = h("div", { class: "ol-hint", role: "status", "aria-live": "polite" });
  const embed = h("button", { type: "button", class: "ol-button", "aria-pressed": "false", "aria-expanded": "false" }, "Embed");
  const iframeId = uid("iframe");
  const scriptId = uid("script");
  const iframe = h("textarea", { id: iframeId, readonly: true, rows: 5 });
  const script = h("textarea", { id: scriptId, readonly: true, rows: 6 });
  const panel = h(
    "div", { class: "ol-embed", hidden: true, id: uid("embed") },
    h("p", { class: "ol-hint" }, "Paste one of these into a course page. Start the server with --allow-websocket-origin set to the course site's host."),
    h("label", { for: iframeId }, "Iframe snippet"), iframe,
    h("label", { for: scriptId }, "Script tag snippet"), script,
  );
  embed.setAttribute("aria-controls", panel.id);
  copy.addEventListener("click", () => {
    const done = (message) => (status.textContent = message);
    link.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(link.value).then(() => done("Link copied."), () => done("Select the link above and copy it."));
    } else {
      done("Select the link above and copy it.");
    }
  });
  embed.addEventListener("click", () => act(panel.hidden ? "embed" : "unembed"));
  const el = h(
    "section", { class: "ol-share", "aria-label": "Share" },
    h("h3", { class: "ol-title" }, "Share"),
    h("div", { class: "ol-share-row" },
      h("div", { class: "ol-field ol-grow" }, h("label", { for: linkId }, "Link to these settings"), link),
      h("div", { class: "ol-buttons" }, copy, embed)),
    status,
    panel,
  );
  return {
    el,
    update(share, snippets) {
      el.hidden = !share.link;
      link.value = share.link || "";
      // On the widget's own page the address bar is always a link to what is on screen.
      if (share.own_page) {
        const url = new URL(window.location.href);
        url.search = withPageKeys(share.query);
        if (url.href !== window.location.href) window.history.replaceState(window.history.state, "", url.href);
      }
      const open = Boolean(snippets.iframe);
      panel.hidden = !open;
      embed.setAttribute("aria-pressed", String(open));
      embed.setAttribute("aria-expanded", String(open));
      iframe.value = snippets.iframe || "";
      script.value = snippets.script || "";
    },
  };
}

/**
 * A widget's query with the page's own keys its address had (`theme=dark`, noted on
 * `<html data-ol-page-query>` by the page's theme script), so a reload keeps them: `?…` or "".
 */
export function withPageKeys(query, doc = document) {
  const page = doc.documentElement.dataset.olPageQuery || "";
  const both = [query, page].filter(Boolean).join("&");
  return both ? `?${both}` : "";
}

/** Tell a course page that frames this page how tall it is (once per page). */
export function reportHeightToHost() {
  if (window.parent === window || window.__olHeightReporter) return;
  window.__olHeightReporter = true;
  // The page's own content (the served template holds it in <main>): the document
  // element itself is as tall as the frame, whatever the page holds.
  const content = document.querySelector("main") || document.body;
  let last = 0;
  const post = () => {
    const height = Math.ceil(content.getBoundingClientRect().bottom + window.scrollY);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: "overlap-lab:height", height }, "*");
  };
  new ResizeObserver(post).observe(content);
  post();
}
