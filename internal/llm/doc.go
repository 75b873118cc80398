// Package llm is Folio's neutral adapter to text-generation models.
//
// A Provider streams the answer to a chat-style Request and reports the
// token usage the model charged. Two providers exist:
//
//   - openai: the OpenAI-compatible chat completions API with streaming
//     (OpenAI, Ollama, vLLM, llama.cpp server, …), written on net/http with a
//     small Server-Sent Events decoder (see Decoder).
//   - local: a deterministic offline provider that needs no network, the
//     embedded default: the rule-based Chinese and English editor of package
//     localedit. A Request's optional Task carries an editing request in
//     structured form for it; its rules are documented on Local. A Task
//     with a Scope (an article's blocks, as the writing assistant sends)
//     is answered in the writing assistant's own answer form, operations
//     on the blocks (see answerOps), so that the assistant treats the local
//     provider's answer exactly like a remote model's.
//
// The test double that echoes prompts is llmtest.Echo; it cannot be
// configured.
//
// # Structured answers
//
// A Request with JSON asks for one JSON object; with a Schema too, a
// provider that can constrain its answer to a JSON Schema does. The
// OpenAI-compatible provider sends response_format json_schema, falls back
// to json_object when the server refuses that (HTTP 400/422 naming the
// response format) and to the prompt alone when it refuses both; the
// downgrade is remembered per provider, logged once, and each stream
// reports the format it used (FormatReporter). Callers extract and check
// the object whatever the format (see package assistant).
//
// # Errors
//
// Every failure a provider reports is an *Error carrying a stable Code
// (unreachable, unauthorized, rate_limited, bad_request, server_error,
// stream_cut, timeout). Codes are append-only; callers branch on them, never
// on message text. Error.Retryable says whether trying again later can help,
// and Error.RetryAfter carries a provider's Retry-After.
//
// # Usage
//
// A Stream reports usage once it has ended (Next returned io.EOF). When the
// provider never sent usage — a server that ignores stream_options, or a
// stream cut before the usage chunk — Usage returns ok == false and the caller
// charges its reservation instead (see package quota).
//
// # Token counting
//
// CountTokens is the documented estimate used by the local provider and for
// reservations: every CJK ideograph, kana or Hangul syllable counts as one
// token; every other run of non-space characters counts as ceil(runes/4)
// tokens per word; whitespace is free. Input usage adds 3 tokens per message
// for the role framing, as OpenAI's chat format does; the local provider
// counts a Task as one more message (its instruction and the text it reads:
// its segments, or the plain text of its scope's text blocks).
package llm
