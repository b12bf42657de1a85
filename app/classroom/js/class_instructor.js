// The instructor's page: set up a round (widget, preset, settings, question), open voting,
// reveal, unlock, go on, end the class and download the results. The instructor's key is
// read from the address's fragment and sent only in request bodies.

import { histogram } from "./class_histogram.js";
import { $, el, fmt, outcome, post, prefix, showMessage } from "./class_page.js";
import { follow } from "./class_stream.js";

export function instructor() {
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
    // The store unreachable, or one that a restart would empty: said until it is not so.
    const notices = v.notices || [];
    $("store-status").replaceChildren(...notices.map((text) => el("p", {}, text)));
    $("store-status").hidden = !notices.length;
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
