/** The longest gap between 1 ms timer ticks while it runs: how long the event loop could serve nothing. */
export function startStallMeter(): { stop(): number } {
  let last = performance.now();
  let stall = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 1);
  return {
    stop() {
      clearInterval(ticker);
      return stall;
    },
  };
}
