// Labelled native controls for a widget's settings, made from the server's field
// specs. What a learner types is sent to the server as text; the server parses
// and validates it against the parameter and answers with the value in use or a
// message, which is shown under the field. The browser never judges a value.

import { h, uid } from "./dom.js";

/** One control: `{el, input, update(text, error)}`; `send(name, text)` commits an edit. */
export function field(spec, send) {
  const id = uid(spec.name);
  const messageId = `${id}-message`;
  const message = h("div", { id: messageId, class: "ol-hint" }, spec.hint || "");
  let sent = null; // the text last sent from this field, until the server answers
  let input;
  let el;
  if (spec.kind === "boolean") {
    input = h("input", { id, type: "checkbox", "aria-describedby": messageId });
    input.addEventListener("change", () => send(spec.name, input.checked ? "true" : "false"));
    el = h("div", { class: "ol-field ol-check" }, h("label", { for: id }, input, h("span", {}, spec.label)), message);
  } else if (spec.kind === "choice") {
    input = h("select", { id, "aria-describedby": messageId }, spec.choices.map((c) => h("option", { value: c }, c)));
    input.addEventListener("change", () => send(spec.name, input.value));
    el = h("div", { class: "ol-field" }, h("label", { for: id }, spec.label), input, message);
  } else {
    input = h("input", {
      id, type: "text", inputmode: "decimal", autocomplete: "off", spellcheck: "false",
      "aria-describedby": messageId,
    });
    // Enter commits (also text already refused once: it says so again); leaving the
    // field with new text commits too. Each text is sent once, however it was committed.
    const commit = () => {
      if (input.value === sent) return;
      sent = input.value;
      send(spec.name, input.value);
    };
    input.addEventListener("change", commit);
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") commit();
    });
    el = h(
      "div", { class: "ol-field" },
      h("label", { for: id }, spec.label),
      h("div", { class: "ol-input-row" }, input, spec.unit ? h("span", { class: "ol-unit", "aria-hidden": "true" }, spec.unit) : null),
      message,
    );
  }
  let shown = null;
  const showText = (text) => {
    if (text === shown) return;
    shown = text;
    if (spec.kind === "boolean") input.checked = text === "true";
    else input.value = text ?? "";
  };
  return {
    el,
    input,
    /** Show the server's value (unless the learner's refused text is being corrected) or message. */
    update(text, error) {
      // A message on a page's first state (a setting its address asked for) comes with
      // the value in use: the field shows it, never an empty box.
      if (shown === null) showText(text);
      if (error) {
        message.className = "ol-error";
        message.setAttribute("role", "alert");
        // A copy without a server says so here, with a link to the live lab.
        message.replaceChildren(error.text ?? error, ...(error.href ? [" ", h("a", { href: error.href }, error.link)] : []));
        input.setAttribute("aria-invalid", "true");
        return;
      }
      message.className = "ol-hint";
      message.removeAttribute("role");
      message.textContent = spec.hint || "";
      input.removeAttribute("aria-invalid");
      // Only a value the server changed replaces the text: "4.0" typed for 4 stays as typed.
      sent = null;
      showText(text);
    },
    disable(disabled) {
      input.disabled = disabled;
    },
  };
}

/** Every field of a widget by name, updated together from the server's values and errors. */
export function fieldSet(specs, send) {
  const fields = {};
  for (const spec of specs) fields[spec.name] = field(spec, send);
  return {
    fields,
    update(values, errors) {
      for (const [name, f] of Object.entries(fields)) f.update(values[name], errors[name]);
    },
  };
}
