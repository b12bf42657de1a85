// Browser side of the playhead. Runs on every change of the driver source,
// which the server sends on each user action (anchor, playing, speed, horizon).
// While playing it animates at display rate with setv(..., {sync: false}) so
// that nothing it draws is sent back to the server.
const state = driver.__playhead || (driver.__playhead = { raf: null });
const d = driver.data;
const anchor = d.anchor[0];
const playing = d.playing[0] > 0;
const speed = d.speed[0];
const horizon = d.horizon[0];
const wall0 = performance.now();

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

function revealPolyline(full, shown, t) {
  const xs = full.data.x, ys = full.data.y;
  const x = [], y = [];
  for (let i = 0; i < xs.length && xs[i] < t; i++) { x.push(xs[i]); y.push(ys[i]); }
  if (xs.length && t >= xs[0]) { x.push(t); y.push(interp(xs, ys, t)); }
  shown.setv({ data: { x: x, y: y } }, { sync: false });
}

function revealPoints(full, shown, t) {
  const keep = [];
  const xs = full.data.x;
  for (let i = 0; i < xs.length; i++) if (xs[i] <= t) keep.push(i);
  const data = {};
  for (const key of Object.keys(full.data)) {
    const col = full.data[key];
    data[key] = keep.map((i) => col[i]);
  }
  shown.setv({ data: data }, { sync: false });
}

function revealIntervals(full, shown, t) {
  const data = {};
  const keep = [];
  const left = full.data.left;
  for (let i = 0; i < left.length; i++) if (left[i] < t) keep.push(i);
  for (const key of Object.keys(full.data)) {
    const col = full.data[key];
    data[key] = keep.map((i) => col[i]);
  }
  data.right = keep.map((i) => Math.min(full.data.right[i], t));
  shown.setv({ data: data }, { sync: false });
}

function render(t) {
  for (const span of spans) span.setv({ location: t }, { sync: false });
  for (const r of reveals) {
    if (r.kind === "polyline") revealPolyline(r.full, r.shown, t);
    else if (r.kind === "points") revealPoints(r.full, r.shown, t);
    else revealIntervals(r.full, r.shown, t);
  }
  for (const r of readouts) {
    const value = r.series ? interp(r.series.data.x, r.series.data.y, t) : t;
    r.div.setv({ text: r.template.replace("{value}", fmt(value, r.format)) }, { sync: false });
  }
  for (const g of gates) {
    const at = g.div.tags.length ? g.div.tags[0] : Infinity;
    g.div.setv({ visible: g.after ? t >= at : t < at }, { sync: false });
  }
  for (const a of autoscales) {
    let top = 1.0;
    for (const src of a.sources) for (const y of src.data.y) top = Math.max(top, y);
    const end = Math.ceil(top * scale.headroom);
    a.range.setv({ start: -scale.foot * end, end: end }, { sync: false });
  }
}

if (state.raf !== null) cancelAnimationFrame(state.raf);
state.raf = null;
if (playing) {
  const frame = () => {
    const t = Math.min(horizon, anchor + (speed * (performance.now() - wall0)) / 1000);
    render(t);
    state.raf = t < horizon ? requestAnimationFrame(frame) : null;
  };
  frame();
} else {
  render(anchor);
}
