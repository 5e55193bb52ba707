import { Clock, Effect } from "effect"

/** The current time from the Effect clock (TestClock in tests), never `new Date()` directly. */
export const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

/** The quota period of a moment: its calendar month in UTC, `YYYY-MM`. */
export const quotaPeriod = (at: Date) => at.toISOString().slice(0, 7)
