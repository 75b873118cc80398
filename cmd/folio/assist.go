package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/style"
	"github.com/urfave/cli/v2"
)

// assistBackend is the writing assistant as the CLI uses it. Direct mode
// implements it on the data directory (acting as FOLIO_USER with an
// admin's reach), --server mode on the daemon's API (as the token's
// user), so that both print the same. Each method reaches what the API's
// endpoint reaches: a run, suggestion or session on a document the caller
// may not reach is not found.
type assistBackend interface {
	Assist(ctx context.Context, req assistant.AssistRequest) (assistant.Queued, error)
	Run(ctx context.Context, id string) (assistant.Run, error)
	// WaitRun waits until run id is final. In direct mode it runs the
	// store's task runner in this process meanwhile; cancelling ctx stops
	// the wait (and, in direct mode, the runner: the run is requeued).
	WaitRun(ctx context.Context, id string) (assistant.Run, error)
	CancelRun(ctx context.Context, id string) (assistant.Run, error)
	RunEvents(ctx context.Context, id string, after uint64, limit int) (server.RunEventsPage, error)
	// FollowRun calls fn with every event of run id after the cursor until
	// the run is final (running the runner in direct mode, as WaitRun).
	FollowRun(ctx context.Context, id string, after uint64, fn func(server.RunEventView) error) error

	Sessions(ctx context.Context, doc string) ([]assistant.Session, error)
	StartSession(ctx context.Context, doc, title string) (assistant.Session, error)
	SwitchSession(ctx context.Context, doc, id string) (assistant.Session, error)
	Session(ctx context.Context, id string) (assistant.Session, error)
	Messages(ctx context.Context, session string, after uint64, limit int) ([]assistant.MessagePreview, error)
	MessageSource(ctx context.Context, session string, seq uint64) (assistant.MessageSource, error)

	Suggestions(ctx context.Context, doc string, status assistant.SuggestionStatus, limit int) ([]assistant.Suggestion, error)
	Suggestion(ctx context.Context, id string) (assistant.Suggestion, error)
	Preview(ctx context.Context, id string) (assistant.Preview, error)
	Accept(ctx context.Context, id string, o assistant.AcceptOptions) (assistant.Accepted, error)
	Reject(ctx context.Context, id, reason string) (assistant.Suggestion, error)

	Presets(ctx context.Context, t assistant.PresetType, archived bool) ([]server.PresetView, error)
	PresetDetail(ctx context.Context, id string) (assistant.PresetDetail, error)
	PresetVersion(ctx context.Context, id string, n int) (assistant.PresetVersion, error)
	CreatePreset(ctx context.Context, in assistant.PresetInput) (assistant.Preset, error)
	EditPreset(ctx context.Context, id string, in assistant.PresetInput) (assistant.Preset, error)
	CopyPreset(ctx context.Context, id, name string) (assistant.Preset, error)
	ReorderPresets(ctx context.Context, t assistant.PresetType, ids []string) ([]assistant.Preset, error)
	ArchivePreset(ctx context.Context, id string) (assistant.Preset, error)
	RestorePreset(ctx context.Context, id string) (assistant.Preset, error)

	Explain(ctx context.Context, doc, label string) (assistant.Explanation, error)
}

func init() { extraCommands = append(extraCommands, assistCommands()...) }

func assistCommands() []*cli.Command {
	text := []string{"text", "json"}
	return []*cli.Command{
		{
			Name:      "assist",
			Usage:     "ask the writing assistant for a suggestion on a document",
			ArgsUsage: "DOC",
			Description: "Queues a run; with --wait, waits for it and prints the suggestion (id, operations, diff) or why there is none.\n" +
				"In direct mode (--data) the run executes only while a task runner runs on the store: with --wait, this\n" +
				"command runs it until the run is final (Ctrl-C stops the wait; the run is requeued); without --wait it\n" +
				"stays queued until `folio serve` or a later `folio run show ID --wait` runs it.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "scope", Required: true, Usage: "`SCOPE`: document, block:ID, selection:ID:FROM:TO (code points) or section:ID..ID"},
				&cli.StringFlag{Name: "instruction", Usage: "what to do (`TEXT`; may be empty only with --editing-preset)"},
				&cli.StringFlag{Name: "writing-preset", Usage: "a writing preset `ID` (`folio preset list`)"},
				&cli.StringFlag{Name: "editing-preset", Usage: "an editing preset `ID` (e.g. six-rules)"},
				&cli.StringFlag{Name: "persona", Usage: "a persona `ID` (`folio persona list`); the run uses its active version"},
				&cli.StringFlag{Name: "session", Usage: "continue this session `ID` (default: the document's current one)"},
				&cli.StringFlag{Name: "key", Usage: "idempotency `KEY`: a repeated request with it answers the first run"},
				&cli.BoolFlag{Name: "wait", Usage: "wait for the run and print its outcome"},
				formatFlag("text", text...),
			},
			Action: withBackend(1, text, assistAction),
		},
		{
			Name:  "run",
			Usage: "show, wait for, cancel and follow assistant runs",
			Subcommands: []*cli.Command{
				{
					Name: "show", Usage: "show a run: state, model, prompt, pinned preset, outcome", ArgsUsage: "ID",
					Flags: []cli.Flag{
						&cli.BoolFlag{Name: "wait", Usage: "wait until the run is final (direct mode: runs the task runner meanwhile)"},
						formatFlag("text", text...),
					},
					Action: withBackend(1, text, runShowAction),
				},
				{
					Name: "cancel", Usage: "cancel a run (a running one stops when its model call does)", ArgsUsage: "ID",
					Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(1, text, runCancelAction),
				},
				{
					Name: "events", Usage: "list a run's events (queued, started, progress, retry, …)", ArgsUsage: "ID",
					Flags: []cli.Flag{
						&cli.Uint64Flag{Name: "after", Usage: "only events after this `SEQ`"},
						&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing until the run is final (direct mode: runs the task runner)"},
						formatFlag("text", text...),
					},
					Action: withBackend(1, text, runEventsAction),
				},
			},
		},
		{
			Name:  "suggestion",
			Usage: "list, show, accept and reject suggestions",
			Subcommands: []*cli.Command{
				{
					Name: "list", Usage: "a document's suggestions, newest first", ArgsUsage: "DOC",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "status", Usage: "only `STATUS`: pending, accepted, rejected or conflicted"},
						&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Usage: "at most `N` (default 50, at most 200)"},
						formatFlag("text", text...),
					},
					Action: withBackend(1, text, suggestionListAction),
				},
				{
					Name: "show", Usage: "a suggestion with its operations and its diff against its baseline", ArgsUsage: "ID",
					Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(1, text, suggestionShowAction),
				},
				{
					Name: "accept", Usage: "accept a suggestion: a new version through the baseline checks", ArgsUsage: "ID",
					Flags: []cli.Flag{
						&cli.BoolFlag{Name: "confirm-delete", Usage: "confirm that the suggestion deletes blocks"},
						formatFlag("text", text...),
					},
					Action: withBackend(1, text, suggestionAcceptAction),
				},
				{
					Name: "reject", Usage: "reject a suggestion (the article is untouched)", ArgsUsage: "ID",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "reason", Usage: "why (`TEXT`, at most 500 characters)"},
						formatFlag("text", text...),
					},
					Action: withBackend(1, text, suggestionRejectAction),
				},
			},
		},
		{
			Name:  "session",
			Usage: "the assistant's conversations about a document",
			Subcommands: []*cli.Command{
				{
					Name: "list", Usage: "your sessions on a document, the current one first", ArgsUsage: "DOC",
					Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(1, text, sessionListAction),
				},
				{
					Name: "show", Usage: "a session's messages (bounded previews), or one message in full", ArgsUsage: "ID",
					Flags: []cli.Flag{
						&cli.Uint64Flag{Name: "full", Usage: "print message `N` in full, with the original text it was about"},
						&cli.Uint64Flag{Name: "after", Usage: "only messages after `N`"},
						&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Usage: "at most `N` messages (default 50, at most 100)"},
						formatFlag("text", text...),
					},
					Action: withBackend(1, text, sessionShowAction),
				},
				{
					Name: "new", Usage: "start a new session on a document; it becomes the current one", ArgsUsage: "DOC",
					Flags:  []cli.Flag{&cli.StringFlag{Name: "title", Usage: "its `TITLE`"}, formatFlag("text", text...)},
					Action: withBackend(1, text, sessionNewAction),
				},
				{
					Name: "switch", Usage: "make a session the document's current one", ArgsUsage: "DOC ID",
					Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(2, text, sessionSwitchAction),
				},
			},
		},
		presetCommand(text),
		{
			Name:      "explain",
			Usage:     "the chain behind a version: transaction, suggestion, messages, run, task, usage",
			ArgsUsage: "DOC[@LABEL]",
			Flags:     []cli.Flag{formatFlag("text", text...)},
			Action:    withBackend(1, text, explainAction),
		},
	}
}

func presetCommand(text []string) *cli.Command {
	input := []cli.Flag{
		&cli.StringFlag{Name: "name", Usage: "the preset's `NAME`"},
		&cli.StringFlag{Name: "description", Usage: "one line for the selector (`TEXT`)"},
		&cli.StringFlag{Name: "prompt", Usage: "the prompt `TEXT`"},
		&cli.StringFlag{Name: "prompt-file", Usage: "read the prompt from `FILE` (- for standard input)"},
		&cli.StringFlag{Name: "from", Usage: "a JSON `FILE` with the fields (type, name, description, prompt, rules, sources); flags override it"},
		formatFlag("text", text...),
	}
	return &cli.Command{
		Name:  "preset",
		Usage: "writing and editing presets (changes and prompts: admins)",
		Subcommands: []*cli.Command{
			{
				Name: "list", Usage: "the presets a request may choose (no prompt text)", ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "type", Usage: "only `TYPE`: writing or editing"},
					&cli.BoolFlag{Name: "archived", Usage: "include archived presets"},
					formatFlag("text", text...),
				},
				Action: withBackend(0, text, presetListAction),
			},
			{
				Name: "show", Usage: "a preset with its prompt, rules, sources and versions (admins)", ArgsUsage: "ID",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "version", Usage: "show version `N` instead of the current one"},
					formatFlag("text", text...),
				},
				Action: withBackend(1, text, presetShowAction),
			},
			{
				Name: "add", Usage: "create a preset (admins)", ArgsUsage: " ",
				Flags:  append([]cli.Flag{&cli.StringFlag{Name: "type", Usage: "`TYPE`: writing or editing"}}, input...),
				Action: withBackend(0, text, presetAddAction),
			},
			{
				Name: "edit", Usage: "add a new version of a preset; runs that pinned an older one keep it (admins)", ArgsUsage: "ID",
				Flags: input, Action: withBackend(1, text, presetEditAction),
			},
			{
				Name: "copy", Usage: "copy a preset's current version into a new preset (admins)", ArgsUsage: "ID",
				Flags:  []cli.Flag{&cli.StringFlag{Name: "name", Usage: "the copy's `NAME` (default: the name with （副本）)"}, formatFlag("text", text...)},
				Action: withBackend(1, text, presetCopyAction),
			},
			{
				Name: "archive", Usage: "hide a preset from selectors and new requests; its versions stay readable (admins)", ArgsUsage: "ID",
				Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(1, text, presetArchiveAction(true)),
			},
			{
				Name: "restore", Usage: "bring an archived preset back (admins)", ArgsUsage: "ID",
				Flags: []cli.Flag{formatFlag("text", text...)}, Action: withBackend(1, text, presetArchiveAction(false)),
			},
			{
				Name: "reorder", Usage: "put presets of a type first, in the order given (admins)", ArgsUsage: "ID…",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "type", Required: true, Usage: "`TYPE`: writing or editing"},
					formatFlag("text", text...),
				},
				Action: presetReorderAction,
			},
		},
	}
}

// assistResult is `assist --format json`: the run (final with --wait), and
// with a suggestion, the suggestion and its diff.
type assistResult struct {
	Run assistant.Run `json:"run"`
	// Created is false when the idempotency key answered an earlier run.
	Created    bool                  `json:"created"`
	Session    string                `json:"session"`
	Checkpoint string                `json:"checkpoint,omitempty"` // the version sealed first (reason ai)
	Suggestion *assistant.Suggestion `json:"suggestion,omitempty"`
	Changes    []flowdoc.BlockChange `json:"changes,omitempty"`
}

func assistAction(c *cli.Context, a []string, format string, b backend) error {
	scope, err := assistant.ParseScope(c.String("scope"))
	if err != nil {
		return usagef("--scope: %s", errs.Message(err))
	}
	req := assistant.AssistRequest{Doc: a[0], Scope: scope, Instruction: c.String("instruction"),
		WritingPreset: c.String("writing-preset"), EditingPreset: c.String("editing-preset"), Persona: c.String("persona"),
		Session: c.String("session"), IdempotencyKey: c.String("key")}
	q, err := b.Assist(c.Context, req)
	if err != nil {
		return err
	}
	res := assistResult{Run: q.Run, Created: q.Created, Session: q.Session.ID}
	if q.Checkpoint != nil {
		res.Checkpoint = q.Checkpoint.Label
	}
	if c.Bool("wait") {
		if res.Run, err = b.WaitRun(c.Context, q.Run.ID); err != nil {
			return err
		}
		if res.Run.Suggestion != "" {
			pv, err := b.Preview(c.Context, res.Run.Suggestion)
			if err != nil {
				return err
			}
			res.Suggestion, res.Changes = &pv.Suggestion, pv.Changes
		}
	}
	w := c.App.Writer
	if format == "json" {
		if err := printJSON(w, res); err != nil {
			return err
		}
		if err := runFailure(res.Run); err != nil {
			return err
		}
		return offlineRefusal(res.Run)
	}
	if res.Checkpoint != "" {
		fmt.Fprintf(w, "sealed the unsealed draft as %s@%s (reason ai) first\n", a[0], res.Checkpoint)
	}
	if !res.Created {
		fmt.Fprintf(w, "this key was used before: run %s, asked against %s@%s (%s)\n", res.Run.ID, res.Run.Doc, res.Run.Base.Label, res.Run.Scope)
	} else {
		fmt.Fprintf(w, "queued run %s against %s@%s (%s) in session %s\n", res.Run.ID, res.Run.Doc, res.Run.Base.Label, res.Run.Scope, res.Session)
	}
	if !c.Bool("wait") {
		fmt.Fprintf(w, "state: %s; `folio run show %s --wait` waits for its outcome\n", res.Run.State, res.Run.ID)
		return nil
	}
	printOutcome(w, res.Run, res.Suggestion, res.Changes)
	if err := runFailure(res.Run); err != nil {
		return err
	}
	return offlineRefusal(res.Run)
}

// CodeNeedsModel is the error of a run that the offline local provider
// answered with "no change" because what it was asked (a writing preset,
// a persona, an instruction its rules do not do) needs a model provider:
// the CLI exits by kind disabled (9) instead of reporting success.
const CodeNeedsModel = "needs_model_provider"

// offlineRefusal is the error of a run the local provider could not do at
// all (the rule of llm.LocalHonours, which `preset list` shows up front);
// nil for any other run, a no-change one whose text simply needed no edit
// included.
func offlineRefusal(run assistant.Run) error {
	if run.State != assistant.RunSucceeded || run.Outcome != assistant.OutcomeNoChange || run.Provider != "local" {
		return nil
	}
	kind := ""
	switch run.Personalization.Kind {
	case assistant.PersonalizeWriting:
		kind = "writing"
	case assistant.PersonalizeEditing:
		kind = "editing"
	case assistant.PersonalizePersona:
		kind = "persona"
	}
	ok, reason := llm.LocalHonoursInstruction(kind, run.Instruction, nil)
	if ok {
		return nil
	}
	return errs.C(errs.Disabled, CodeNeedsModel, "run %s: the offline assistant cannot do this: %s (docs/ai.md, \"Connect a model\")", run.ID, reason)
}

// printOutcome prints what a final run produced: its suggestion with its
// operations and diff, no change with the reason, or its error.
func printOutcome(w io.Writer, run assistant.Run, sg *assistant.Suggestion, changes []flowdoc.BlockChange) {
	switch {
	case run.State == assistant.RunFailed:
		code, msg := "unknown", ""
		if run.Error != nil {
			code, msg = run.Error.Code, run.Error.Message
		}
		fmt.Fprintf(w, "run %s failed: %s: %s\n", run.ID, code, msg)
		for _, l := range personaLines(run) {
			fmt.Fprintf(w, "  %s\n", l)
		}
	case run.State == assistant.RunCancelled:
		fmt.Fprintf(w, "run %s was cancelled\n", run.ID)
	case run.State != assistant.RunSucceeded:
		fmt.Fprintf(w, "run %s is %s\n", run.ID, run.State)
	case run.Outcome == assistant.OutcomeNoChange:
		fmt.Fprintf(w, "run %s succeeded: no change proposed: %s\n", run.ID, run.Summary)
	case sg != nil:
		fmt.Fprintf(w, "run %s succeeded: suggestion %s (%s)\n", run.ID, sg.ID, sg.Status)
		if g := run.Grounding; g != nil {
			fmt.Fprintf(w, "%s (`folio run show %s` has the details)\n", g.Line(), run.ID)
		}
		if c := sg.Closeness; c != nil {
			fmt.Fprintf(w, "style closeness: %s\n", closenessText(*c))
		}
		printSuggestion(w, *sg, changes)
	default:
		fmt.Fprintf(w, "run %s succeeded: suggestion %s\n", run.ID, run.Suggestion)
	}
}

// printSuggestion prints a suggestion's summary, operations, diff and
// what to do with it.
func printSuggestion(w io.Writer, sg assistant.Suggestion, changes []flowdoc.BlockChange) {
	if sg.Summary != "" {
		fmt.Fprintf(w, "summary: %s\n", sg.Summary)
	}
	ops := make([]string, len(sg.Ops))
	for i, op := range sg.Ops {
		ops[i] = opText(op)
	}
	fmt.Fprintf(w, "ops: %s\n", strings.Join(ops, "; "))
	printChanges(w, changes)
	switch sg.Status {
	case assistant.StatusPending:
		confirm := ""
		if sg.Deletes {
			confirm = " --confirm-delete"
		}
		fmt.Fprintf(w, "accept: folio suggestion accept %s%s   reject: folio suggestion reject %s\n", sg.ID, confirm, sg.ID)
	case assistant.StatusConflicted:
		if sg.Conflict != nil {
			fmt.Fprintf(w, "conflicted: %s; ask again against the current version\n", sg.Conflict.Reason)
		}
	case assistant.StatusAccepted:
		fmt.Fprintf(w, "accepted as %s@%s by %s\n", sg.Doc, sg.Version, sg.DecidedBy)
	case assistant.StatusRejected:
		reason := ""
		if sg.RejectReason != "" {
			reason = ": " + sg.RejectReason
		}
		fmt.Fprintf(w, "rejected by %s%s\n", sg.DecidedBy, reason)
	}
}

// opText names an operation in one line.
func opText(op flowdoc.Op) string {
	switch op.Op {
	case flowdoc.ReplaceSelection:
		return fmt.Sprintf("%s %s [%d,%d)", op.Op, op.BlockID, op.Start, op.End)
	case flowdoc.InsertBefore, flowdoc.InsertAfter:
		if op.Block != nil {
			return fmt.Sprintf("%s %s (new %s %s)", op.Op, op.BlockID, op.Block.Type, op.Block.ID)
		}
	case flowdoc.ReplaceSection:
		if n := len(op.Blocks); n > 0 {
			return fmt.Sprintf("%s %s..%s (%s)", op.Op, op.Blocks[0].ID, op.Blocks[n-1].ID, plural(n, "block"))
		}
	case flowdoc.ReplaceDocument:
		if op.Document != nil {
			return fmt.Sprintf("%s (%s)", op.Op, plural(len(op.Document.Blocks), "block"))
		}
	}
	if op.BlockID != "" {
		return string(op.Op) + " " + op.BlockID
	}
	return string(op.Op)
}

// runFailure is the error a command ends with for a run that did not
// succeed: its recorded error, with the kind its code names.
func runFailure(run assistant.Run) error {
	switch run.State {
	case assistant.RunFailed:
		code, msg := "unknown", "no error was recorded"
		if run.Error != nil {
			code, msg = run.Error.Code, run.Error.Message
		}
		e := errs.C(kindOfRunCode(code), code, "run %s failed: %s", run.ID, msg)
		return e
	case assistant.RunCancelled:
		return errs.E(errs.Canceled, "run %s was cancelled", run.ID)
	}
	return nil
}

// kindOfRunCode is the kind of a failed run's error code: a kind's own
// name, a gateway code (whose kind the gateway decides) or a quota code;
// anything else is internal.
func kindOfRunCode(code string) errs.Kind {
	if k, ok := errs.KindFromCode(code); ok {
		return k
	}
	switch code {
	case assistant.CodeUnreachable, assistant.CodeUnauthorized, assistant.CodeRateLimited, assistant.CodeBadRequest,
		assistant.CodeProviderError, assistant.CodeStreamCut, assistant.CodeTimeout, assistant.CodeNotJSON,
		assistant.CodeInvalid, assistant.CodeCancelled, assistant.CodeNotConfigured:
		return (&assistant.Error{Code: code}).ErrKind()
	}
	switch code {
	case assistant.CodeGroundingFailed, persona.CodeSourceUnpublished, persona.CodeNotGenerated:
		return errs.Invalid
	case persona.CodeSourceChanged:
		return errs.Conflict
	case persona.CodePrivateSource:
		return errs.Forbidden
	case persona.CodeDisabled:
		return errs.Disabled
	}
	for _, suffix := range []string{"_rate_limited", "_concurrency_limited", "_token_budget_exhausted"} {
		if strings.HasSuffix(code, suffix) {
			return errs.RateLimited
		}
	}
	return errs.Internal
}

func runShowAction(c *cli.Context, a []string, format string, b backend) error {
	var run assistant.Run
	var err error
	if c.Bool("wait") {
		run, err = b.WaitRun(c.Context, a[0])
	} else {
		run, err = b.Run(c.Context, a[0])
	}
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, run)
	}
	printRun(c.App.Writer, run)
	return nil
}

// printRun prints a run: what was asked, against what, with what; how it
// ran; what it produced.
func printRun(w io.Writer, run assistant.Run) {
	tw := newTable(w)
	state := string(run.State)
	if run.CancelRequested && !run.State.Terminal() {
		state += " (cancel requested)"
	}
	fmt.Fprintf(tw, "run\t%s\t%s\n", run.ID, state)
	fmt.Fprintf(tw, "asked\tby %s at %s: %q%s\n", run.Actor, fmtTime(run.Created), run.Instruction, defaulted(run))
	fmt.Fprintf(tw, "against\t%s@%s (%s), session %s\n", run.Doc, run.Base.Label, run.Scope, run.Session)
	fmt.Fprintf(tw, "with\t%s\n", persText(run.Personalization))
	for _, l := range personaLines(run) {
		fmt.Fprintf(tw, "\t%s\n", l)
	}
	fmt.Fprintf(tw, "prompt\t%s %s, sha256 %s\n", run.Prompt.Name, run.Prompt.Version, run.Prompt.Hash)
	fmt.Fprintf(tw, "context\t%s\n", contextText(run.Context))
	fmt.Fprintf(tw, "task\t%s: %s, %s, %s\n", run.Task, plural(run.Attempts, "attempt"), counted(run.Retries, "retry", "retries"), counted(run.Recoveries, "recovery", "recoveries"))
	if run.Provider != "" {
		model := fmt.Sprintf("%s/%s (%s settings)", run.Provider, run.Model, run.Source)
		if run.ResponseFormat != "" {
			model += ", format " + run.ResponseFormat
		}
		if run.Repaired {
			model += ", JSON repaired once"
		}
		if len(run.DomainRepairs) > 0 {
			model += ", repairs: " + strings.Join(run.DomainRepairs, "; ")
		}
		fmt.Fprintf(tw, "model\t%s\n", model)
		est := ""
		if run.UsageEstimated {
			est = " (estimated)"
		}
		fmt.Fprintf(tw, "usage\t%d input, %d output, %d total tokens%s\n", run.Usage.Input, run.Usage.Output, run.Usage.Total, est)
	}
	switch {
	case run.State == assistant.RunQueued:
		fmt.Fprintf(tw, "outcome\tnone yet: queued for a task runner (the daemon runs it; in direct mode `folio run show %s --wait` does)\n", run.ID)
	case run.State == assistant.RunRunning:
		fmt.Fprintf(tw, "outcome\tnone yet: running\n")
	case run.Outcome == assistant.OutcomeSuggestion:
		fmt.Fprintf(tw, "outcome\tsuggestion %s (`folio suggestion show %s`)\n", run.Suggestion, run.Suggestion)
	case run.Outcome == assistant.OutcomeNoChange:
		fmt.Fprintf(tw, "outcome\tno change proposed: %s\n", run.Summary)
	case run.State == assistant.RunCancelled:
		fmt.Fprintf(tw, "outcome\tcancelled\n")
	}
	if run.Error != nil {
		label := "error"
		if !run.State.Terminal() || run.State == assistant.RunSucceeded {
			label = "last error"
		}
		fmt.Fprintf(tw, "%s\t%s: %s\n", label, run.Error.Code, run.Error.Message)
	}
	if run.Finished != 0 {
		fmt.Fprintf(tw, "finished\t%s\n", fmtTime(run.Finished))
	}
	tw.Flush()
}

func defaulted(run assistant.Run) string {
	if run.DefaultInstruction {
		return " (the editing preset's default instruction)"
	}
	return ""
}

// persText names a run's personalization and the preset version it pinned.
func persText(p assistant.Personalization) string {
	if pp := p.Persona; pp != nil {
		if pp.Version == "" {
			return "persona " + pp.ID
		}
		return fmt.Sprintf("persona %s %q version %d (%s)", pp.ID, pp.Name, pp.Seq, pp.Version)
	}
	if p.Preset == nil {
		if p.Kind == "" || p.Kind == assistant.PersonalizeNone {
			return "no preset or persona"
		}
		return string(p.Kind)
	}
	return fmt.Sprintf("%s preset %s %q version %d (%s)", p.Preset.Type, p.Preset.ID, p.Preset.Name, p.Preset.Number, p.Preset.VersionID)
}

// personaLines describe what a persona run pinned and its grounding:
// the components, the memory provided and used, the references, and the
// verdict.
func personaLines(run assistant.Run) []string {
	pp := run.Personalization.Persona
	if pp == nil || pp.Version == "" {
		return nil
	}
	orNone := func(s string) string {
		if s == "" {
			return "none"
		}
		return s
	}
	out := []string{fmt.Sprintf("style profile %s, learning %s (%s), memory %s",
		orNone(pp.Style), orNone(pp.Learning), plural(len(pp.LearningRules), "active rule"), orNone(pp.Memory))}
	mem := fmt.Sprintf("memory provided: %d of %d matched", len(pp.MemoryKeys), pp.MemoryMatched)
	if pp.MemoryWithheld > 0 {
		mem += fmt.Sprintf(" (%d withheld: private sources)", pp.MemoryWithheld)
	}
	if len(pp.MemoryKeys) > 0 {
		mem += ": " + strings.Join(pp.MemoryKeys, " ")
	}
	out = append(out, mem)
	for _, ms := range pp.MemorySources {
		out = append(out, fmt.Sprintf("memory source %s@%s (%s): %s", ms.Doc, ms.Label, ms.Version.Short(), strings.Join(ms.Items, " ")))
	}
	for _, r := range pp.References {
		out = append(out, fmt.Sprintf("reference %s@%s (%s) %q score %.2f: %s", r.Doc, r.Label, r.Version.Short(), r.Title, r.Score, strings.Join(r.Reasons, "; ")))
	}
	if g := run.Grounding; g != nil {
		verdict := "passed"
		if !g.Pass {
			verdict = "failed"
		}
		if g.Retried {
			verdict += " after one retry"
		}
		out = append(out, fmt.Sprintf("grounding %s: %s checked; %s · memory used: %s", verdict, plural(g.Checked, "claim"), g.Line(), orNone(strings.Join(g.UsedMemory, " "))))
		for _, c := range g.RetryClaims {
			out = append(out, fmt.Sprintf("  retried for %q: %s", c.Text, strings.Join(c.Unsupported, "; ")))
		}
		if !g.Pass {
			for _, c := range g.Claims {
				out = append(out, fmt.Sprintf("  unsupported %q: %s", c.Text, strings.Join(c.Unsupported, "; ")))
			}
		}
	}
	return out
}

// closenessText is a suggestion's style closeness.
func closenessText(c style.Closeness) string {
	s := fmt.Sprintf("Burrows' Delta %.2f over %d words", c.Delta, c.Units)
	if c.Percentile >= 0 {
		s += fmt.Sprintf(", closer than %.0f%% of the persona's own sources", c.Percentile*100)
	}
	if !c.Reliable {
		s += " (too short to be reliable)"
	}
	return s
}

func contextText(cs assistant.ContextSummary) string {
	s := fmt.Sprintf("%d messages scanned: %d in full (%d cut), %d summarised, %d omitted", cs.Scanned, cs.Full, cs.Truncated, cs.Summarized, cs.Omitted)
	for _, st := range []assistant.SuggestionStatus{assistant.StatusPending, assistant.StatusAccepted, assistant.StatusRejected, assistant.StatusConflicted} {
		if n := cs.Statuses[st]; n > 0 {
			s += fmt.Sprintf(", %d %s", n, st)
		}
	}
	return s
}

func runCancelAction(c *cli.Context, a []string, format string, b backend) error {
	run, err := b.CancelRun(c.Context, a[0])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, run)
	}
	w := c.App.Writer
	switch {
	case run.State == assistant.RunCancelled:
		fmt.Fprintf(w, "run %s cancelled\n", run.ID)
	case run.State.Terminal():
		fmt.Fprintf(w, "run %s had already %s; nothing to cancel\n", run.ID, run.State)
	default:
		fmt.Fprintf(w, "cancel requested: run %s stops when its model call does (its answer, if it comes first, is not kept)\n", run.ID)
	}
	return nil
}

func runEventsAction(c *cli.Context, a []string, format string, b backend) error {
	w := c.App.Writer
	after := c.Uint64("after")
	emit := func(ev server.RunEventView) error {
		if format == "json" {
			b, err := compactJSON(ev)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(w, "%s\n", b)
			return err
		}
		_, err := fmt.Fprintf(w, "%d\t%s\t%s%s\n", ev.Seq, fmtTime(ev.Time), ev.Type, eventDetail(ev.Data))
		return err
	}
	if c.Bool("follow") {
		return b.FollowRun(c.Context, a[0], after, emit)
	}
	for {
		page, err := b.RunEvents(c.Context, a[0], after, 0)
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			if err := emit(ev); err != nil {
				return err
			}
			after = ev.Seq
		}
		if !page.More {
			return nil
		}
	}
}

// eventDetail is what a run event adds to its type, on one line.
func eventDetail(d assistant.RunEvent) string {
	var parts []string
	if d.Attempt > 0 {
		parts = append(parts, fmt.Sprintf("attempt %d", d.Attempt))
	}
	if d.DelayMs > 0 {
		parts = append(parts, fmt.Sprintf("in %d ms", d.DelayMs))
	}
	if d.RateLimited {
		parts = append(parts, "rate limited")
	}
	if d.Code != "" {
		parts = append(parts, d.Code+": "+d.Message)
	}
	if d.Outcome != "" {
		parts = append(parts, "outcome "+d.Outcome)
	}
	if d.Suggestion != "" {
		parts = append(parts, "suggestion "+d.Suggestion)
	}
	if d.Usage != nil {
		parts = append(parts, fmt.Sprintf("%d tokens", d.Usage.Total))
	}
	if d.Text != "" {
		parts = append(parts, strconv.Quote(firstWords(d.Text, 60)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "\t" + strings.Join(parts, ", ")
}

func suggestionListAction(c *cli.Context, a []string, format string, b backend) error {
	st, err := server.ParseSuggestionStatus(c.String("status"))
	if err != nil {
		return usagef("--status: %s", errs.Message(err))
	}
	n := c.Int("limit")
	if n < 0 {
		return usagef("--limit must not be negative")
	}
	sgs, err := b.Suggestions(c.Context, a[0], st, n)
	if err != nil {
		return err
	}
	if sgs == nil {
		sgs = []assistant.Suggestion{}
	}
	if format == "json" {
		return printJSON(c.App.Writer, sgs)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "ID\tSTATUS\tSCOPE\tBASE\tOPS\tCREATED\tSUMMARY")
	for _, sg := range sgs {
		status := string(sg.Status)
		if sg.Status == assistant.StatusAccepted && sg.Version != "" {
			status += " as " + sg.Version
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", sg.ID, status, sg.Scope, sg.Base.Label, len(sg.Ops), fmtTime(sg.Created), firstWords(sg.Summary, 60))
	}
	return tw.Flush()
}

func suggestionShowAction(c *cli.Context, a []string, format string, b backend) error {
	pv, err := b.Preview(c.Context, a[0])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, pv)
	}
	w := c.App.Writer
	sg := pv.Suggestion
	if sg.Run == "" {
		fmt.Fprintf(w, "suggestion %s (%s) on %s@%s (%s), written by %s\n", sg.ID, sg.Status, sg.Doc, sg.Base.Label, sg.Scope, sg.Agent)
	} else {
		fmt.Fprintf(w, "suggestion %s (%s) on %s@%s (%s), run %s\n", sg.ID, sg.Status, sg.Doc, sg.Base.Label, sg.Scope, sg.Run)
		if sg.Agent != nil {
			fmt.Fprintf(w, "asked for by %s\n", sg.Agent)
		}
	}
	fmt.Fprintf(w, "with %s\n", persText(sg.Personalization))
	if c := sg.Closeness; c != nil {
		fmt.Fprintf(w, "style closeness: %s\n", closenessText(*c))
	}
	if sg.Status == assistant.StatusPending && !pv.Current {
		fmt.Fprintln(w, "note: the article moved since this baseline; accepting will be refused")
	}
	printSuggestion(w, sg, pv.Changes)
	return nil
}

func suggestionAcceptAction(c *cli.Context, a []string, format string, b backend) error {
	acc, err := b.Accept(c.Context, a[0], assistant.AcceptOptions{ConfirmDelete: c.Bool("confirm-delete")})
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, acc)
	}
	fmt.Fprintf(c.App.Writer, "accepted suggestion %s as %s@%s\n", acc.Suggestion.ID, acc.Version.Doc, acc.Version.Label)
	return nil
}

func suggestionRejectAction(c *cli.Context, a []string, format string, b backend) error {
	sg, err := b.Reject(c.Context, a[0], c.String("reason"))
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, sg)
	}
	fmt.Fprintf(c.App.Writer, "rejected suggestion %s; %s is unchanged\n", sg.ID, sg.Doc)
	return nil
}

func sessionListAction(c *cli.Context, a []string, format string, b backend) error {
	ss, err := b.Sessions(c.Context, a[0])
	if err != nil {
		return err
	}
	if ss == nil {
		ss = []assistant.Session{}
	}
	if format == "json" {
		return printJSON(c.App.Writer, ss)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "\tID\tUPDATED\tMESSAGES\tTITLE")
	for i, s := range ss {
		cur := ""
		if i == 0 {
			cur = "*" // the one the document resumes
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", cur, s.ID, fmtTime(s.Updated), s.Messages, s.Title)
	}
	return tw.Flush()
}

func sessionShowAction(c *cli.Context, a []string, format string, b backend) error {
	w := c.App.Writer
	if n := c.Uint64("full"); n > 0 {
		src, err := b.MessageSource(c.Context, a[0], n)
		if err != nil {
			return err
		}
		if format == "json" {
			return printJSON(w, src)
		}
		m := src.Message
		fmt.Fprintf(w, "message %d of session %s: %s at %s\n", m.Seq, m.Session, messageWho(m), fmtTime(m.Time))
		fmt.Fprintf(w, "about %s@%s (%s)\n", m.Doc, m.Label, m.Scope)
		fmt.Fprintf(w, "\n%s\n", m.Text)
		fmt.Fprintf(w, "\noriginal text:\n%s\n", src.Text)
		return nil
	}
	n := c.Int("limit")
	if n < 0 {
		return usagef("--limit must not be negative")
	}
	ss, err := b.Session(c.Context, a[0])
	if err != nil {
		return err
	}
	ms, err := b.Messages(c.Context, a[0], c.Uint64("after"), n)
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []assistant.MessagePreview{}
	}
	if format == "json" {
		return printJSON(w, map[string]any{"session": ss, "messages": ms})
	}
	fmt.Fprintf(w, "session %s on %s: %s, %s\n", ss.ID, ss.Doc, plural(int(ss.Messages), "message"), quotedTitle(ss.Title))
	for _, m := range ms {
		fmt.Fprintf(w, "\n#%d %s at %s", m.Seq, messageWho(m.Message), fmtTime(m.Time))
		switch {
		case m.Role == assistant.RoleUser:
			fmt.Fprintf(w, ", about %s@%s (%s)", m.Doc, m.Label, m.Scope)
			if m.Personalization != nil && m.Personalization.Preset != nil {
				fmt.Fprintf(w, ", %s", persText(*m.Personalization))
			}
		case m.Suggestion != "":
			fmt.Fprintf(w, ", suggestion %s (%s)", m.Suggestion, m.Status)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  %s%s\n", oneLine(m.Text), cut(m.TextTruncated))
		if m.Role == assistant.RoleUser {
			if m.Source.Error != "" {
				fmt.Fprintf(w, "  source: unavailable (%s)\n", m.Source.Error)
			} else {
				fmt.Fprintf(w, "  source: %s%s\n", oneLine(m.Source.Text), cut(m.Source.Truncated))
			}
		}
	}
	return nil
}

func messageWho(m assistant.Message) string {
	if m.Role == assistant.RoleUser && m.Actor != "" {
		return "user " + m.Actor
	}
	return string(m.Role)
}

func quotedTitle(t string) string {
	if t == "" {
		return "untitled"
	}
	return strconv.Quote(t)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func cut(truncated bool) string {
	if truncated {
		return "…"
	}
	return ""
}

func sessionNewAction(c *cli.Context, a []string, format string, b backend) error {
	ss, err := b.StartSession(c.Context, a[0], c.String("title"))
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, ss)
	}
	fmt.Fprintf(c.App.Writer, "started session %s on %s; it is the current one\n", ss.ID, ss.Doc)
	return nil
}

func sessionSwitchAction(c *cli.Context, a []string, format string, b backend) error {
	ss, err := b.SwitchSession(c.Context, a[0], a[1])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, ss)
	}
	fmt.Fprintf(c.App.Writer, "session %s is now the current one on %s\n", ss.ID, ss.Doc)
	return nil
}

func presetListAction(c *cli.Context, _ []string, format string, b backend) error {
	t, err := server.ParsePresetType(c.String("type"))
	if err != nil {
		return usagef("--type: %s", errs.Message(err))
	}
	ps, err := b.Presets(c.Context, t, c.Bool("archived"))
	if err != nil {
		return err
	}
	if ps == nil {
		ps = []server.PresetView{}
	}
	if format == "json" {
		return printJSON(c.App.Writer, ps)
	}
	printPresetViews(c.App.Writer, ps)
	return nil
}

func printPresets(w io.Writer, ps []assistant.Preset) {
	vs := make([]server.PresetView, len(ps))
	for i, p := range ps {
		vs[i] = server.PresetView{Preset: p}
	}
	printPresetViews(w, vs)
}

// printPresetViews prints presets; when the writing assistant runs on the
// offline local provider (the views carry offline notes), it says first
// which presets edit offline and which need a model provider, and marks
// each (the rule of llm.LocalHonours, the same the presets API states).
func printPresetViews(w io.Writer, ps []server.PresetView) {
	offline := false
	var edits []string
	for _, p := range ps {
		if p.Offline != nil {
			offline = true
			if p.Offline.Edits {
				edits = append(edits, p.ID)
			}
		}
	}
	if offline {
		only := "none of these presets"
		if len(edits) > 0 {
			only = "only " + strings.Join(edits, ", ")
		}
		fmt.Fprintf(w, "The writing assistant runs offline (provider local, no model configured): %s edits text;\n"+
			"presets marked \"needs a model\" and personas answer no change until a model provider is connected\n"+
			"(docs/ai.md, \"Connect a model\").\n\n", only)
	}
	tw := newTable(w)
	if offline {
		fmt.Fprintln(tw, "ID\tTYPE\tVERSION\tOFFLINE\tNAME\tDESCRIPTION")
	} else {
		fmt.Fprintln(tw, "ID\tTYPE\tVERSION\tNAME\tDESCRIPTION")
	}
	for _, p := range ps {
		name := p.Name
		if p.Archived {
			name += " (archived)"
		}
		if !offline {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", p.ID, p.Type, p.Version.Number, name, firstWords(p.Description, 50))
			continue
		}
		mark := "needs a model"
		if p.Offline != nil && p.Offline.Edits {
			mark = "edits"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", p.ID, p.Type, p.Version.Number, mark, name, firstWords(p.Description, 50))
	}
	tw.Flush()
}

func presetShowAction(c *cli.Context, a []string, format string, b backend) error {
	w := c.App.Writer
	if n := c.Int("version"); c.IsSet("version") {
		if n < 1 {
			return usagef("--version: versions are numbered from 1")
		}
		v, err := b.PresetVersion(c.Context, a[0], n)
		if err != nil {
			return err
		}
		if format == "json" {
			return printJSON(w, v)
		}
		printPresetVersion(w, v)
		return nil
	}
	d, err := b.PresetDetail(c.Context, a[0])
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(w, d)
	}
	state := ""
	if d.Preset.Archived {
		state = ", archived"
	}
	if d.Preset.Builtin {
		state += ", built in"
	}
	fmt.Fprintf(w, "preset %s (%s%s), order %d\n", d.Preset.ID, d.Preset.Type, state, d.Preset.Order)
	printPresetVersion(w, d.Current)
	fmt.Fprintf(w, "\nversions:\n")
	for _, v := range d.Versions {
		fmt.Fprintf(w, "  %d  %s  %s  %s\n", v.Number, v.ID, fmtTime(v.Time), v.Author)
	}
	return nil
}

func printPresetVersion(w io.Writer, v assistant.PresetVersion) {
	fmt.Fprintf(w, "%s — version %d (%s) by %s at %s\n", v.Name, v.Meta.Number, v.Meta.ID, v.Meta.Author, fmtTime(v.Meta.Time))
	if v.CopiedFrom != "" {
		fmt.Fprintf(w, "copied from %s\n", v.CopiedFrom)
	}
	if v.Description != "" {
		fmt.Fprintf(w, "%s\n", v.Description)
	}
	fmt.Fprintf(w, "\nprompt:\n%s\n", strings.TrimRight(v.Prompt, "\n"))
	if len(v.Rules) > 0 {
		fmt.Fprintf(w, "\nrules:\n")
		for i, r := range v.Rules {
			id := ""
			if r.ID != "" {
				id = " [" + r.ID + "]"
			}
			fmt.Fprintf(w, "  %d. %s%s: %s\n", i+1, r.Name, id, r.Instruction)
		}
	}
	if len(v.Sources) > 0 {
		fmt.Fprintf(w, "\nsources:\n")
		for _, s := range v.Sources {
			by := ""
			if s.Author != "" {
				by = ", " + s.Author
			}
			if s.Year != "" {
				by += ", " + s.Year
			}
			fmt.Fprintf(w, "  %s%s", s.Title, by)
			if s.Note != "" {
				fmt.Fprintf(w, ": %s", s.Note)
			}
			fmt.Fprintln(w)
		}
	}
}

// maxPresetFile bounds a preset file or prompt file read by the CLI.
const maxPresetFile = 1 << 20

// readSmall reads a file ("-": standard input) of at most maxPresetFile bytes.
func readSmall(path string) ([]byte, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, errs.E(errs.Invalid, "read %s: %v", path, err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPresetFile+1))
	if err != nil {
		return nil, errs.E(errs.Invalid, "read %s: %v", path, err)
	}
	if len(data) > maxPresetFile {
		return nil, errs.E(errs.TooLarge, "%s is larger than %d bytes", path, maxPresetFile)
	}
	return data, nil
}

// presetInput gathers a preset's fields from --from and the flags.
func presetInput(c *cli.Context) (assistant.PresetInput, error) {
	var in assistant.PresetInput
	if f := c.String("from"); f != "" {
		data, err := readSmall(f)
		if err != nil {
			return in, err
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return in, errs.E(errs.Invalid, "%s: %v (want a JSON object with type, name, description, prompt, rules, sources)", f, err)
		}
	}
	if c.IsSet("type") {
		in.Type = assistant.PresetType(c.String("type"))
	}
	if c.IsSet("name") {
		in.Name = c.String("name")
	}
	if c.IsSet("description") {
		in.Description = c.String("description")
	}
	if c.IsSet("prompt") && c.IsSet("prompt-file") {
		return in, usagef("give --prompt or --prompt-file, not both")
	}
	if c.IsSet("prompt") {
		in.Prompt = c.String("prompt")
	}
	if f := c.String("prompt-file"); f != "" {
		data, err := readSmall(f)
		if err != nil {
			return in, err
		}
		if !utf8.Valid(data) {
			return in, errs.E(errs.Invalid, "%s is not UTF-8 text", f)
		}
		in.Prompt = string(data)
	}
	return in, nil
}

func printPreset(w io.Writer, format, verb string, p assistant.Preset) error {
	if format == "json" {
		return printJSON(w, p)
	}
	archived := ""
	if p.Archived {
		archived = ", archived"
	}
	_, err := fmt.Fprintf(w, "%s %s preset %s %q, version %d%s\n", verb, p.Type, p.ID, p.Name, p.Version.Number, archived)
	return err
}

func presetAddAction(c *cli.Context, _ []string, format string, b backend) error {
	in, err := presetInput(c)
	if err != nil {
		return err
	}
	if in.Type == "" {
		return usagef("preset add needs --type writing or editing (or a type in --from)")
	}
	p, err := b.CreatePreset(c.Context, in)
	if err != nil {
		return err
	}
	return printPreset(c.App.Writer, format, "created", p)
}

func presetEditAction(c *cli.Context, a []string, format string, b backend) error {
	in, err := presetInput(c)
	if err != nil {
		return err
	}
	p, err := b.EditPreset(c.Context, a[0], in)
	if err != nil {
		return err
	}
	return printPreset(c.App.Writer, format, "edited", p)
}

func presetCopyAction(c *cli.Context, a []string, format string, b backend) error {
	p, err := b.CopyPreset(c.Context, a[0], c.String("name"))
	if err != nil {
		return err
	}
	return printPreset(c.App.Writer, format, "created", p)
}

func presetArchiveAction(archived bool) func(*cli.Context, []string, string, backend) error {
	return func(c *cli.Context, a []string, format string, b backend) error {
		op, verb := b.RestorePreset, "restored"
		if archived {
			op, verb = b.ArchivePreset, "archived"
		}
		p, err := op(c.Context, a[0])
		if err != nil {
			return err
		}
		return printPreset(c.App.Writer, format, verb, p)
	}
}

func presetReorderAction(c *cli.Context) error {
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	ids := c.Args().Slice()
	if len(ids) == 0 {
		return usagef("%s needs the preset ids in their new order", cmdName(c))
	}
	t, err := server.ParsePresetType(c.String("type"))
	if err != nil || t == "" {
		return usagef("--type must be writing or editing")
	}
	b, err := openBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	ps, err := b.ReorderPresets(c.Context, t, ids)
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, ps)
	}
	printPresets(c.App.Writer, ps)
	return nil
}

func explainAction(c *cli.Context, a []string, format string, b backend) error {
	doc, label := repo.ParseRef(a[0])
	e, err := b.Explain(c.Context, doc, label)
	if err != nil {
		return err
	}
	if format == "json" {
		return printJSON(c.App.Writer, e)
	}
	printExplanation(c.App.Writer, e)
	return nil
}

// printExplanation prints the chain behind a version, one part per
// paragraph: transaction → suggestion → messages → run → task → usage.
func printExplanation(w io.Writer, e assistant.Explanation) {
	v := e.Version
	fmt.Fprintf(w, "%s@%s  %s  %s by %s at %s\n", e.Doc, v.Label, v.Hash.Short(), kindText(v), v.Author, fmtTime(v.Time))
	fmt.Fprintf(w, "%s\n", e.Note)
	t := e.Txn
	fmt.Fprintf(w, "\ntransaction %s: %s by %s", t.ID.Short(), t.Kind, t.Actor)
	if t.Reason != "" {
		fmt.Fprintf(w, " (%s)", t.Reason)
	}
	if !t.BaseVersion.IsZero() {
		fmt.Fprintf(w, ", base %s", t.BaseVersion.Short())
	}
	if !t.BaseFingerprint.IsZero() {
		fmt.Fprintf(w, ", base fingerprint %s", t.BaseFingerprint.Short())
	}
	if !t.OrigBase.IsZero() {
		fmt.Fprintf(w, ", carried over from base %s (fingerprint %s)", t.OrigBase.Short(), t.OrigBaseFingerprint.Short())
	}
	if t.IdempotencyKey != "" {
		fmt.Fprintf(w, ", key %s", t.IdempotencyKey)
	}
	fmt.Fprintln(w)
	for _, ev := range t.Events {
		fmt.Fprintf(w, "  %s %s", ev.Op, ev.Block)
		if !ev.Before.IsZero() {
			fmt.Fprintf(w, " %s", ev.Before.Short())
		}
		if !ev.After.IsZero() {
			fmt.Fprintf(w, " -> %s", ev.After.Short())
		}
		fmt.Fprintln(w)
	}
	if e.ByHand {
		printObservations(w, e.Observations)
		return
	}
	if sg := e.Suggestion; sg != nil {
		fmt.Fprintf(w, "\nsuggestion %s: %s, %s against %s@%s, %s\n", sg.ID, sg.Status, sg.Scope, sg.Doc, sg.Base.Label, plural(len(sg.Ops), "operation"))
		ops := make([]string, len(sg.Ops))
		for i, op := range sg.Ops {
			ops[i] = opText(op)
		}
		fmt.Fprintf(w, "  ops: %s\n", strings.Join(ops, "; "))
		if sg.Agent != nil {
			fmt.Fprintf(w, "  source: %s\n", sg.Agent)
		}
		if c := sg.Carried; c != nil {
			fmt.Fprintf(w, "  carried over from %s to %s: the blocks it watches were unchanged, edits elsewhere kept\n", c.From.Label, c.To.Label)
		}
		if sg.Summary != "" {
			fmt.Fprintf(w, "  summary: %s\n", oneLine(sg.Summary))
		}
	}
	if len(e.Messages) > 0 {
		fmt.Fprintf(w, "\nmessages:\n")
		for _, m := range e.Messages {
			text, cutoff := clipText(oneLine(m.Text), assistant.PreviewChars)
			fmt.Fprintf(w, "  #%d %s at %s: %s%s\n", m.Seq, messageWho(m), fmtTime(m.Time), text, cut(cutoff))
		}
	}
	if run := e.Run; run != nil {
		fmt.Fprintf(w, "\nrun %s: %s, session %s\n", run.ID, run.State, run.Session)
		fmt.Fprintf(w, "  provider %s, model %s (%s settings)", run.Provider, run.Model, run.Source)
		if run.ResponseFormat != "" {
			fmt.Fprintf(w, ", format %s", run.ResponseFormat)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  prompt %s %s, sha256 %s\n", run.Prompt.Name, run.Prompt.Version, run.Prompt.Hash)
		fmt.Fprintf(w, "  %s\n", persText(run.Personalization))
		for _, l := range personaLines(*run) {
			fmt.Fprintf(w, "    %s\n", l)
		}
		fmt.Fprintf(w, "  frozen context: %s\n", contextText(run.Context))
		if run.Repaired || len(run.DomainRepairs) > 0 {
			fmt.Fprintf(w, "  repairs: JSON re-asked %v; domain: %s\n", run.Repaired, strings.Join(run.DomainRepairs, "; "))
		}
	}
	if tk := e.Task; tk != nil {
		fmt.Fprintf(w, "\ntask %s: %s, %s of at most %d, %s, %s", tk.ID, tk.State, plural(tk.Attempt, "attempt"), tk.MaxAttempts,
			counted(tk.Retries, "retry", "retries"), counted(tk.Recoveries, "recovery", "recoveries"))
		if tk.Refunded > 0 {
			fmt.Fprintf(w, ", %d refunded", tk.Refunded)
		}
		fmt.Fprintln(w)
		if tk.EventsTrimmed {
			fmt.Fprintf(w, "  (its event log is no longer kept)\n")
		}
		for _, ev := range tk.Events {
			fmt.Fprintf(w, "  %d %s %s", ev.Seq, fmtTime(ev.Time), ev.Type)
			if ev.Attempt > 0 {
				fmt.Fprintf(w, " attempt %d", ev.Attempt)
			}
			if ev.Error != "" {
				fmt.Fprintf(w, ": %s", ev.Error)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "\nusage: %s\n", plural(len(e.Usage), "booked event"))
	for _, u := range e.Usage {
		est := ""
		if u.Estimated {
			est = " (estimated)"
		}
		fmt.Fprintf(w, "  %s %s/%s: %d input, %d output, %d total%s\n", u.Category, u.Provider, u.Model, u.Input, u.Output, u.Total, est)
	}
	printObservations(w, e.Observations)
}

// printObservations prints the learning observations of an explanation,
// one line each (a manual edit also one line per block).
func printObservations(w io.Writer, obs []assistant.Observation) {
	if len(obs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nlearning observations: %d\n", len(obs))
	for _, o := range obs {
		fmt.Fprintf(w, "  %s at %s by %s", o.Kind, o.Version, o.Actor)
		if pp := o.Personalization.Persona; pp != nil {
			fmt.Fprintf(w, ", persona %s", pp.ID)
		}
		switch o.Kind {
		case assistant.ObsEditedAfterAccept:
			fmt.Fprintf(w, ": block %s %s", o.Block, contentChange(o.Before, o.After))
		case assistant.ObsManualEdit:
			fmt.Fprintf(w, ": %s", plural(len(o.Edits)+o.Omitted, "block"))
			if o.Omitted > 0 {
				fmt.Fprintf(w, " (%d not listed)", o.Omitted)
			}
		}
		if o.Reason != "" {
			fmt.Fprintf(w, ": %s", oneLine(o.Reason))
		}
		fmt.Fprintln(w)
		for _, e := range o.Edits {
			fmt.Fprintf(w, "    %s %s\n", e.Block, contentChange(e.Before, e.After))
		}
	}
}

// contentChange is a block's content before -> after, short ids, with
// "(added)" or "(deleted)" for a zero side.
func contentChange(before, after objstore.ID) string {
	switch {
	case before.IsZero():
		return "(added) -> " + after.Short()
	case after.IsZero():
		return before.Short() + " -> (deleted)"
	}
	return before.Short() + " -> " + after.Short()
}

// counted is n with the noun's singular or plural form.
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// clipText cuts s to n code points; it reports whether it cut.
func clipText(s string, n int) (string, bool) {
	i := 0
	for k := range s {
		if i == n {
			return s[:k], true
		}
		i++
	}
	return s, false
}
