// Package style builds a persona's style profile: a versioned,
// structured and evidenced description of how an author writes, measured
// deterministically from pinned source versions, and Burrows' Delta over
// function words to say how close a text is to it.
//
// A Profile has a summary; six dimensions (language, syntax, paragraph,
// structure, narrative, format) of measured features — sentence and
// paragraph length percentiles (p10, p25, p50, p75, p90, in non-space
// characters), punctuation per 1,000 characters with full-width and
// half-width marks counted separately, heading, list-item, quote and code
// rates, the first-person rate, time markers, Chinese-Latin spacing, the
// most frequent function words; weighted rules (a rule is kept when it
// holds in at least half of the sources, its weight is that share);
// representative patterns (character n-grams of 2-4 CJK characters or
// Latin word bigrams found in at least two sources, and frequent sentence
// openings); uncertainties (few sources, little text, mixed language,
// features that vary a lot between sources, an uncalibrated closeness
// score); and evidence for every one of these claims: the pinned source
// version, the block, the span in code points and the fingerprint of the
// span's text (source.Evidence). A claim about absence or about whole
// sources cites the pinned versions themselves (an evidence without a
// block, whose fingerprint is the body fingerprint's first 16 digits).
//
// The learner (LearnerVersion) is the deterministic local analysis; a
// model provider may add Prose (generation asks the writing provider
// when it is not the local one: package persona's Describer) — a
// separate optional field that can rephrase the summary and explain
// rules by id, but has no place for evidence, so adding prose never
// removes or replaces any. Validate
// checks that every claim has evidence from a pinned source.
//
// The function-word lists are embedded (data/function_en.txt,
// data/function_zh.txt; their headers carry the licence notes). Chinese
// is counted without a segmenter: the longest listed word starting at
// each position (see countFunctionWords).
//
// Closeness (Profile.Close) is Burrows' Delta against the author's own
// sources (FunctionWordStats documents the choice of reference corpus),
// calibrated by the leave-one-out Deltas of the sources: Percentile says
// which share of the author's own articles lie at least as far away.
//
// The package is pure: no I/O, no clock; the same sources in the same
// order give the same profile.
package style
