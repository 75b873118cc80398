// Package assistant is Folio's writing assistant: the model gateway and
// the service that turns an author's request into a suggestion the
// author accepts or rejects. The model never writes a body: an accepted
// suggestion becomes a version only through repo.CommitChange.
//
// # Service
//
// Service is the domain API every transport (HTTP, WebSocket, CLI) calls;
// it enforces every rule itself, so the transports inherit them.
// Transports authenticate and authorize document access before calling
// (every record carries its Doc for that); Actor.Admin gates the preset
// admin calls. Actor.UserID, the caller's immutable user id, keys what is
// the caller's own: sessions are per article and user (another user's
// session is answered as missing), runs are their requester's (and any
// admin's), idempotency keys are per article and user, and the per-user
// limits of the quota and the task runner count user ids. A user deleted
// and added again under the same name has a new id and so inherits none
// of it; names are only recorded, as a version's author is. The pipeline
// of one request (Assist):
//
//  1. checks: the [assistant] switches (assistant_disabled), exactly one
//     of persona, writing preset and editing preset or none
//     (personalization_conflict; a persona needs Options.Personas, else
//     persona_unavailable, and [persona] enabled, else persona_disabled), the
//     instruction (an editing preset with none gets
//     DefaultEditingInstruction), the scope against the draft, the writing
//     quota (quota.Policy.Check: a spent daily budget, the daily cap or a
//     full minute refuse now with the policy's code; concurrency is left
//     to run time);
//  2. an unsealed draft is sealed as a checkpoint with reason ai, and the
//     head becomes the baseline (version, fingerprint, anchor blocks);
//  3. under the document lock (repo.Locked), one synced batch: the user
//     message (version and scope it was made against), the session, the
//     Run (business fact: scope, instruction, pinned preset version,
//     baseline, prompt hash, frozen-context summary, idempotency key), its
//     Task (execution fact, task.Runner.EnqueueIn; its payload holds the
//     frozen conversation and the pin) and the run stream's queued event.
//
// A persona request pins, before the lock (personaFor), what its run may
// use: the persona's active version and, each only with its switch on,
// the style profile, the active learning rules, the memory retrieved for
// the instruction, the text in scope and its neighbours, and up to 3
// reference articles (package persona/reference, over the author's other
// published articles). The privacy switches are checked then, against
// the visibility the version pinned: a version built from a private or
// password source is refused without [privacy] send_private_to_provider
// (private_source_blocked), and memory whose evidence is such a source is
// withheld without private_memory. The run records the pin
// (Personalization.Persona: version, component ids, memory keys and
// counts, references by version); the task's payload freezes the text
// the model is given. A request without persona loads none of it.
//
// The runner executes the task (execute): it reads back the pinned preset
// version (checked against its content-derived id) and the baseline
// version, builds the prompt from the embedded, versioned prompt files,
// asks the model through the gateway for one JSON object (JSON Schema
// where the server supports it, then JSON mode, then extraction; one
// generic repair), applies domain repair and the scope's rules
// (parseAnswer), checks a persona run's answer (grounding, below), and
// commits the success in the task's own success batch
// (task.Runner.Complete) under the document lock: the run's outcome, the
// suggestion (pending, or conflicted at once when the baseline moved while
// the model answered), the assistant message, the usage events
// (quota.Ledger.BookInBatch) and the run and document events. Anything
// still invalid fails the run: no suggestion, never an empty document.
//
// Every call carries the request twice: as the prompt that remote models
// read, and as an llm.EditTask with the scope's baseline blocks, the
// selection's offsets, the instruction, the personalization and the
// editing preset's name and rule ids (editTask), for providers that edit
// blocks themselves. The local provider, the embedded default, answers
// that task with the same {"summary", "ops"} object the prompt asks a
// model for, or {"summary": <its reason>, "ops": []} when it cannot
// honour the request (a writing preset, a persona, an instruction its
// rules cannot carry out) or finds nothing to change. The conversion
// from the rule engine's code-point edits to operations on rich-text runs
// lives there, not here, so that this pipeline is provider-neutral: one
// extraction, domain repair, validation, suggestion and usage path for
// every provider, and no branch on which one answered. An empty ops list
// is a succeeded run with outcome no_change whose summary — the reason —
// is recorded in the run and said in the assistant message.
//
// Grounding (persona runs): every first-person identity, experience,
// time, place, number and outcome claim in the text the answer writes
// must be supported by the input (instruction, text in scope, its
// neighbours) or the memory provided (Ground). Unsupported claims get one
// re-ask that names them (its usage events have their own ids); if the
// second answer still has some, the run fails with grounding_failed and
// no suggestion. The run records the verdict (RunGrounding: pass, retry,
// claims, memory provided and used, references), the assistant message
// ends with "自动参考 N 篇 · 使用 Memory N 条" (details in the run), and
// the suggestion carries its closeness to the style profile (Burrows'
// Delta, package persona/style).
//
// A run's state follows its task's in the task's own transitions
// (KindOptions.OnTransition): started, retry, recovered_after_restart,
// interrupted, cancel_requested, failed and cancelled are written with the
// transition that causes them.
//
// Suggestions: Preview materializes the candidate against its baseline
// with a block and word diff; Accept calls CommitChange with the four
// baseline checks and the idempotency key "suggestion/<id>" (a repeat
// returns the first result; delete_block needs AcceptOptions.ConfirmDelete)
// and creates a revision (selection, block, section) or a new major
// (document) of kind accept_suggestion whose transaction names the
// suggestion; Reject sets the status and writes a rejected observation.
// The service's repo.ChangeHook runs inside every change of a document:
// it marks the accepted suggestion accepted (with an accepted observation)
// in the version's batch, marks every other pending suggestion whose
// baseline the change moved (a body change or a new version — exactly what
// would make CommitChange refuse it) conflicted with a
// suggestion.conflicted event, and at the next checkpoint after an accept
// writes an edited_after_accept observation for every produced block the
// author changed (hashes of the produced and the sealed content); every
// checkpoint or recovery of hand edits writes one manual_edit observation
// of the blocks it changed, attributed to the persona of the document's
// most recent suggestion (or to none).
//
// Explain returns the chain behind a version: transaction, suggestion,
// messages, run, task (attempts, retries, recoveries), usage and
// observations; a version made by hand says so.
//
// # Keys
//
// Under kv.PrefixTable, msgpack records (docs/objects.md has the table):
//
//	t/asess/<session>                           session
//	t/asessdoc/<doc>\x00<user id>\x00<updated 8>\x00<session> a user's sessions on a document by recency (empty)
//	t/amsg/<session>\x00<seq 8>                 message (immutable)
//	t/arun/<run>                                run (final once succeeded, failed or cancelled)
//	t/arunkey/<doc>\x00<user id>\x00<key>       run id of a user's request key
//	t/asug/<suggestion>                         suggestion
//	t/asugdoc/<doc>\x00<created 8>\x00<suggestion> a document's suggestions (empty)
//	t/asugpend/<doc>\x00<suggestion>            pending suggestions of a document (empty)
//	t/aprod/<doc>\x00<block>                    block produced by an accepted suggestion, until the next version
//	t/aobs/<suggestion>\x00<kind>\x00<block>    learning observation (immutable)
//	t/aobs/<doc>@<label>\x00manual_edit\x00      a checkpoint's hand edits (immutable)
//	t/aobsp/<persona>\x00<suggestion>\x00<kind>\x00<block> a persona run's observation (empty)
//	t/apreset/<preset>                          preset: current state, no prompt
//	t/apresetv/<preset>\x00<number 8>           preset version (immutable)
//	e/run:<run>\x00<seq 8>                      the run's events (package stream)
//	e/doc:<doc>\x00<seq 8>                      suggestion.* events, in the document's stream
//
// # Invariants
//
//   - A run and its task are created in one batch; a run's state changes
//     only inside its task's transitions; its success, suggestion,
//     assistant message and usage commit together with the task's success,
//     so a crash leaves a run either running (it runs again, booking usage
//     under the new attempt's id) or succeeded with all of them.
//   - A pending suggestion's baseline is current: every change that moves
//     it conflicts the suggestion in the change's own batch, and a
//     suggestion is created pending only under the document lock with its
//     baseline checked.
//   - Messages, observations, preset versions and finished runs never
//     change. A run pins its preset version (type, id, version id,
//     number) in the run and in the task payload, and the prompt's hash;
//     a pinned version whose content no longer matches its id fails the
//     run (corrupt).
//   - Every write commits with Sync before the call returns.
//
// # Gateway
//
// Gateway.Text and Gateway.Structured are the only way Folio talks to a
// model. A call names its category (writing, reading, attributes), which
// selects that category's provider and quota policy, and carries the trace
// of the work it belongs to (run id, task id, attempt), from which the
// usage event id is derived — so a retried attempt that books again books
// once. Each call:
//
//  1. reserves tokens in the category's policy (prompt estimate + answer
//     budget); a refusal is returned with the policy's own code, e.g.
//     writing_rate_limited;
//  2. streams the answer from the provider, passing pieces to OnText;
//  3. settles the reservation with the usage the provider reported, or
//     charges the reservation when it reported none (a stream cut);
//  4. books one usage event per model call: with BookSafe, or — when the
//     request sets DeferBooking — by returning the events so the caller
//     books them in its own batch with its business records. A failed call
//     has no business batch, so its usage is always booked with BookSafe.
//
// Structured asks for one JSON object (with Request.Schema, a provider
// that can constrain its answer to a JSON Schema does), extracts it from
// the model's text (ExtractJSON: plain, inside ``` fences or surrounded
// by prose, braces in strings handled), then runs the caller's domain
// validation.
//
// When no valid object can be extracted the gateway makes exactly one
// generic repair attempt: a re-ask that carries the model's previous answer
// and the parse error, asking for the object alone. A re-ask was chosen over
// a JSON-repair library because the failures that matter in practice — an
// answer cut off by the token limit, prose instead of JSON, a missing field
// a heuristic cannot invent — are fixed by the model, not by patching
// brackets and quotes; a repair library would silently accept guesses that
// then pass syntax but not meaning. It also adds no dependency. The repair
// call goes through the same policy and books its own usage. Domain
// validation failures are not re-asked here: domain repair belongs to the
// caller, which knows what a valid answer is.
//
// # Errors
//
// The service's errors are made with package errs; its specific codes are
// assistant_disabled, personalization_conflict, persona_unavailable,
// grounding_failed (persona runs; and the persona codes, e.g.
// private_source_blocked, persona_disabled, persona_not_generated),
// history_source_corrupt, suggestion_conflicted, suggestion_decided,
// delete_confirmation_required and preset_archived (see the Code
// constants). Gateway failures are *Error with a stable code: the quota
// codes (<category>_rate_limited, <category>_concurrency_limited,
// <category>_token_budget_exhausted), provider_unreachable,
// provider_unauthorized, provider_rate_limited, provider_bad_request,
// provider_error, provider_stream_cut, provider_timeout, output_not_json,
// output_invalid, cancelled and ai_not_configured; Error.Retryable and
// Error.RetryAfter tell the task runner whether and when to retry, and a
// failed run records the code. Each error also has a kind (package errs,
// see errors.go).
//
// Gateway.Check is `folio ai check`: one small request through a
// category's route, with a report and, on failure, one line that names
// the provider and what to change; the CLI and the daemon share it.
package assistant
