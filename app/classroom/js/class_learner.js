// A learner's page: the round's question, the prediction form, the round's widget in a
// frame and, once revealed, the answer beside the class's predictions.

import { roundFrame } from "./class_round_frame.js";
import { histogram } from "./class_histogram.js";
import { $, body, fmt, outcome, post, prefix, showMessage } from "./class_page.js";

export function learner() {
  const code = body.dataset.code;
  const status = $("status");
  const frame = $("widget");
  const input = $("prediction");
  const message = $("prediction-message");
  let view = null, shownRound = null, lost = false, stored = null;
  const round = roundFrame(frame, () => view);

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
      round.load(v.src, `${v.title}, with this round's settings`);
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
    round.tell();
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
}
