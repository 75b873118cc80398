package assistant

import (
	"fmt"
	"strings"

	"github.com/foliodev/folio/internal/kv"
)

// Conversation budgets (DESIGN.md §6).
const (
	// ContextScan is the most valid messages a request scans.
	ContextScan = 24
	// ContextFull is how many of the newest scanned messages are kept in
	// full, each up to ContextFullChars code points.
	ContextFull      = 8
	ContextFullChars = 1000
	// ContextLineChars bounds each older scanned message's text in the
	// summary, and SummaryMaxChars the whole summary, in code points.
	ContextLineChars = 80
	SummaryMaxChars  = 2000
	// contextReadMax bounds the records a scan reads to find its valid
	// messages (invalid ones are skipped and counted as omitted).
	contextReadMax = 4 * ContextScan
)

// Context is the bounded conversation a run is given, frozen when the
// request is enqueued: the newest messages in full, the older scanned
// ones summarised, the rest counted. Assistant turns carry their
// suggestion's status at that moment; only accepted ones describe the
// article, and the prompt presents the others as proposals that did not
// become text.
type Context struct {
	// Recent are the newest ContextFull valid messages, oldest first.
	Recent []ContextMessage `json:"recent" msgpack:"recent"`
	// Summary is one line per older scanned message, oldest first.
	Summary string `json:"summary,omitempty" msgpack:"summary,omitempty"`
	// Summarized counts the messages in Summary, Scanned every valid
	// message read (len(Recent) + Summarized), Omitted the messages of
	// the session before the request that were not scanned.
	Summarized int `json:"summarized" msgpack:"summarized"`
	Scanned    int `json:"scanned" msgpack:"scanned"`
	Omitted    int `json:"omitted" msgpack:"omitted"`
}

// ContextMessage is one message as a run sees it.
type ContextMessage struct {
	Seq  uint64 `json:"seq" msgpack:"seq"`
	Role Role   `json:"role" msgpack:"role"`
	// Text is the message's text, at most ContextFullChars code points.
	Text      string `json:"text" msgpack:"text"`
	Truncated bool   `json:"truncated,omitempty" msgpack:"trunc,omitempty"`
	// Label and Scope place a user message (the version and scope it
	// was made against).
	Label string `json:"label,omitempty" msgpack:"label,omitempty"`
	Scope string `json:"scope,omitempty" msgpack:"scope,omitempty"`
	// Suggestion and Status describe an assistant turn's candidate:
	// accepted, rejected, conflicted or pending, or "none" when the run
	// proposed no change.
	Suggestion string           `json:"suggestion,omitempty" msgpack:"sugg,omitempty"`
	Status     SuggestionStatus `json:"status,omitempty" msgpack:"status,omitempty"`
}

// StatusNone is ContextMessage.Status for an assistant turn without a
// suggestion.
const StatusNone SuggestionStatus = "none"

// buildContext freezes the conversation of session before message seq
// before (the request's own message is not part of it). statusOf reads a
// suggestion's status now.
func buildContext(r kv.Reader, session string, before uint64, statusOf func(id string) SuggestionStatus) (Context, error) {
	var c Context
	if before <= 1 {
		return c, nil
	}
	p := messagePrefix(session)
	it, err := r.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: messageKey(session, before)})
	if err != nil {
		return c, err
	}
	defer it.Close()
	var scanned []ContextMessage // newest first
	read := 0
	for it.Last(); it.Valid() && len(scanned) < ContextScan && read < contextReadMax; it.Prev() {
		read++
		var m Message
		if err := kv.Unmarshal(it.Value(), &m); err != nil || !validTurn(m) {
			continue // not a valid message: it counts as omitted
		}
		cm := ContextMessage{Seq: m.Seq, Role: m.Role, Label: m.Label}
		cm.Text, cm.Truncated = clipRunes(m.Text, ContextFullChars)
		if m.Role == RoleUser {
			cm.Scope = m.Scope.String()
		} else {
			cm.Suggestion, cm.Status = m.Suggestion, StatusNone
			if m.Suggestion != "" {
				cm.Status = statusOf(m.Suggestion)
			}
		}
		scanned = append(scanned, cm)
	}
	if err := it.Error(); err != nil {
		return c, err
	}
	c.Scanned = len(scanned)
	c.Omitted = int(before-1) - c.Scanned
	full := min(len(scanned), ContextFull)
	for i := full - 1; i >= 0; i-- {
		c.Recent = append(c.Recent, scanned[i])
	}
	var sum strings.Builder
	for i := len(scanned) - 1; i >= full; i-- {
		m := scanned[i]
		line, cut := clipRunes(strings.Join(strings.Fields(m.Text), " "), ContextLineChars)
		if cut {
			line += "…"
		}
		fmt.Fprintf(&sum, "%s %s\n", summaryTag(m), line)
		c.Summarized++
	}
	c.Summary, _ = clipRunes(strings.TrimRight(sum.String(), "\n"), SummaryMaxChars)
	return c, nil
}

// summaryTag is a turn's short label in the summary.
func summaryTag(m ContextMessage) string {
	if m.Role == RoleUser {
		return "[user]"
	}
	if m.Status == StatusAccepted {
		return "[assistant, accepted]"
	}
	if m.Status == StatusNone {
		return "[assistant, no change]"
	}
	return "[assistant, " + string(m.Status) + ", not a fact]"
}

// validTurn reports whether a stored message can take part in a
// conversation: a known role and some text.
func validTurn(m Message) bool {
	return (m.Role == RoleUser || m.Role == RoleAssistant) && strings.TrimSpace(m.Text) != "" && m.Seq > 0
}

// turnTag labels a turn for the model, with a candidate's standing.
func turnTag(m ContextMessage) string {
	if m.Role == RoleUser {
		return fmt.Sprintf("[user · %s · %s]", m.Label, m.Scope)
	}
	switch m.Status {
	case StatusAccepted:
		return "[assistant · suggestion accepted by the author]"
	case StatusNone:
		return "[assistant · proposed no change]"
	}
	return fmt.Sprintf("[assistant · suggestion %s: NOT accepted, not part of the article, not a fact]", m.Status)
}
