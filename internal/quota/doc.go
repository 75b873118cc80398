// Package quota enforces the AI resource policies and keeps the token usage
// ledger.
//
// # Policies
//
// There is one Policy per category — reading, writing, attributes — each
// with its own limits and counters, even when the categories share provider
// credentials, so one feature can never eat another's budget:
//
//   - requests per minute (a sliding window, in memory: a restart forgets
//     the last minute) and per UTC day (persisted);
//   - concurrent requests per user (or per visitor) and in total;
//   - a daily token budget with reservations: Acquire reserves an estimate
//     (prompt tokens + the answer's max tokens), Lease.Settle charges the
//     tokens the provider reported, Lease.SettleReservation charges the
//     estimate when the provider reported none (a stream cut before the
//     usage chunk), Lease.Release charges nothing (the request never reached
//     the model). While requests run, their reservations count against the
//     budget, so concurrent requests cannot overshoot it together.
//
// Check asks, without counting anything, whether Acquire would refuse for
// the budget, the day or the minute: a queue in front of the model (the
// writing assistant) refuses at request time with Check and acquires at
// run time.
//
// A refusal is an *Error whose Code is the category followed by the kind:
// writing_rate_limited, writing_concurrency_limited,
// writing_token_budget_exhausted, reading_…, attributes_…; RetryAfter says
// when trying again can succeed (the next minute slot, the next UTC day).
//
// Daily counters live at t/quota/<category>\x00<YYYY-MM-DD> as msgpack
// {requests, tokens}, written with Sync, so they survive a restart.
//
// # Ledger
//
// Every model call books one usage Event: provider, model, input, output
// and total tokens, category, time, whether the tokens are an estimate, and
// a stable event id — never prompts, bodies, answers or identities. Keys:
//
//	t/usage/<YYYY-MM-DD>\x00<event id>   the event (msgpack)
//	t/usageid/<event id>                 its day: a retried booking with the same id is skipped
//	t/usagehealth/<YYYY-MM-DD>           failed bookings that day (msgpack int)
//	t/usagehits/<YYYY-MM-DD>\x00<category> answers served from a cache that day (msgpack int)
//
// Two write paths: BookInBatch adds the event to the caller's batch, so the
// writing assistant books usage atomically with its run and suggestion;
// BookSafe (reading, attributes) commits on its own and, when that fails,
// keeps the caller's answer, logs a redacted warning, counts the failure and
// marks the statistics health "incomplete". CountCacheHit counts an
// answer served from a cache (the reading assistant's), which is not
// billed. Report gives daily totals per category and the health; the
// daemon serves it to admins (internal/server).
package quota
