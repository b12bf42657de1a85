// What both class pages share: the page's own data, element look-up and building, how a
// number is shown, one JSON request, and the messages and outcomes they write.

export const body = document.body;
export const prefix = body.dataset.prefix || "";
export const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

export function el(tag, attrs = {}, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}

/** A number as shown: at most four significant digits, with its unit. */
export function fmt(v, unit = "") {
  if (v === null || v === undefined) return "—";
  const text = String(Number(Number(v).toPrecision(4)));
  return unit ? `${text} ${unit}` : text;
}

export async function post(url, data) {
  const response = await fetch(url, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(data), credentials: "same-origin",
  });
  let payload = {};
  try { payload = await response.json(); } catch (e) { payload = {}; }
  return { ok: response.ok && payload.ok !== false, status: response.status, ...payload };
}

export function outcome(dl, items) {
  dl.replaceChildren(...items.map(([label, value, id]) => el("div", {}, el("dt", {}, label), el("dd", id ? { id } : {}, value))));
}

export function showMessage(node, input, text, isError) {
  node.textContent = text || "";
  node.className = isError ? "cl-error" : "cl-hint";
  if (isError) { node.setAttribute("role", "alert"); input && input.setAttribute("aria-invalid", "true"); }
  else { node.removeAttribute("role"); input && input.removeAttribute("aria-invalid"); }
}
