// Colours (Okabe–Ito, distinguishable under the common colour-vision deficiencies)
// and the type used in charts. app/theme.py holds the same palette for
// the server's pages; meaning is never carried by colour alone.

export const COLORS = {
  blue: "#0072B2",
  orange: "#E69F00",
  vermillion: "#D55E00",
  green: "#009E73",
  sky: "#56B4E9",
  purple: "#CC79A7",
  yellow: "#F0E442",
  grey: "#999999",
  ink: "#1f2328",
  muted: "#57606a",
  grid: "#e6e8eb",
};

/** Distinct fills for buckets, in a colour-blind-safe order. */
export const CATEGORY = [COLORS.blue, COLORS.orange, COLORS.green, COLORS.purple, COLORS.sky, COLORS.vermillion, COLORS.yellow, COLORS.grey];

export const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

/**
 * Light or dark, as the page says (`<html data-ol-theme>`, set from its address's theme
 * key by the page's own script) or else as the browser prefers; `el` gets it as
 * `data-theme` ("light" or "dark"), and keeps following both.
 */
export function followTheme(el, win = window) {
  const doc = win.document.documentElement;
  const media = win.matchMedia("(prefers-color-scheme: dark)");
  const apply = () => {
    el.dataset.theme = doc.dataset.olTheme || (media.matches ? "dark" : "light");
  };
  apply();
  media.addEventListener("change", apply);
  new MutationObserver(apply).observe(doc, { attributes: true, attributeFilter: ["data-ol-theme"] });
}
