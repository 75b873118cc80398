// Package config loads Folio's configuration file (TOML) and applies
// environment overrides.
//
// The file is optional: without one every setting has its documented
// default (docs/config.md lists every key). Unknown keys are an error, so a
// misspelt setting is never silently ignored.
//
// # AI categories
//
// Model access is configured per category — [ai.writing], [ai.reading],
// [ai.attributes] — each with provider settings and limits. A key missing
// from a category section falls back to the legacy generic [ai] section,
// then to the built-in default. Environment variables override the file:
// FOLIO_AI_<KEY> overrides [ai] and FOLIO_AI_<CATEGORY>_<KEY> overrides the
// category section (KEY is PROVIDER, BASE_URL, MODEL, API_KEY or TIMEOUT;
// an empty variable counts as unset).
//
// Config.AICategory resolves one category and says where each key came from
// and, as a whole, whether the category runs on dedicated settings (keys set
// for the category itself, none taken from [ai]), compat (nothing set for
// the category, some keys from [ai]), mixed (some of each) or default
// (nothing set anywhere: the built-in defaults). Defaults are neutral: they
// make a category neither dedicated nor mixed. The fallback is therefore
// never silent: `folio ai check`, `folio usage` and the admin status print
// the source, and a category on the legacy [ai] section (compat, mixed) is
// warned about at start-up and in `folio usage` (LegacyAdvice).
//
// # Assistant switches
//
// [assistant] holds the writing assistant's master switch (enabled) and
// its per-entry switches (document, block, selection, section,
// writing_presets, editing_presets), all on by default. They gate new
// requests only; editing, history and restore never depend on them.
//
// Config is a plain struct: other parts of Folio add their sections next to
// Server, Checkpoint and Limits, with defaults in Default.
package config
