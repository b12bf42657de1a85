// The trace viewer's upload control: one overlap-lab trace or torch.profiler files, read
// and checked here before one message carries them to the server.

import { h, show, uid } from "../common/js/dom.js";

const bytes = (n) => n.toLocaleString("en-US");
/** `a`, `a and b`, `a, b and c`. */
const listing = (items) => (items.length <= 2 ? items.join(" and ") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`);
const ACCEPT = ".json,.gz,application/json,application/gzip";

/** Bytes as base64, in pieces (one `String.fromCharCode` call per 32 KiB). */
function toBase64(data) {
  let text = "";
  for (let i = 0; i < data.length; i += 0x8000) text += String.fromCharCode.apply(null, data.subarray(i, i + 0x8000));
  return btoa(text);
}

/**
 * A native file input labelled "Upload a trace or profiler files" that takes several files at
 * once: one overlap-lab trace, or torch.profiler files (one per rank, .json or .json.gz).
 * The files' bytes are read here and sent in base64 in one message; too many files, an
 * empty one, or more bytes than the limit (which keeps the message within the server's
 * websocket limit) are refused here, before sending, with the message at the control. The
 * server checks again, unpacks, reads the files as data and answers through `model.upload`.
 */
export function uploadControl(model) {
  const id = uid("upload");
  const hintId = `${id}-hint`;
  const messageId = `${id}-message`;
  const limits = () => model.upload || {};
  const mib = (n) => Math.round((n || 0) / (1024 * 1024));
  const hint = h("div", { id: hintId, class: "ol-hint" });
  const input = h("input", {
    id, type: "file", multiple: true, accept: ACCEPT, class: "tv-file", "aria-describedby": `${hintId} ${messageId}`,
  });
  const message = h("div", { id: messageId, class: "ol-hint", "aria-live": "polite" });
  const back = h("button", { type: "button", class: "ol-button" }, "Show the shipped trace again");
  back.addEventListener("click", () => model.send_msg({ action: "shipped" }));

  const say = (text, kind) => {
    message.textContent = text;
    message.className = kind === "error" ? "ol-error" : "ol-hint";
    if (kind === "error") message.setAttribute("role", "alert");
    else if (kind === "status") message.setAttribute("role", "status");
    else message.removeAttribute("role");
    if (kind === "error") input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  };
  const refuse = (why) => say(`Not loaded: ${why}. The trace shown is unchanged.`, "error");

  input.addEventListener("change", async () => {
    const files = Array.from(input.files || []);
    input.value = ""; // the same files chosen again are read again
    if (!files.length) return;
    const u = limits();
    const names = files.map((f) => f.name.slice(0, 80));
    const what = files.length === 1 ? names[0] : `${files.length} files`;
    if (files.length > u.max_files) return refuse(`${files.length} files; an upload takes at most ${u.max_files} (one per rank)`);
    const empty = files.findIndex((f) => f.size === 0);
    if (empty >= 0) return refuse(`${names[empty]} is empty (0 bytes)`);
    const total = files.reduce((sum, f) => sum + f.size, 0);
    if (total > u.max_bytes) {
      return refuse(
        `${what}: ${bytes(total)} bytes is more than the ${bytes(u.max_bytes)}-byte limit (${mib(u.max_bytes)} MiB) ` +
          "of an upload here; import larger profiles with `overlap-lab import` and upload the trace it writes",
      );
    }
    say(`Reading ${listing(names)}…`, "status");
    let sent;
    try {
      sent = await Promise.all(
        files.map(async (f, i) => ({ name: names[i], size: f.size, base64: toBase64(new Uint8Array(await f.arrayBuffer())) })),
      );
    } catch {
      return refuse(`${listing(names)} could not be read`);
    }
    if (sent.reduce((sum, f) => sum + f.base64.length, 0) > u.max_message_bytes) {
      return refuse(`${what}: more than the ${mib(u.max_bytes)} MiB limit of an upload here`);
    }
    say(`Checking ${listing(names)}…`, "status");
    model.send_msg({ upload_files: sent });
  });

  const update = () => {
    const u = limits();
    hint.textContent =
      `One trace file written by overlap-lab (.json), or torch.profiler files, one per rank, chosen together ` +
      `(.json or .json.gz): at most ${mib(u.max_bytes)} MiB together, ${mib(u.max_unpacked_bytes)} MiB unpacked. ` +
      "Read as data and checked, never run.";
    if (u.error) say(u.error, "error");
    else if (u.status) say(u.status, "status");
    else say("", "");
    show(back, Boolean(u.shown));
  };
  model.on("upload", update);
  update();
  const el = h(
    "div", { class: "ol-field tv-upload" },
    h("label", { for: id }, "Upload a trace or profiler files"),
    hint,
    input,
    message,
    h("div", { class: "ol-buttons" }, back),
  );
  return { el };
}
