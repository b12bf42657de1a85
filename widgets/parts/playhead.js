// Browser side of the playhead (the rules it uses come first, from
// playhead_rules.js). Runs on every change of the driver source, which the
// server sends on each user action (anchor, playing, speed, horizon). While
// playing it animates at display rate with setv(..., {sync: false}) so that
// nothing it draws is sent back to the server.
const state = driver.__playhead || (driver.__playhead = { raf: null });
const d = driver.data;
const anchor = d.anchor[0];
const playing = d.playing[0] > 0;
const speed = d.speed[0];
const horizon = d.horizon[0];
const wall0 = performance.now();

function pick(data, keep) {
  const out = {};
  for (const key of Object.keys(data)) out[key] = keep.map((i) => data[key][i]);
  return out;
}

function render(t) {
  for (const span of spans) span.setv({ location: t }, { sync: false });
  for (const r of reveals) {
    const full = r.full.data;
    let data;
    if (r.kind === "polyline") data = revealPolyline(full.x, full.y, t);
    else if (r.kind === "points") data = pick(full, revealPoints(full.x, t));
    else {
      const cut = revealSpans(full.left, full.right, t);
      data = pick(full, cut.keep);
      data.right = cut.end;
    }
    r.shown.setv({ data: data }, { sync: false });
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
    const ys = [];
    for (const src of a.sources) for (const y of src.data.y) ys.push(y);
    const end = autoscaledEnd(ys, scale.headroom);
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
