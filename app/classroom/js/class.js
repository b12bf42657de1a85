// The class's pages in the browser: the instructor's page and a learner's page.
// Both follow the room through one long-lived response from this server (server-sent
// events); every action is one JSON request. The instructor's key is read from the
// address's fragment and sent only in request bodies.

const body = document.body;
const prefix = body.dataset.prefix || "";
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const COLORS = { bar: "#0072B2", answer: "#1f2328", yours: "#D55E00", median: "#E69F00", grid: "#e6e8eb", muted: "#57606a" };

function el(tag, attrs = {}, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}

/** A number as shown: at most four significant digits, with its unit. */
function fmt(v, unit = "") {
  if (v === null || v === undefined) return "—";
  const text = String(Number(Number(v).toPrecision(4)));
  return unit ? `${text} ${unit}` : text;
}

async function post(url, data) {
  const response = await fetch(url, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(data), credentials: "same-origin",
  });
  let payload = {};
  try { payload = await response.json(); } catch (e) { payload = {}; }
  return { ok: response.ok && payload.ok !== false, status: response.status, ...payload };
}

/** Follow a POST stream of server-sent events, reconnecting with back-off. */
function follow(url, data, onView, onState) {
  let delay = 500;
  const run = async () => {
    try {
      const response = await fetch(url, {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(data), credentials: "same-origin", cache: "no-store",
      });
      if (response.status === 403 || response.status === 404) {
        onState("refused");
        return;
      }
      if (!response.ok || !response.body) throw new Error(String(response.status));
      onState("open");
      delay = 500;
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const chunk = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const line = chunk.split("\n").find((l) => l.startsWith("data: "));
          if (line) onView(JSON.parse(line.slice(6)));
        }
      }
    } catch (e) { /* reconnect below */ }
    onState("lost");
    setTimeout(run, delay);
    delay = Math.min(delay * 2, 5000);
  };
  run();
}

/** A histogram of predictions: SVG bars, the answer, the median and your prediction, and a table. */
function histogram(host, summary, question, marks = {}) {
  // Drawn at the width it is shown at, so its text stays legible on a phone; drawn
  // again when that width changes.
  if (!host.olResize) {
    host.olResize = new ResizeObserver(() => {
      const w = Math.floor(host.getBoundingClientRect().width);
      if (host.olArgs && w > 0 && w !== host.olWidth) histogram(host, ...host.olArgs);
    });
    host.olResize.observe(host);
  }
  host.olArgs = [summary, question, marks];
  host.olWidth = Math.floor(host.getBoundingClientRect().width);
  host.replaceChildren();
  const bins = (summary && summary.bins) || [];
  if (!bins.length) {
    host.append(el("p", { class: "cl-hint" }, "No predictions yet."));
    return;
  }
  const unit = question.unit || "";
  const W = Math.max(280, Math.min(720, host.olWidth || 640)), H = 260, L = 44, R = 16, T = 28, B = 52;
  let lo = bins[0].lo, hi = bins[bins.length - 1].hi;
  for (const v of [marks.answer, marks.yours]) {
    if (v !== null && v !== undefined) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  }
  if (hi === lo) { hi = lo + 1; }
  const pad = (hi - lo) * 0.04;
  lo -= pad; hi += pad;
  const top = Math.max(...bins.map((b) => b.count));
  const x = (v) => L + ((v - lo) / (hi - lo)) * (W - L - R);
  const y = (c) => H - B - (c / top) * (H - B - T);
  const count = summary.count;
  const svg = el("svg:svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Histogram of ${count} prediction${count === 1 ? "" : "s"}; the table below lists it` });
  svg.append(el("svg:rect", { x: 0, y: 0, width: W, height: H, fill: "#ffffff" }));
  for (let i = 0; i <= 4; i++) {
    const c = (top * i) / 4;
    if (i > 0 && Math.abs(c - Math.round(c)) > 1e-9) continue;
    svg.append(el("svg:line", { x1: L, x2: W - R, y1: y(c), y2: y(c), stroke: COLORS.grid }));
    svg.append(el("svg:text", { x: L - 6, y: y(c) + 4, "text-anchor": "end", "font-size": 12, fill: COLORS.muted }, String(Math.round(c))));
  }
  for (const b of bins) {
    const x0 = x(b.lo), x1 = x(b.hi);
    svg.append(el("svg:rect", { x: x0 + 1, y: y(b.count), width: Math.max(1, x1 - x0 - 2), height: H - B - y(b.count), fill: COLORS.bar }));
  }
  const ticks = question.integer ? bins.map((b) => (b.lo + b.hi) / 2) : [bins[0].lo, ...bins.map((b) => b.hi)];
  const every = Math.ceil(ticks.length / Math.max(3, Math.floor(W / 80)));
  ticks.forEach((t, i) => {
    if (i % every) return;
    svg.append(el("svg:text", { x: x(t), y: H - B + 16, "text-anchor": "middle", "font-size": 12, fill: COLORS.muted }, fmt(t)));
  });
  svg.append(el("svg:text", { x: (L + W - R) / 2, y: H - 10, "text-anchor": "middle", "font-size": 13, fill: COLORS.answer }, `${question.label}`));
  const mark = (v, color, dash, label, row) => {
    if (v === null || v === undefined) return;
    svg.append(el("svg:line", { x1: x(v), x2: x(v), y1: T - 4, y2: H - B, stroke: color, "stroke-width": 3, "stroke-dasharray": dash }));
    svg.append(el("svg:text", { x: Math.min(Math.max(x(v), L + 40), W - R - 40), y: 12 + row * 0, "text-anchor": "middle", "font-size": 12, "font-weight": 600, fill: color === COLORS.median ? "#8a5a00" : color }, label));
  };
  mark(marks.median, COLORS.median, "2 3", "", 0);
  mark(marks.answer, COLORS.answer, "7 4", "The answer", 0);
  if (marks.yours !== null && marks.yours !== undefined) {
    const px = x(marks.yours);
    svg.append(el("svg:path", { d: `M${px - 8},${H - B + 2} L${px + 8},${H - B + 2} L${px},${H - B - 12} Z`, fill: COLORS.yours, stroke: "#ffffff" }));
  }
  const key = el("ul", { class: "cl-hint" });
  if (marks.answer !== undefined && marks.answer !== null) key.append(el("li", {}, "Dashed black line: the answer"));
  if (marks.median !== undefined && marks.median !== null) key.append(el("li", {}, "Dotted orange line: the class median"));
  if (marks.yours !== undefined && marks.yours !== null) key.append(el("li", {}, "Vermillion triangle: your prediction"));
  const rows = bins.map((b) => el("tr", {},
    el("td", {}, question.integer ? fmt((b.lo + b.hi) / 2, unit) : `${fmt(b.lo)} to ${fmt(b.hi, unit)}`),
    el("td", {}, String(b.count))));
  const table = el("table", {}, el("caption", { class: "cl-hint" }, "Predictions in each range"),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, question.integer ? "Answer" : "Range"), el("th", { scope: "col" }, "Predictions"))),
    el("tbody", {}, rows));
  host.append(svg, key.childNodes.length ? key : "", el("details", {}, el("summary", {}, "The histogram as a table"), table));
}

function outcome(dl, items) {
  dl.replaceChildren(...items.map(([label, value, id]) => el("div", {}, el("dt", {}, label), el("dd", id ? { id } : {}, value))));
}

function showMessage(node, input, text, isError) {
  node.textContent = text || "";
  node.className = isError ? "cl-error" : "cl-hint";
  if (isError) { node.setAttribute("role", "alert"); input && input.setAttribute("aria-invalid", "true"); }
  else { node.removeAttribute("role"); input && input.removeAttribute("aria-invalid"); }
}

// --- the instructor ---------------------------------------------------------------

function instructor() {
  const params = new URLSearchParams(location.hash.slice(1));
  const code = params.get("code"), key = params.get("key");
  const status = $("status");
  if (!code || !key) {
    status.textContent = "This page's address is incomplete: it must be the link you got when you started the class.";
    return;
  }
  const auth = { code, key };
  const api = (action) => `${prefix}/class/api/teach/${action}`;
  let view = null, widgets = null;
  const fieldsOf = { widget: $("widget"), settings: $("settings"), question: $("question"), parameter: $("parameter") };
  const messages = { widget: $("widget-message"), settings: $("settings-message"), question: $("question-message"), parameter: $("parameter-message") };
  const hints = Object.fromEntries(Object.entries(messages).map(([k, v]) => [k, v.textContent]));
  const clearMessages = () => { for (const k of Object.keys(messages)) showMessage(messages[k], fieldsOf[k], hints[k], false); };

  const widgetSpec = () => widgets.find((w) => w.name === $("widget").value);
  const fillWidget = () => {
    const w = widgetSpec();
    $("preset").replaceChildren(el("option", { value: "" }, w.presets.length ? "(the widget's defaults)" : "(none)"), ...w.presets.map((p) => el("option", { value: p }, p)));
    $("preset-field").hidden = !w.presets.length;
    $("question").replaceChildren(...w.questions.map((q) => el("option", { value: q.id }, q.text)));
    fillQuestion();
  };
  const fillQuestion = () => {
    const q = widgetSpec().questions.find((qq) => qq.id === $("question").value);
    $("parameter-field").hidden = !q || !q.parameter;
    if (q && q.parameter) $("parameter-label").textContent = q.parameter.label;
    preview();
  };
  const settingsText = () => {
    const preset = $("preset").value;
    const rest = $("settings").value.trim().replace(/^\?/, "");
    return [preset ? `preset=${encodeURIComponent(preset)}` : "", rest].filter(Boolean).join("&");
  };
  const preview = () => {
    const q = settingsText();
    $("preview").href = `${prefix}/${$("widget").value}${q ? "?" + q : ""}`;
  };
  $("widget").addEventListener("change", fillWidget);
  $("question").addEventListener("change", fillQuestion);
  $("preset").addEventListener("change", preview);
  $("settings").addEventListener("input", preview);

  const act = async (action, extra = {}) => {
    const result = await post(api(action), { ...auth, ...extra });
    $("action-message").textContent = result.ok ? "" : result.message || "That did not work; try again.";
    return result;
  };
  $("setup").addEventListener("submit", async (event) => {
    event.preventDefault();
    clearMessages();
    const result = await post(api("open"), {
      ...auth, widget: $("widget").value, settings: settingsText(), question: $("question").value, parameter: $("parameter").value,
    });
    if (!result.ok) {
      const field = result.field && messages[result.field] ? result.field : "question";
      showMessage(messages[field], fieldsOf[field], result.message || "That did not work; try again.", true);
    }
  });
  $("reveal").addEventListener("click", () => act("reveal"));
  $("unlock").addEventListener("click", () => act("unlock"));
  $("next").addEventListener("click", () => act("next"));
  $("end").addEventListener("click", () => {
    if (confirm("End the class for everyone?")) act("end");
  });
  $("csv").addEventListener("click", async () => {
    const response = await fetch(api("results"), { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(auth) });
    if (!response.ok) { $("action-message").textContent = "No results to download yet."; return; }
    const blob = await response.blob();
    const name = (response.headers.get("Content-Disposition") || "").match(/filename="([^"]+)"/);
    const a = el("a", { href: URL.createObjectURL(blob), download: name ? name[1] : "class-results.csv" });
    document.body.append(a);
    a.click();
    a.remove();
  });

  const render = (v) => {
    view = v;
    if (v.phase === "ended") {
      status.textContent = "This class has ended.";
      for (const b of document.querySelectorAll("button")) b.disabled = true;
      return;
    }
    if (!widgets && v.widgets) {
      widgets = v.widgets;
      $("widget").replaceChildren(...widgets.map((w) => el("option", { value: w.name }, w.title)));
      fillWidget();
    }
    if (v.join_url) {
      $("code").textContent = v.spaced;
      $("code").setAttribute("aria-label", v.code.split("").join(" "));
      $("join-link").textContent = v.join_url;
      $("join-link").href = v.join_url;
      $("entry-link").textContent = v.entry_url;
      $("qr").innerHTML = v.qr;
      $("idle").textContent = `The class ends when you end it, or after ${v.idle_minutes} minutes without activity.`;
    }
    $("connected").textContent = String(v.connected);
    const phase = v.phase === "closing" ? "voting" : v.phase;
    status.textContent = {
      waiting: v.round ? `Round ${v.round} is over. Set up the next question and open voting.` : "Set up a question and open voting.",
      voting: `Round ${v.round}: voting is open.`,
      revealed: `Round ${v.round}: the answer is revealed${v.unlocked ? " and the controls are unlocked" : ""}.`,
    }[phase] || "";
    $("setup").hidden = phase !== "waiting";
    $("live").hidden = phase === "waiting";
    if (phase === "waiting") return;
    $("asked").textContent = `${v.title}: ${v.question.text}`;
    const summary = phase === "voting" ? v.votes : v.result;
    $("votes").textContent = String(summary ? summary.count : 0);
    histogram($("hist"), summary, v.question, phase === "revealed" ? { answer: v.answer, median: v.result.median } : {});
    $("outcome").hidden = phase !== "revealed";
    if (phase === "revealed") {
      outcome($("outcome"), [
        ["The answer", fmt(v.answer, v.question.unit), "answer"],
        ["Class median", fmt(v.result.median, v.question.unit), "median"],
        ["Predictions", String(v.result.count)],
      ]);
    }
    $("reveal").disabled = phase !== "voting";
    $("unlock").disabled = phase !== "revealed" || v.unlocked;
    $("next").disabled = phase !== "revealed";
  };
  follow(api("stream"), auth, render, (state) => {
    if (state === "refused") status.textContent = "This link does not open a class (it has ended, or the link is wrong).";
    else if (state === "lost" && view) status.textContent = "Reconnecting…";
  });
}

// --- a learner ----------------------------------------------------------------------

function learner() {
  const code = body.dataset.code;
  const status = $("status");
  const frame = $("widget");
  const input = $("prediction");
  const message = $("prediction-message");
  let view = null, shownRound = null, lost = false, stored = null, frameReady = false;
  // The round's widget is a file: the phase (and at Reveal the revealed states) reach
  // it from this page's stream, never through a connection of its own.
  const tellFrame = () => {
    if (!frameReady || !view || !view.mode) return;
    frame.contentWindow.postMessage({ type: "overlap-lab:round", mode: view.mode, states: view.states || null }, location.origin);
  };

  $("predict").addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!view || view.phase !== "voting") return;
    $("submit").disabled = true;
    showMessage(message, input, "Sending…", false);
    let result;
    try {
      result = await post(`${prefix}/class/${code}/vote`, { text: input.value });
    } catch (e) {
      result = { ok: false, message: "Your prediction did not reach the server: try again." };
    }
    $("submit").disabled = false;
    if (result.ok) {
      stored = result.value;
      showMessage(message, input, `Stored: your prediction is ${fmt(result.value, view.question.unit)}. Submitting again replaces it.`, false);
      message.className = "cl-ok";
    } else {
      showMessage(message, input, result.message || "That did not work; try again.", true);
    }
  });

  const render = (v) => {
    view = v;
    if (v.phase === "ended") {
      status.textContent = "This class has ended. Thank you!";
      $("round").hidden = true;
      return;
    }
    if (v.phase === "waiting") {
      status.textContent = "Waiting for the instructor";
      $("round").hidden = true;
      shownRound = null;
      return;
    }
    $("round").hidden = false;
    const q = v.question;
    $("question-text").textContent = q.text;
    $("unit").textContent = q.unit;
    $("prediction-label").textContent = "Your prediction";
    if (shownRound !== v.round || frame.dataset.base !== v.src) {
      shownRound = v.round;
      frame.dataset.base = v.src;
      frameReady = false;
      frame.src = v.src;
      frame.title = `${v.title}, with this round's settings`;
      if (v.yours === null || v.yours === undefined) input.value = "";
      stored = null;
      showMessage(message, input, "", false);
    }
    if (v.yours !== null && v.yours !== undefined && stored === null) {
      stored = v.yours;
      input.value = String(v.yours);
      showMessage(message, input, `Stored: your prediction is ${fmt(v.yours, q.unit)}. Submitting again replaces it.`, false);
      message.className = "cl-ok";
    }
    tellFrame();
    const voting = v.phase === "voting" && !v.closed;
    input.disabled = !voting;
    $("submit").disabled = !voting;
    $("results").hidden = v.phase !== "revealed";
    if (voting) {
      status.textContent = `Round ${v.round}: predict, then submit. The widget's answer-revealing controls are locked.`;
      $("locked-note").textContent = "";
    } else if (v.phase === "voting") {
      status.textContent = "Voting has closed. The answer is coming.";
    }
    if (v.phase === "revealed") {
      status.textContent = v.unlocked
        ? "The controls are unlocked: explore the widget freely."
        : "The answer is revealed: the widget plays the run.";
      const yours = v.yours === null || v.yours === undefined ? "You did not predict" : fmt(v.yours, q.unit);
      outcome($("outcome"), [
        ["Your prediction", yours, "yours"],
        ["Class median", fmt(v.result.median, q.unit), "median"],
        ["The answer", fmt(v.answer, q.unit), "answer"],
      ]);
      histogram($("hist"), v.result, q, { answer: v.answer, median: v.result.median, yours: v.yours });
      if (!voting) message.textContent = message.className === "cl-ok" ? message.textContent : "";
    }
  };

  const events = new EventSource(`${prefix}/class/${code}/events`);
  events.onmessage = (event) => render(JSON.parse(event.data));
  events.onerror = () => {
    lost = true;
    if (view) status.textContent = "Reconnecting…";
  };
  events.onopen = () => {
    // A learner exploring the live widget after Unlock holds a session of its own,
    // which may have gone with the backend: load it again. The round's file needs nothing.
    const shown = frame.contentWindow && frame.contentWindow.location.pathname;
    if (lost && shown && !frame.src.endsWith(shown)) frame.contentWindow.location.reload();
    lost = false;
  };
  // The widget reports its height (the frame takes it, so the page scrolls as one) and
  // that it is ready to follow the round.
  addEventListener("message", (e) => {
    if (e.origin !== location.origin || e.source !== frame.contentWindow || !e.data) return;
    if (e.data.type === "overlap-lab:height") frame.style.height = `${Math.ceil(e.data.height) + 8}px`;
    else if (e.data.type === "overlap-lab:round-ready") {
      frameReady = true;
      tellFrame();
    }
  });
}

if (body.dataset.role === "instructor") instructor();
else if (body.dataset.role === "learner") learner();
