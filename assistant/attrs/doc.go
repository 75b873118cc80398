// Package attrs is the attributes assistant: for an article it suggests a
// summary, a slug, a category and tags. It is a deliberately narrow task,
// kept apart from the writing assistant: it shares only the neutral
// provider plumbing (assistant.Gateway, llm.Provider) and never its
// context, persona or budget.
//
// Isolation is structural. Suggest's only input is an Input — the current
// title and FlowDocument, the site's category and tag names, and whether
// the article is private — which its caller reads from the draft and the
// publishing store; the package imports nothing that holds sessions,
// personas, style, learning or memory, and it writes no run, task or
// suggestion record. The messages sent are exactly Prompt(in): a fixed
// system prompt and one user message with the JSON of the title, the
// body's text blocks and the names.
//
// It has its own switch ([attributes] enabled), and the attributes
// category's own settings ([ai.attributes], dedicated, compat or mixed),
// policy and counters (quota category attributes); usage is booked with
// the ledger's safe path (BookSafe), so a failed booking keeps the answer
// and marks the statistics incomplete. Private and password-protected
// articles go to an external provider only when [privacy]
// send_private_to_provider allows it; the check is made before anything
// is sent. The local provider is not external: it is Local, the
// extractive engine of this package, which replaces llm.Local on the
// attributes route.
//
// The author adopts a suggestion by saving the attributes into the draft
// (repo.SaveDraft), like any human edit.
package attrs
