// The widgets in a notebook: an anywidget module (`export default {render}`) that
// draws any of the four widgets from the kernel's synced state. It is the third
// state source the widgets' `render` draws over (after a Panel component and the
// static copy, common/js/static_source.js): reading a property is `model.get`,
// `on(names)` listens to `change:` events, `send_msg` is `model.send`. The widget is
// drawn into a shadow root, so the shared styles (`:host`, the container query)
// hold and the notebook's styles stay outside. Nothing is fetched: the bundle holds
// every script and style.
//
// A saved notebook (an HTML export, a notebook opened without its kernel) shows the
// last state it recorded; when no kernel answers, the widget says so above itself.

import { render as bucketTimeline } from "../bucket_timeline/bucket_timeline.js";
import { render as manyRanks } from "../many_ranks/many_ranks.js";
import { render as queueLab } from "../queue_lab/queue_lab.js";
import { render as traceViewer } from "../trace_viewer/trace_viewer.js";

const RENDERS = {
  "bucket-timeline": bucketTimeline,
  "queue-lab": queueLab,
  ranks: manyRanks,
  trace: traceViewer,
};

/** Every property a widget's page reads (widgets/common/component.py and the trace's upload). */
export const PROPERTIES = [
  "fields", "values", "errors", "anchor", "state", "steady", "description", "notices",
  "share", "snippets", "message", "lock", "upload",
];

/** How long the page waits for the kernel's answer before saying none is running (ms). */
export const KERNEL_WAIT_MS = 4000;

/**
 * The object a widget's `render` draws over, on an anywidget model: the same synced
 * properties and messages as a live component's. `off()` removes every listener.
 */
export function notebookSource(model) {
  const listeners = [];
  const removed = [];
  const source = {
    on(names, cb) {
      for (const name of [].concat(names)) {
        if (name === "remove") {
          removed.push(cb);
          continue;
        }
        const handler = () => cb();
        model.on(`change:${name}`, handler);
        listeners.push([`change:${name}`, handler]);
      }
    },
    send_msg(message) {
      try {
        model.send(message);
      } catch {
        // A saved notebook has no kernel to send to: the notice above the widget says so.
      }
    },
    off() {
      for (const [event, handler] of listeners) model.off(event, handler);
      for (const cb of removed) cb();
    },
  };
  for (const name of PROPERTIES) {
    Object.defineProperty(source, name, {
      enumerable: true,
      get: () => {
        const value = model.get(name);
        return value === undefined || value === null ? defaultOf(name) : value;
      },
      set: (value) => {
        model.set(name, value);
        model.save_changes();
      },
    });
  }
  return source;
}

function defaultOf(name) {
  return ["fields", "notices"].includes(name) ? [] : name === "description" || name === "lock" ? "" : {};
}

/** A line above the widget saying that no kernel answers (a saved copy). */
function snapshotNote(el, live) {
  const p = document.createElement("p");
  p.className = "ol-snapshot-note";
  p.setAttribute("role", "status");
  // Inline: it must read the same in any notebook's theme.
  p.style.cssText =
    "margin:0 0 8px;border:1px solid #8a6d00;border-radius:6px;padding:8px 12px;" +
    "color:#3d3000;background:#fff8d6;font:15px/1.5 system-ui,sans-serif";
  p.append(
    "This is a snapshot of the widget saved with the notebook: no Python kernel is running, " +
      "so its buttons and settings do nothing. Run the notebook in Jupyter to use it",
  );
  if (live) {
    const a = document.createElement("a");
    a.href = live;
    a.textContent = "open the live lab";
    p.append(", or ", a);
  }
  p.append(".");
  el.prepend(p);
  return p;
}

/** Ask the kernel whether it runs; say so above the widget if it does not answer. */
function watchKernel(model, el) {
  let note = null;
  const answered = () => {
    if (note) note.remove();
    note = null;
    clearTimeout(timer);
  };
  model.on("change:kernel", answered);
  const timer = setTimeout(() => {
    note = snapshotNote(el, model.get("live_lab") || "");
  }, KERNEL_WAIT_MS);
  try {
    model.send({ hello: (model.get("kernel") || 0) + 1 });
  } catch {
    // No comm to send on: the timer says so.
  }
  return () => {
    clearTimeout(timer);
    model.off("change:kernel", answered);
  };
}

function render({ model, el }) {
  const name = model.get("widget");
  const draw = RENDERS[name];
  const host = document.createElement("div");
  host.className = "ol-notebook-widget";
  el.append(host);
  const root = host.attachShadow({ mode: "open" });
  if (!draw) {
    root.textContent = `overlap-lab has no widget named “${name}”.`;
    return () => {};
  }
  const source = notebookSource(model);
  draw({ model: source, el: root });
  const stopWatching = watchKernel(model, el);
  return () => {
    stopWatching();
    source.off();
  };
}

export default { render };
