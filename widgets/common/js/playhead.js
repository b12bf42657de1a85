// The one clock of a widget in the browser. The server owns the clock and sends
// its anchor (elapsed, playing, speed, horizon) on every action; here the
// playhead moves from that anchor at display rate in closure state only, so
// nothing is sent back while playing. When paused, time is the server's value.

/** Wall seconds a re-anchor may fall behind the page's own time and not be shown. */
const MAX_LAG_S = 0.25;

/** A playhead that calls `onFrame(t, playing)` on every animation frame while playing. */
export function createPlayhead(onFrame) {
  let clock = { elapsed: 0, playing: false, speed: 1, horizon: 1 };
  let wall0 = 0;
  let raf = null;

  const now = () =>
    clock.playing
      ? Math.min(clock.horizon, clock.elapsed + (clock.speed * (performance.now() - wall0)) / 1000)
      : clock.elapsed;

  const frame = () => {
    const t = now();
    const running = clock.playing && t < clock.horizon;
    onFrame(t, running);
    raf = running ? requestAnimationFrame(frame) : null;
  };

  return {
    /** Take the server's clock: re-anchor at this instant and draw. */
    sync(next) {
      // Each anchor arrives after its own latency, so a re-anchor while playing can land
      // a few milliseconds behind what the page already shows: keep the page's time then
      // (never step back), but take the server's whenever it is ahead or the run paused.
      const shown = now();
      const behind = (shown - next.elapsed) / Math.max(next.speed, 1e-9);
      const keep = clock.playing && next.playing && behind > 0 && behind < MAX_LAG_S;
      clock = { ...next, elapsed: keep ? Math.min(shown, next.horizon) : next.elapsed };
      wall0 = performance.now();
      if (raf !== null) cancelAnimationFrame(raf);
      raf = null;
      frame();
    },
    /** Model time now. */
    now,
    get playing() {
      return clock.playing && now() < clock.horizon;
    },
    stop() {
      if (raf !== null) cancelAnimationFrame(raf);
      raf = null;
    },
  };
}
