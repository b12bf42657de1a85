// Building DOM without a framework: elements are made once and updated in place,
// so focus, selection and typed text survive every state the server sends.

let nextId = 0;

/** A page-unique id (the shadow root is per widget, but ids must not collide in a test). */
export function uid(prefix) {
  nextId += 1;
  return `ol-${prefix}-${nextId}`;
}

/** `h("button", {type: "button", onclick: f}, "Play")`. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "text") el.textContent = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes (numbers are written with three decimals at most). */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    el.setAttribute(key, typeof value === "number" ? String(Math.round(value * 1000) / 1000) : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace an element's children. */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

/** Show or hide an element (hidden elements leave the accessibility tree too). */
export function show(el, visible) {
  el.hidden = !visible;
}

/** True when this page is shown in another page's frame (a course page's iframe). */
export function framed(win = window) {
  try {
    return win.self !== win.top;
  } catch {
    return true; // a parent on another origin may refuse even the comparison
  }
}

/** A link that leaves the page: an address to go to, not a download or this page's own anchor. */
function leavesPage(a, win) {
  if (!a.hasAttribute("href") || a.hasAttribute("download")) return false;
  const url = new URL(a.getAttribute("href"), win.location.href);
  if (!["http:", "https:", "file:"].includes(url.protocol)) return false;
  const here = new URL(win.location.href);
  return !(url.hash && url.origin === here.origin && url.pathname === here.pathname && url.search === here.search);
}

/**
 * In a framed page, every link under `root` that leaves the page (now, or added later)
 * opens in a new tab (`target="_blank" rel="noopener"`), so the learner's course page stays
 * where it was; a page on its own keeps its links as they are.
 */
export function linksLeaveFrame(root, win = window) {
  if (!framed(win)) return;
  const mark = (node) => {
    const links = node.matches && node.matches("a[href]") ? [node] : [];
    if (node.querySelectorAll) links.push(...node.querySelectorAll("a[href]"));
    for (const a of links) {
      if (!leavesPage(a, win)) continue;
      a.target = "_blank";
      a.rel = "noopener";
    }
  };
  mark(root);
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes") mark(r.target);
      else r.addedNodes.forEach(mark);
    }
  }).observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ["href"] });
}
