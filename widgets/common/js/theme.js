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
