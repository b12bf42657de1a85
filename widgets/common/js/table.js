// The chart's data as an accessible table a screen-reader user can open, and the
// same table as CSV: `{columns: [{key, label}], rows: [[...]]}` from the server.

import { h } from "./dom.js";

/** A folded table of the chart's data: `{el, update(table)}`. */
export function dataTable(summary = "The chart's data as a table") {
  const table = h("table", {});
  const el = h("details", { class: "ol-data" }, h("summary", {}, summary), h("div", { class: "ol-table-scroll" }, table));
  return {
    el,
    update(data) {
      const head = h("thead", {}, h("tr", {}, data.columns.map((c) => h("th", { scope: "col" }, c.label))));
      const body = h(
        "tbody", {},
        data.rows.map((row) => h("tr", {}, row.map((v, i) => (i === 0 ? h("th", { scope: "row" }, cell(v, data.columns[i])) : h("td", {}, cell(v, data.columns[i])))))),
      );
      table.replaceChildren(...(data.caption ? [h("caption", {}, data.caption)] : []), head, body);
    },
  };
}

function cell(value, column) {
  if (typeof value === "number") {
    if (!isFinite(value)) return "—";
    return column.digits !== undefined ? value.toFixed(column.digits).replace("-", "−") : String(value);
  }
  if (typeof value === "boolean") return value ? "yes" : "no";
  return value ?? "—";
}

function csvCell(value) {
  const text = value === null || value === undefined ? "" : String(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Readouts as `# label,value` lines, then the table with its column keys as the header. */
export function csvText(readouts, data) {
  const lines = readouts.map(([label, value]) => "# " + [label, value].map(csvCell).join(","));
  lines.push(data.columns.map((c) => csvCell(c.key)).join(","));
  for (const row of data.rows) lines.push(row.map(csvCell).join(","));
  return lines.join("\n") + "\n";
}
