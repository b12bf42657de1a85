// The browser's copy of the reveal and number-format rules. The originals are
// revealed_polyline / revealed_points / revealed_spans (widgets/model/timeline.py),
// Quantity (widgets/parts/formatting.py) and autoscaled_end (playhead.py); a
// browser test runs these functions on a table of cases against them.

function fmt(value, spec) {
  if (!isFinite(value)) return "—";
  let text = (value === 0 ? 0 : value).toFixed(spec.digits).replace("-", "−");
  if (text === "−" + (0).toFixed(spec.digits)) text = text.slice(1);
  return spec.unit ? text + " " + spec.unit : text;
}

function interp(xs, ys, t) {
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

function revealPolyline(xs, ys, t) {
  const x = [], y = [];
  if (xs.length === 0 || t < xs[0]) return { x: x, y: y };
  for (let i = 0; i < xs.length && xs[i] < t; i++) { x.push(xs[i]); y.push(ys[i]); }
  x.push(t);
  y.push(interp(xs, ys, t));
  return { x: x, y: y };
}

function revealPoints(xs, t) {
  const keep = [];
  for (let i = 0; i < xs.length; i++) if (xs[i] <= t) keep.push(i);
  return keep;
}

function revealSpans(starts, ends, t) {
  const keep = [];
  for (let i = 0; i < starts.length; i++) if (starts[i] < t) keep.push(i);
  return { keep: keep, end: keep.map((i) => Math.min(ends[i], t)) };
}

function autoscaledEnd(values, headroom) {
  let top = 1.0;
  for (const y of values) top = Math.max(top, y);
  return Math.ceil(top * headroom);
}
