// Package reading is the reading assistant: for a visitor of a published
// public article it explains a selected passage, or answers a short
// question about it, streamed. It shares the neutral provider plumbing
// with the writing assistant (assistant.Gateway) and nothing else: not its
// context, persona or budget.
//
// The caller (the public HTTP endpoint) has already checked that the
// article is published and public — anything else it answers like a
// missing article — and passes the version's hash, title and body. The
// messages sent are exactly Prompt(req): a fixed system prompt and one user
// message with the title, passage, question and the article's text.
//
// Bounds, all from [reading]: the passage (max_passage bytes) and the
// question (max_question); requests per minute per visitor (the anonymous
// visitor id and the client address together, visitor_per_minute) and per
// client address whatever ids it presents (address_per_minute); running
// explanations per visitor (visitor_concurrency) and in total
// (concurrency); the answer cache's bytes (cache_bytes, LRU); the
// visitors remembered (50,000; idle ones are forgotten first). A refusal
// never waits: reading_visitor_limited (rate limited) or reading_busy
// (unavailable) with a Retry-After.
//
// The answer cache is keyed by article version, block, passage and
// question. A hit is replayed without a model call and without touching
// the reading policy or the ledger: hits are not billed. Identical
// requests that arrive while the model answers wait for that answer
// instead of asking again, so a burst of visitors on one passage costs one
// call. Model calls go through the reading category's own route: its
// settings ([ai.reading]), its policy and counters (quota category
// reading) and the ledger's safe path (BookSafe). Nothing here can reach
// the writing category's budget or counters.
//
// The local provider is Local, an extractive engine that assembles the
// explanation from the article and labels it as such.
package reading
