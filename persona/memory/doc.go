// Package memory is a persona's personal memory: first-person facts with
// evidence, extracted from pinned source versions and projected per
// persona into snapshots of items.
//
// Two layers, as in the product's design: Observe extracts Observations
// from one source version (per user, keyed by user and source version by
// the persona store, so every persona of the user and every regeneration
// reuses them); Project turns the observations of one persona's sources
// into a Snapshot of Items — statement, type, time with precision,
// confidence, sensitivity, status (supported, conflicted, restricted),
// evidence (source version, block, span in code points, fingerprint) and
// relations (supports, conflicts, supersedes). A snapshot always belongs
// to a persona: Project refuses one without (ErrNoPersona), and so does
// the persona store.
//
// Extraction is local and pattern-based (Extract, Claims), for Chinese
// and English: a sentence in the first person (我, 我们, I, we, my…)
// with at least one anchor — a time (2019年3月, 二〇一六年, March 2020,
// 2020-03-05, 去年/last year as relative), a place (a suffix such as
// 市/省/区 after 在/到/搬到…, an embedded list of names in
// data/places.txt, a capitalized name after in/to/from/at), an
// organisation (a suffix such as 公司/大学/银行 after 加入/就职于/在…, the
// frame 在X工作, University of X, X Corp, a name after joined/at/for in a
// work or study sentence), a number with its unit (classifiers such as
// 年/个/篇, %, English unit words; 一 as an article is not a number) or a
// role (我是一名X, 作为X, I am a X, as a X). Negated (不是, 没, never,
// n't…), hedged (可能, 大概, I think, might…) and planned (打算, 明年,
// plan, will…) statements are dropped by Extract and kept, marked, by
// Claims, which grounding uses. testdata/extract.json holds the golden
// cases the rules were written against.
//
// The package is pure: no I/O, no clock.
package memory
