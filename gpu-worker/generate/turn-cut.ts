/**
 * The reason a turn's signal carries when the worker itself cuts the turn short (its wall clock
 * ran out, or its reader stalled: turn/turn-limits.ts), as opposed to the client leaving. The
 * sampler ends a cut turn as MAX_TOKENS, so it is recorded like any turn stopped early: the KV,
 * the frontier and turn memory stay consistent and the session can be parked to a checkpoint.
 */
export class TurnCut extends Error {
  constructor(readonly limit: "wall-clock" | "stall") {
    super(limit === "wall-clock" ? "the turn reached its wall-clock limit" : "the turn's reader stalled");
    this.name = "TurnCut";
  }
}
