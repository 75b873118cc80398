// Package localedit is the local provider's deterministic editor: it applies
// the six rules of the editing preset "六条文章强化规则" to Chinese and
// English text, offline, and reports every change it makes.
//
// # Rules
//
// The rules are data (rules/*.tsv, embedded; syntax in rules/README.md):
//
//  1. filler — cut filler and redundancy (其实, 基本上, 非常非常 → 非常,
//     进行一个 → 进行; "in order to" → "to", "very unique" → "unique",
//     "due to the fact that" → "because").
//  2. strong-verbs — a strong verb instead of a weak verb + noun (进行了讨论
//     → 讨论了, 对代码进行优化 → 优化代码, 做出决定 → 决定; "made a decision"
//     → "decided", "gave consideration to" → "considered", in the matched
//     tense).
//  3. active-voice — passive to active only where the agent is stated:
//     "X was done by Y" → "Y did X", 这个方案被委员会否决了 → 委员会否决了这个
//     方案. Without an agent, or when "by" names a time, nothing changes: an
//     actor is never invented.
//  4. jargon — plain words for needless jargon (赋能 → 帮助, 抓手 → 方法;
//     "utilize" → "use", "leverage" the verb → "use").
//  5. cliche — clichés and 套话 removed where the sentence stays whole
//     (众所周知，…; "at the end of the day, …") or replaced by the plain word
//     (总而言之 → 总之, "last but not least" → "finally").
//  6. keep — protected spans no rule edits: numbers, dates and time words,
//     names (capitalised words in English; the segmenter's person, place,
//     organisation and proper-noun tags, or a common surname before one or
//     two single characters, in Chinese), quotes (“…”, "…", 「…」, 『…』,
//     《…》), code (`…`), inline equations (U+FFFC, $…$), links, and the
//     facts of first-person sentences: in a sentence with 我/我们/I/we… and a
//     number, date, name or experience marker (曾, 过, 了; "once", a past
//     tense right after "I"/"we"), the first-person words, the numbers,
//     dates and names, and the fact words of keep.*.tsv (negations, hedges,
//     quantities, experience markers: "not", "almost", "about"; 没有, 基本上,
//     大约, 曾) are kept, and the wording around them is edited like any
//     other ("We made a decision to conduct an analysis of the data in
//     2023." → "We decided to analyze the data in 2023."). Result.Facts
//     lists the facts kept in the sentences the edits changed. A
//     restructuring rule may move a number, name, code span, link or
//     equation whole (a named agent), never change it; quotes and
//     first-person facts are never touched at all.
//
// # Matching
//
// Text is split into sentences where sentence.Ends (assistant/sentence)
// says they end — it knows titles, initials, abbreviations, decimals,
// versions, ellipses, closing quotes and full-width punctuation, and makes
// no end inside a quote, code span, link or equation — each edited as
// Chinese or English (detected
// per sentence unless the request forces one). Chinese is segmented into
// words with part-of-speech tags by github.com/go-ego/gse over the
// dictionary in dict/ (loaded once, lazily, on the first Chinese text), so
// rules match on word boundaries: 其实 is cut from 这个方案其实很简单 but not
// from 名副其实. English is split into words, and rule words match whole
// words, case-insensitively.
//
// # Callers' spans
//
// A caller that edits rich text says what the plain text does not show:
// Request.Keep marks spans no edit may touch (links, code and equation
// runs), Request.Within limits edits to a span while the rest of the
// segment is read as context (a selection inside a first-person fact stays
// protected), and Request.Breaks marks where the formatting changes, which
// an edit's changed text may not span. Later passes see these spans where
// the earlier edits moved them.
//
// # Invariants
//
//   - Sentences kept: every candidate edit is checked by checkInvariant
//     before it is accepted, and one that breaks it is dropped: the output
//     has exactly the input's sentences (none merged, none split; no edit
//     spans a sentence end), and each sentence holds its numbers, dates,
//     names, quotes, code, links, equations and first-person facts
//     verbatim. The tests run the same function over a corpus, random
//     paragraphs and a fuzz target.
//   - Deterministic: the same Request always gives the same Result.
//   - Idempotent: the rules run to a fixed point, so editing a Result's
//     segments again proposes nothing.
//   - Explained: each Change gives code-point offsets into the input
//     segment, the text before and after, and the rules that made it;
//     applying the changes to the input gives the output. Changes that
//     grew into each other (a filler cut, then a strong verb over it) are
//     one change naming both rules.
//   - Honest: a result without changes is NoChange with a Code and a
//     Reason; CanHonour says which personalizations and instructions the
//     rules can carry out at all (the editing preset and instructions such
//     as 精简 or "make it concise"), and refuses the rest (writing presets,
//     personas, 扩写, translation, "rewrite in a news style").
//   - Bounded: a request holds at most MaxSegments segments and MaxBytes of
//     text; work is linear in the text (a fixed number of passes).
//   - Safe for concurrent use.
package localedit
