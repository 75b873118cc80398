// Package reference picks the reference articles of a persona request:
// up to three other published articles, ranked by category, tags and
// keywords drawn from the request. It is a pure, deterministic function
// over candidate metadata and text that the integration feeds (the other
// published articles of the author); there is no vector search, so every
// choice can be explained by its Reasons.
package reference
