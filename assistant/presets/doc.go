// Package presets holds the data of Folio's built-in presets: ten writing
// presets ("这次想写成什么样": 清晰简洁, 自然口语, 深度分析, 技术教程, 新闻特写,
// 故事叙述, 观点评论, 学术严谨, 简报摘要, 随笔散文) and the editing preset
// "六条文章强化规则" ("这次准备怎么改"), one preset holding six rules.
//
// It is data only, embedded from builtin.toml: ids, names, descriptions,
// the prompt text sent to models, and each preset's source notes — where
// its guidance comes from. Storing, versioning, ordering and archiving
// presets belongs to the preset store, which seeds itself from Builtin.
//
// Invariants (checked by the tests): ids are unique and stable; every
// preset has a name, a description, a prompt and at least one source with a
// title and a note; the editing preset's rules are exactly the six rules of
// package localedit, in their order, so the local provider can run them.
package presets
