// Downloads made in the page, offline: the chart's data as CSV and the chart as PNG.

import { h } from "./dom.js";

/** Save a Blob under a file name with a temporary link. */
export function saveBlob(blob, filename) {
  const link = h("a", { href: URL.createObjectURL(blob), download: filename });
  document.body.append(link);
  link.click();
  setTimeout(() => {
    URL.revokeObjectURL(link.href);
    link.remove();
  }, 1000);
}

/** The chart's SVG drawn on a canvas at twice its size, as a PNG Blob. */
export function svgToPng(svg) {
  const width = Number(svg.getAttribute("width"));
  const height = Number(svg.getAttribute("height"));
  const text = new XMLSerializer().serializeToString(svg);
  const url = URL.createObjectURL(new Blob([text], { type: "image/svg+xml" }));
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = width * 2;
      canvas.height = height * 2;
      const ctx = canvas.getContext("2d");
      ctx.scale(2, 2);
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(0, 0, width, height);
      ctx.drawImage(image, 0, 0, width, height);
      URL.revokeObjectURL(url);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("no PNG"))), "image/png");
    };
    image.onerror = () => reject(new Error("the chart could not be drawn"));
    image.src = url;
  });
}

/**
 * The two download buttons: `csv()` gives the CSV text (or null while it is fetched:
 * `later(deliver)` then receives the function to call with the text), `svg()` the chart.
 */
export function exportButtons(name, csv, svg, later = () => {}) {
  const csvButton = h("button", { type: "button", class: "ol-button" }, "Download data (CSV)");
  const pngButton = h("button", { type: "button", class: "ol-button" }, "Download chart (PNG)");
  const save = (text) => saveBlob(new Blob([text], { type: "text/csv" }), `${name}.csv`);
  csvButton.addEventListener("click", () => {
    const text = csv();
    if (text === null) later(save);
    else save(text);
  });
  pngButton.addEventListener("click", () => {
    const chart = svg();
    if (chart) svgToPng(chart).then((blob) => saveBlob(blob, `${name}.png`));
  });
  return h("div", { class: "ol-export" }, csvButton, pngButton);
}
