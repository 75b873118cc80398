// Package learning turns an author's decisions on a persona's
// suggestions into a learning snapshot: which editing preferences are
// stable enough to apply.
//
// Accepted, rejected and edited_after_accept observations are immutable
// facts the writing assistant records; this package reads them through
// Reader (defined here, adapted by the integration: persona and
// assistant are siblings and must not import each other). A snapshot is
// rebuilt only when a persona version is generated (Build), never on a
// single decision. Each rule is a deterministic detector over the
// before/after text of the edits (shorter wording, shorter sentences,
// fewer fillers, active voice, full-width punctuation, Chinese-Latin
// spacing, fewer exclamations); it activates with at least 3 positive
// and at least 4 counted observations and a confidence of at least 0.7,
// the posterior mean of a Beta(1, 1) prior (see Confidence for why this
// and not a Wilson bound). Manual edits are recorded but never count as
// positive. Learning is always persona-scoped: Build refuses a snapshot
// without a persona and observations of any other persona.
//
// The package is pure: no I/O, no clock.
package learning
