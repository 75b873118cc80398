package assistant

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/task"
)

// seedSession gives doc's current session n earlier messages, alternating
// user and assistant turns, message i having text(i); assistant turns
// name suggestions with the statuses of status(i).
func seedSession(t *testing.T, w *world, doc string, n int, text func(i int) string, status func(i int) SuggestionStatus) Session {
	t.Helper()
	ss, err := w.svc.CurrentSession(ctx, authorA, doc)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := w.repo.Show(ctx, doc, "")
	b := w.db.NewBatch()
	defer b.Close()
	for i := 1; i <= n; i++ {
		m := Message{Session: ss.ID, Seq: uint64(i), Role: RoleUser, Text: text(i), Doc: doc,
			Version: snap.Info.Hash, Label: snap.Info.Label, Scope: Scope{Kind: ScopeBlock, Block: "p1"}}
		if i%2 == 0 {
			m.Role = RoleAssistant
			if st := status(i); st != "" {
				m.Suggestion = fmt.Sprintf("s-seed-%d", i)
				sg := Suggestion{ID: m.Suggestion, Doc: doc, Status: st}
				if err := kv.SetRecord(b, suggestionKey(sg.ID), sg); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := kv.SetRecord(b, messageKey(ss.ID, uint64(i)), m); err != nil {
			t.Fatal(err)
		}
	}
	old := ss
	ss.Messages = uint64(n)
	ss.Updated++
	if err := putSession(b, &old, ss); err != nil {
		t.Fatal(err)
	}
	if err := w.db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	return ss
}

// frozen makes a request (the runner is stopped) and returns the context
// frozen into its task's payload, and the run's summary of it.
func frozen(t *testing.T, w *world, doc string) (Context, ContextSummary) {
	t.Helper()
	q, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "now"})
	if err != nil {
		t.Fatal(err)
	}
	tid, _ := task.ParseID(q.Run.Task)
	tk, err := w.runner.Get(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	var pl payload
	if err := kv.Unmarshal(tk.Payload, &pl); err != nil {
		t.Fatal(err)
	}
	return pl.Context, q.Run.Context
}

func stopped(o *worldOptions) { o.noStart = true }

// Scan at most 24 valid messages; the rest are counted as omitted.
func TestContextScanBoundary(t *testing.T) {
	for _, n := range []int{23, 24, 25} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := newWorld(t, stopped)
			doc := w.article(1, false)
			seedSession(t, w, doc, n, func(i int) string { return fmt.Sprintf("message %d", i) }, func(int) SuggestionStatus { return "" })
			c, sum := frozen(t, w, doc)
			wantScanned, wantOmitted := min(n, 24), max(n-24, 0)
			if c.Scanned != wantScanned || c.Omitted != wantOmitted || c.Scanned != len(c.Recent)+c.Summarized {
				t.Fatalf("n=%d: scanned %d omitted %d (recent %d summarized %d), want %d and %d", n, c.Scanned, c.Omitted, len(c.Recent), c.Summarized, wantScanned, wantOmitted)
			}
			if sum.Scanned != c.Scanned || sum.Omitted != c.Omitted || sum.Full != len(c.Recent) || sum.Summarized != c.Summarized {
				t.Fatalf("the run's summary %+v disagrees with the payload", sum)
			}
			// The oldest scanned message is n-23 (or 1); older ones are not in the summary.
			first := fmt.Sprintf("message %d", n-wantScanned+1)
			if !strings.Contains(c.Summary, first+"\n") && !strings.HasSuffix(c.Summary, first) && !strings.Contains(c.Summary, first+" ") {
				t.Fatalf("summary lacks %q:\n%s", first, c.Summary)
			}
			if n == 25 && strings.Contains(c.Summary, "message 1\n") {
				t.Fatalf("message 1 is beyond the scan but summarised:\n%s", c.Summary)
			}
		})
	}
}

// Keep the last 8 in full, summarise the older scanned ones.
func TestContextFullBoundary(t *testing.T) {
	for _, n := range []int{7, 8, 9} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := newWorld(t, stopped)
			doc := w.article(1, false)
			seedSession(t, w, doc, n, func(i int) string { return fmt.Sprintf("message %d", i) }, func(int) SuggestionStatus { return "" })
			c, _ := frozen(t, w, doc)
			if len(c.Recent) != min(n, 8) || c.Summarized != max(n-8, 0) || c.Omitted != 0 {
				t.Fatalf("n=%d: recent %d summarized %d omitted %d", n, len(c.Recent), c.Summarized, c.Omitted)
			}
			if c.Recent[len(c.Recent)-1].Seq != uint64(n) || c.Recent[0].Seq != uint64(n-len(c.Recent)+1) {
				t.Fatalf("recent runs %d..%d", c.Recent[0].Seq, c.Recent[len(c.Recent)-1].Seq)
			}
			if n == 9 && !strings.Contains(c.Summary, "message 1") {
				t.Fatalf("message 1 is not summarised: %q", c.Summary)
			}
			if n <= 8 && c.Summary != "" {
				t.Fatalf("nothing to summarise, got %q", c.Summary)
			}
		})
	}
}

// Each recent message is kept up to 1,000 code points.
func TestContextCharacterBoundary(t *testing.T) {
	for _, n := range []int{999, 1000, 1001} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := newWorld(t, stopped)
			doc := w.article(1, false)
			text := strings.Repeat("字", n)
			seedSession(t, w, doc, 1, func(int) string { return text }, func(int) SuggestionStatus { return "" })
			c, sum := frozen(t, w, doc)
			got := c.Recent[0]
			want := min(n, 1000)
			if utf8.RuneCountInString(got.Text) != want || got.Truncated != (n > 1000) || sum.Truncated != map[bool]int{true: 1}[n > 1000] {
				t.Fatalf("n=%d: kept %d code points, truncated %v (summary %d)", n, utf8.RuneCountInString(got.Text), got.Truncated, sum.Truncated)
			}
		})
	}
}

// Assistant turns carry their suggestion's status, and the prompt never
// presents a pending, rejected or conflicted candidate as a fact.
func TestContextTagsCandidates(t *testing.T) {
	w := newWorld(t, stopped)
	doc := w.article(1, false)
	statuses := map[int]SuggestionStatus{2: StatusAccepted, 4: StatusRejected, 6: StatusConflicted, 8: StatusPending}
	seedSession(t, w, doc, 10, func(i int) string { return fmt.Sprintf("turn %d", i) }, func(i int) SuggestionStatus { return statuses[i] })
	c, sum := frozen(t, w, doc)
	got := map[uint64]SuggestionStatus{}
	for _, m := range c.Recent {
		if m.Role == RoleAssistant {
			got[m.Seq] = m.Status
		}
	}
	for i, st := range statuses {
		if i == 2 {
			continue // summarised (messages 3..10 are the recent eight)
		}
		if got[uint64(i)] != st {
			t.Fatalf("turn %d tagged %q, want %q", i, got[uint64(i)], st)
		}
	}
	if sum.Statuses[StatusRejected] != 1 || sum.Statuses[StatusPending] != 1 || sum.Statuses[StatusNone] != 1 {
		t.Fatalf("summary statuses %v", sum.Statuses)
	}
	w.start()
	run := w.wait(w.svc.mustLatestRun(t, doc))
	if run.State != RunSucceeded {
		t.Fatal(run.State)
	}
	user := w.model.requests()[0].Messages
	prompt := user[len(user)-1].Content
	for _, st := range []SuggestionStatus{StatusRejected, StatusConflicted, StatusPending} {
		if !strings.Contains(prompt, fmt.Sprintf("suggestion %s: NOT accepted, not part of the article, not a fact", st)) {
			t.Fatalf("the %s candidate is not marked as not a fact:\n%s", st, prompt)
		}
	}
	if !strings.Contains(prompt, "Current request (this wins over the conversation)") {
		t.Fatal("the current request must be marked as winning")
	}
	if !strings.Contains(c.Summary, "[assistant, accepted] turn 2") {
		t.Fatalf("summary %q", c.Summary)
	}
}

// mustLatestRun returns the newest run of author-a's current session on doc.
func (s *Service) mustLatestRun(t *testing.T, doc string) string {
	t.Helper()
	ss, _, err := s.latestSession(s.db, doc, authorA.UserID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.loadMessage(s.db, ss.ID, ss.Messages)
	if err != nil {
		t.Fatal(err)
	}
	return m.Run
}
