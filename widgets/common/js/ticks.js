// Axis ticks and scales for hand-drawn SVG charts.

/** About `count` round tick values (1-2-5 steps) covering [lo, hi]. */
export function niceTicks(lo, hi, count = 6) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const exp = Math.floor(Math.log10(raw));
  const base = raw / 10 ** exp;
  const step = (base >= 5 ? 10 : base >= 2 ? 5 : base >= 1 ? 2 : 1) * 10 ** exp;
  const first = Math.ceil(lo / step - 1e-9) * step;
  const ticks = [];
  for (let v = first; v <= hi + step * 1e-9; v += step) ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return ticks;
}

/** Decimals that tell ticks `step` apart. */
export function tickDigits(ticks) {
  if (ticks.length < 2) return 0;
  const step = Math.abs(ticks[1] - ticks[0]);
  return Math.max(0, Math.min(6, -Math.floor(Math.log10(step) + 1e-9)));
}

/** A linear map from [d0, d1] to [r0, r1]. */
export function linear(d0, d1, r0, r1) {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  const f = (v) => r0 + (v - d0) * k;
  f.domain = [d0, d1];
  f.range = [r0, r1];
  return f;
}
