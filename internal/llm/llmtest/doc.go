// Package llmtest is a fake OpenAI-compatible chat completions server for
// tests. It imitates real streamed traffic: the role only in the first
// delta, content deltas, a finish chunk with an empty delta, a usage chunk
// with empty choices, keep-alive comment lines, and "data: [DONE]". Each
// Scenario breaks that traffic the way real servers do: HTTP 401 and 429, an
// {"error":…} in the middle of the stream, a connection cut before the usage
// chunk, a server that sends no usage, CRLF line endings.
package llmtest
