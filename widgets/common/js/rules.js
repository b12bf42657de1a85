// The rules the browser shares with the Python model: number formatting, the
// playhead's reveal of lines, points and spans, and the autoscaled axis end.
// The originals are Quantity (widgets/common/formatting.py), revealed_polyline /
// revealed_points / revealed_spans (widgets/model/timeline.py) and
// autoscaled_end; tests/ui/test_rules_in_browser.py runs both on one table.

/** `4` with {digits: 2, unit: "s"} -> "4.00 s"; non-finite -> an em dash; never "−0.00". */
export function fmt(value, spec, signed = false) {
  if (value === null || value === undefined || !isFinite(value)) return "—";
  const digits = spec.digits ?? 2;
  let text = toFixedEven(value === 0 ? 0 : value, digits).replace("-", "−");
  if (text === "−" + (0).toFixed(digits)) text = text.slice(1);
  if (signed && !text.startsWith("−")) text = "+" + text;
  return spec.unit ? text + " " + spec.unit : text;
}

/**
 * `toFixed` with Python's rounding: an exact tie (1.625 to two decimals) goes to the
 * even digit ("1.62"), where `toFixed` goes away from zero ("1.63"). A tie is exact
 * only when the double is the midpoint itself: (2n + 1) / (2 * 10^d) with 5^d | 2n + 1.
 */
export function toFixedEven(value, digits) {
  const size = Math.abs(value);
  const scale = 10 ** digits;
  const n = Math.floor(size * scale);
  const tie = (2 * n + 1) % 5 ** digits === 0 && (n + 0.5) / scale === size;
  if (!tie || n % 2 === 1) return value.toFixed(digits);
  const even = (n / scale).toFixed(digits);
  return value < 0 && n !== 0 ? "-" + even : even;
}

/** Linear interpolation of a polyline at t, held at both ends. */
export function interp(xs, ys, t) {
  const n = xs.length;
  if (n === 0) return NaN;
  if (t <= xs[0]) return ys[0];
  for (let i = 1; i < n; i++) {
    if (t <= xs[i]) {
      const w = xs[i] === xs[i - 1] ? 1 : (t - xs[i - 1]) / (xs[i] - xs[i - 1]);
      return ys[i - 1] + w * (ys[i] - ys[i - 1]);
    }
  }
  return ys[n - 1];
}

/** The polyline up to t, ending exactly at t; nothing before its first vertex. */
export function revealPolyline(xs, ys, t) {
  const x = [], y = [];
  if (xs.length === 0 || t < xs[0]) return { x, y };
  for (let i = 0; i < xs.length && xs[i] < t; i++) { x.push(xs[i]); y.push(ys[i]); }
  x.push(t);
  y.push(interp(xs, ys, t));
  return { x, y };
}

/** Indices of the points reached by t (x <= t). */
export function revealPoints(xs, t) {
  const keep = [];
  for (let i = 0; i < xs.length; i++) if (xs[i] <= t) keep.push(i);
  return keep;
}

/** Spans begun by t (start < t) and their ends cut at t. */
export function revealSpans(starts, ends, t) {
  const keep = [];
  for (let i = 0; i < starts.length; i++) if (starts[i] < t) keep.push(i);
  return { keep, end: keep.map((i) => Math.min(ends[i], t)) };
}

/** The top of an axis scaled to what is shown: at least 1, with headroom, rounded up. */
export function autoscaledEnd(values, headroom) {
  let top = 1.0;
  for (const y of values) if (isFinite(y)) top = Math.max(top, y);
  // 100 x 1.12 is 112.00000000000001 in floating point: that is 112, not 113.
  return Math.ceil(top * headroom - 1e-9 * top);
}
