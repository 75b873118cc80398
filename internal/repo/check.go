package repo

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/objstore"
)

// This file is the one place where the fields of a request are checked:
// every way in (HTTP, WebSocket, the CLI on a data directory) reaches the
// content service's commands, which check here before any other work, so
// the same input gets the same answer whatever carried it. docs/api.md
// ("Limits") lists these rules.

// Sizes of the free-text fields of requests, in bytes of UTF-8.
const (
	MaxTitleBytes    = 512  // attrs.title (also required: not blank)
	MaxSummaryBytes  = 4096 // attrs.summary
	MaxSlugBytes     = 128  // attrs.slug: a-z 0-9 -
	MaxCategoryBytes = 128  // attrs.category
	MaxTags          = 64   // attrs.tags
	MaxTagBytes      = 64   // each tag (also not blank)
	MaxMessageBytes  = 4096 // a version's message (checkpoint, create, save with seal)
	MaxSessionBytes  = 128  // a save's session name
	MaxLabelBytes    = 64   // a version label in a request
)

// Request limits: how much one request may carry. They bound the work and
// memory of a request before any of it is done (the HTTP decoder enforces
// them while it reads, see RequestLimits).
const (
	// DefaultMaxChanges is the default bound on the changes of one save.
	DefaultMaxChanges = 4000
	// DefaultMaxRuns is the default bound on the rich-text runs, list
	// items and table cells of one request.
	DefaultMaxRuns = 250000
)

// Wire codes of the errors made here (errs.TooLarge).
const (
	CodeTooManyChanges = "too_many_changes"
	CodeTooManyBlocks  = "too_many_blocks"
	CodeTooManyRuns    = "too_many_runs"
)

// RequestLimits bound what one request may carry.
type RequestLimits struct {
	MaxChanges int // changes of one draft save
	MaxBlocks  int // blocks (nested included) of one body or of all of a save's changes
	MaxRuns    int // rich-text runs, list items and table cells of one request
}

// RequestLimits are the limits in force (Options.MaxChanges, MaxRuns and
// the document block limit).
func (r *Repo) RequestLimits() RequestLimits { return r.req }

// Decode returns the limits a streaming decoder of a request enforces.
func (l RequestLimits) Decode() flowdoc.DecodeLimits {
	return flowdoc.DecodeLimits{MaxBlocks: l.MaxBlocks, MaxRuns: l.MaxRuns}
}

// TooMany is the error for a request that carries more of what (changes,
// blocks, runs) than limit. Decoders that stop at a limit and the content
// service's own count answer with it alike.
func TooMany(what string, limit int) error {
	var code, msg string
	switch what {
	case "changes":
		code = CodeTooManyChanges
		msg = fmt.Sprintf("a save may carry at most %d changes and this one has more; split it into several saves ([limits] save_max_changes)", limit)
	case "blocks":
		code = CodeTooManyBlocks
		msg = fmt.Sprintf("a request may carry at most %d blocks (nested included) and this one has more ([limits] doc_max_blocks)", limit)
	default:
		code = CodeTooManyRuns
		msg = fmt.Sprintf("a request may carry at most %d rich-text runs, list items and table cells and this one has more ([limits] request_max_runs)", limit)
	}
	return errs.C(errs.TooLarge, code, "%s", msg)
}

// LimitError turns a decoder's *flowdoc.LimitError into TooMany's error;
// any other error is returned as it is.
func LimitError(err error) error {
	if le, ok := err.(*flowdoc.LimitError); ok {
		return TooMany(le.What, le.Limit)
	}
	return err
}

// checkCounts refuses a request whose blocks exceed the request limits,
// counting as the streaming decoder does.
func (l RequestLimits) checkCounts(blocks ...*flowdoc.Block) error {
	var c flowdoc.Counts
	for _, b := range blocks {
		if b == nil {
			continue
		}
		if err := c.Add([]flowdoc.Block{*b}, l.Decode()); err != nil {
			return LimitError(err)
		}
	}
	return nil
}

// fieldErrors collects problems with a request's fields, each a path and
// a rule as for documents.
type fieldErrors []flowdoc.Problem

func (f *fieldErrors) add(path, format string, args ...any) {
	*f = append(*f, flowdoc.Problem{Path: path, Rule: fmt.Sprintf(format, args...)})
}

// err is nil without problems, else an errs.Invalid error naming each
// ("attrs.title: title must not be empty; message: …") whose chain holds
// a *flowdoc.ValidationError with the problems, which the wire carries as
// "problems".
func (f fieldErrors) err() error {
	if len(f) == 0 {
		return nil
	}
	ps := make([]string, len(f))
	for i, p := range f {
		ps[i] = p.String()
	}
	return &errs.Error{Kind: errs.Invalid, Msg: strings.Join(ps, "; "), Err: &flowdoc.ValidationError{Problems: f}}
}

// line checks a one-line field: valid UTF-8, at most max bytes, no control
// characters at all.
func (f *fieldErrors) line(path, v string, max int) {
	f.text(path, v, max, false)
}

// text checks a free-text field (multiline allows tabs and newlines).
func (f *fieldErrors) text(path, v string, max int, multiline bool) {
	if len(v) > max {
		f.add(path, "is %d bytes; the limit is %d", len(v), max)
		return
	}
	f.chars(path, v, multiline)
}

// chars refuses invalid UTF-8 and control characters (tabs and newlines
// too unless multiline): they could rewrite an operator's terminal.
func (f *fieldErrors) chars(path, v string, multiline bool) {
	if !utf8.ValidString(v) {
		f.add(path, "text must be valid UTF-8")
		return
	}
	for i, c := range v {
		if multiline && (c == '\n' || c == '\t') {
			continue
		}
		if unicode.IsControl(c) {
			f.add(path, "control character %U at byte %d is not allowed; remove it", c, i)
			return
		}
	}
}

// checkAttrs checks article attributes. The rules are those of
// docs/flowdoc.md ("Article attributes"), whose tests keep them equal.
func checkAttrs(f *fieldErrors, a flowdoc.Attributes) {
	if strings.TrimSpace(a.Title) == "" {
		f.add("attrs.title", "title must not be empty")
	}
	if len(a.Title) > MaxTitleBytes {
		f.add("attrs.title", "title must be at most %d bytes", MaxTitleBytes)
	}
	f.chars("attrs.title", a.Title, false)
	if len(a.Summary) > MaxSummaryBytes {
		f.add("attrs.summary", "summary must be at most %d bytes", MaxSummaryBytes)
	}
	f.chars("attrs.summary", a.Summary, true)
	if a.Slug != "" {
		if len(a.Slug) > MaxSlugBytes {
			f.add("attrs.slug", "slug must be at most %d bytes", MaxSlugBytes)
		}
		for _, c := range a.Slug {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				f.add("attrs.slug", "slug must be lowercase letters, digits and '-'")
				break
			}
		}
	}
	if len(a.Category) > MaxCategoryBytes {
		f.add("attrs.category", "category must be at most %d bytes", MaxCategoryBytes)
	}
	f.chars("attrs.category", a.Category, false)
	switch a.Status {
	case "", "draft", "published":
	default:
		f.add("attrs.status", "status must be draft or published")
	}
	switch a.Visibility {
	case "", "public", "private", "password":
	default:
		f.add("attrs.visibility", "visibility must be public, private or password")
	}
	if len(a.Tags) > MaxTags {
		f.add("attrs.tags", "at most %d tags", MaxTags)
		return // the answer stays small
	}
	for i, t := range a.Tags {
		p := fmt.Sprintf("attrs.tags[%d]", i)
		if strings.TrimSpace(t) == "" || len(t) > MaxTagBytes {
			f.add(p, "tag must be 1..%d bytes", MaxTagBytes)
		}
		f.chars(p, t, false)
	}
}

// clientReasons are the checkpoint reasons a request may give. The
// others are the server's own: idle, max_duration and leave (Seal),
// recovery (OpenDraft) and restore (Restore).
var clientReasons = []string{objstore.ReasonManual, objstore.ReasonPublish, objstore.ReasonAI}

// serverReasons are the reasons Seal takes.
var serverReasons = []string{objstore.ReasonIdle, objstore.ReasonMaxDuration, objstore.ReasonLeave}

// checkReason checks a checkpoint reason given by a request.
func checkReason(f *fieldErrors, path, reason string) {
	for _, r := range clientReasons {
		if reason == r {
			return
		}
	}
	for _, r := range append(serverReasons, objstore.ReasonRecovery, objstore.ReasonRestore) {
		if reason == r {
			f.add(path, "%q is set by the server itself; send manual, publish or ai", reason)
			return
		}
	}
	n := len(*f)
	f.line(path, reason, 64)
	if len(*f) == n { // a reason that is no line at all is reported once
		f.add(path, "%q is not a checkpoint reason; send manual, publish or ai", reason)
	}
}

// checkLabel checks a version label given by a request.
func checkLabel(f *fieldErrors, path, label string) {
	if strings.TrimSpace(label) == "" {
		f.add(path, "needs the label of a version, like v1.r2")
		return
	}
	f.line(path, label, MaxLabelBytes)
}

// InvalidRequest is the error for a request whose JSON breaks the rules a
// flowdoc.Reader checks (or flowdoc.CheckJSON, for WebSocket frames): one
// message naming every problem, the same whatever carried the request.
func InvalidRequest(ve *flowdoc.ValidationError) error {
	ps := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		ps[i] = p.String()
	}
	return &errs.Error{Kind: errs.Invalid, Msg: "invalid request: " + strings.Join(ps, "; "), Err: ve}
}
