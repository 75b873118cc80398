// Package assistant is Folio's AI assistant. For now it holds the model
// gateway; sessions, runs, suggestions and the tasks that use the gateway
// come later.
//
// # Gateway
//
// Gateway.Text and Gateway.Structured are the only way Folio talks to a
// model. A call names its category (writing, reading, attributes), which
// selects that category's provider and quota policy, and carries the trace
// of the work it belongs to (run id, task id, attempt), from which the
// usage event id is derived — so a retried attempt that books again books
// once. Each call:
//
//  1. reserves tokens in the category's policy (prompt estimate + answer
//     budget); a refusal is returned with the policy's own code, e.g.
//     writing_rate_limited;
//  2. streams the answer from the provider, passing pieces to OnText;
//  3. settles the reservation with the usage the provider reported, or
//     charges the reservation when it reported none (a stream cut);
//  4. books one usage event per model call: with BookSafe, or — when the
//     request sets DeferBooking — by returning the events so the caller
//     books them in its own batch with its business records. A failed call
//     has no business batch, so its usage is always booked with BookSafe.
//
// # Structured output
//
// Structured asks for one JSON object, extracts it from the model's text
// (ExtractJSON: plain, inside ``` fences or surrounded by prose, braces in
// strings handled), then runs the caller's domain validation.
//
// When no valid object can be extracted the gateway makes exactly one
// generic repair attempt: a re-ask that carries the model's previous answer
// and the parse error, asking for the object alone. A re-ask was chosen over
// a JSON-repair library because the failures that matter in practice — an
// answer cut off by the token limit, prose instead of JSON, a missing field
// a heuristic cannot invent — are fixed by the model, not by patching
// brackets and quotes; a repair library would silently accept guesses that
// then pass syntax but not meaning. It also adds no dependency. The repair
// call goes through the same policy and books its own usage. Domain
// validation failures are not re-asked here: domain repair belongs to the
// caller, which knows what a valid answer is.
//
// # Errors
//
// Every failure is an *Error with a stable code: the quota codes
// (<category>_rate_limited, <category>_concurrency_limited,
// <category>_token_budget_exhausted), provider_unreachable,
// provider_unauthorized, provider_rate_limited, provider_bad_request,
// provider_error, provider_stream_cut, provider_timeout, output_not_json,
// output_invalid, cancelled and ai_not_configured. Error.Retryable and
// Error.RetryAfter tell a task runner whether and when to retry. Each
// error also has a kind (package errs): rate limits are rate_limited, a
// cancelled call canceled, ai_not_configured disabled, every other
// provider or output failure unavailable.
//
// Gateway.Check is `folio ai check`: one small request through a
// category's route, with a report and, on failure, one line that names
// the provider and what to change; the CLI and the daemon share it.
package assistant
