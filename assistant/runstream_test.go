package assistant

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
)

// A retryable provider failure is told on the run's stream: the failed
// attempt's retry event (its attempt, delay, code and message, not a
// rate limit), then the second attempt from started to succeeded, and
// the run counts one retry and two attempts.
func TestRetryIsOnTheRunStream(t *testing.T) {
	fm := &flaky{fakeModel: &fakeModel{}, fails: 1}
	w := newWorld(t, func(o *worldOptions) {
		o.provider = fm
		// A delay the event can show in whole milliseconds ([d/2, d]).
		o.taskOpts.BackoffBase, o.taskOpts.BackoffCap = 20*time.Millisecond, 20*time.Millisecond
	})
	doc := w.article(2, false)
	q, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "shorter"})
	if run.State != RunSucceeded || run.Attempts != 2 || run.Retries != 1 || run.Suggestion == "" {
		t.Fatalf("run %s attempts %d retries %d suggestion %q", run.State, run.Attempts, run.Retries, run.Suggestion)
	}
	evs, err := w.svc.RunEvents(ctx, q.Run.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var retry, last RunEvent
	started := map[int]bool{}
	for _, e := range evs {
		var d RunEvent
		if err := kv.Unmarshal(e.Data, &d); err != nil || d.Run != q.Run.ID {
			t.Fatalf("event %s: %+v %v", e.Type, d, err)
		}
		if e.Type != EventProgress {
			got = append(got, e.Type)
		}
		switch e.Type {
		case EventRetry:
			retry = d
		case EventStarted:
			started[d.Attempt] = true
		}
		last = d
	}
	want := []string{EventQueued, EventStarted, EventRetry, EventStarted, EventSucceeded}
	if !slices.Equal(got, want) {
		t.Fatalf("run stream %v, want %v", got, want)
	}
	if retry.Attempt != 1 || retry.DelayMs < 10 || retry.DelayMs > 20 || retry.Code != CodeProviderError || retry.Message == "" || retry.RateLimited || retry.Task != run.Task {
		t.Fatalf("retry event %+v", retry)
	}
	if !started[1] || !started[2] || last.Attempt != 2 || last.Suggestion != run.Suggestion {
		t.Fatalf("attempts started %v, final %+v", started, last)
	}
}

// Answer text reaches the run's stream coalesced: a model that answers in
// hundreds of small pieces gives at most one progress event per
// ProgressEvery of the run's life (plus the last flush), and together they
// are the model's text, in order. The bound is taken from the time the
// run actually took, so a slow machine loosens it rather than failing it.
func TestProgressIsCoalesced(t *testing.T) {
	long := `{"summary":"` + strings.Repeat("tighter ", 600) + `","ops":[{"op":"replace_block","blockId":"p1","block":{"type":"paragraph","richText":[{"text":"Shorter."}]}}]}`
	fm := &fakeModel{answer: func(llm.Request) string { return long }}
	w := newWorld(t, func(o *worldOptions) { o.provider = fm })
	doc := w.article(2, false)
	start := time.Now()
	q, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "shorter"})
	elapsed := time.Since(start)
	if run.State != RunSucceeded {
		t.Fatalf("run %s %+v", run.State, run.Error)
	}
	evs, err := w.svc.RunEvents(ctx, q.Run.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	text, n := "", 0
	for _, e := range evs {
		if e.Type != EventProgress {
			continue
		}
		var d RunEvent
		if err := kv.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		text += d.Text
		n++
	}
	pieces := len(llmPieces(long))
	if text != long {
		t.Fatalf("progress carried %d bytes, the model answered %d", len(text), len(long))
	}
	if bound := int(elapsed/ProgressEvery) + 2; n > bound || n >= pieces {
		t.Fatalf("%d progress events for %d pieces in %v: not coalesced (at most %d)", n, pieces, elapsed, bound)
	}
}
