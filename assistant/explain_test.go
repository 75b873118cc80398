package assistant

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/objstore"
)

// flaky fails its first n streams with a retryable provider error.
type flaky struct {
	*fakeModel
	mu    sync.Mutex
	fails int
}

func (f *flaky) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	f.mu.Lock()
	fail := f.fails > 0
	if fail {
		f.fails--
	}
	f.mu.Unlock()
	if fail {
		return nil, &llm.Error{Code: llm.CodeServerError, Provider: "fake", Status: 503, Msg: "overloaded"}
	}
	return f.fakeModel.Stream(ctx, req)
}

// Explain walks from a version to everything behind it.
func TestExplainTheWholeChain(t *testing.T) {
	fm := &flaky{fakeModel: &fakeModel{}, fails: 1}
	w := newWorld(t, func(o *worldOptions) { o.provider = fm })
	doc := w.article(3, false)
	q, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p2"}, Instruction: "clearer",
		WritingPreset: "clear-concise"})
	if run.Attempts != 2 || run.Retries != 1 || run.State != RunSucceeded {
		t.Fatalf("run attempts %d retries %d %s", run.Attempts, run.Retries, run.State)
	}
	acc, err := w.svc.Accept(ctx, authorA, run.Suggestion, AcceptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := w.svc.Explain(ctx, authorA, doc, acc.Version.Label)
	if err != nil {
		t.Fatal(err)
	}
	if e.ByHand || e.Txn.Kind != objstore.KindAcceptSuggestion || e.Txn.SuggestionID != run.Suggestion || e.Txn.Actor != "author-a" ||
		e.Txn.BaseVersion != run.Base.Version || e.Txn.BaseFingerprint != run.Base.Fingerprint || len(e.Txn.Events) != 1 || e.Txn.Events[0].Block != "p2" {
		t.Fatalf("txn %+v", e.Txn)
	}
	if e.Suggestion == nil || e.Suggestion.Status != StatusAccepted || e.Run == nil || e.Run.ID != q.Run.ID {
		t.Fatalf("suggestion %+v run %+v", e.Suggestion, e.Run)
	}
	if len(e.Messages) != 2 || e.Messages[0].Role != RoleUser || e.Messages[0].Label != "v1.r0" || e.Messages[1].Suggestion != run.Suggestion {
		t.Fatalf("messages %+v", e.Messages)
	}
	r := e.Run
	if r.Provider != "fake" || r.Model != "fake-writer-1" || len(r.Prompt.Hash) != 64 || r.Prompt.Name != "writing/block" ||
		r.Personalization.Preset == nil || r.Personalization.Preset.ID != "clear-concise" || r.Personalization.Preset.Number != 1 {
		t.Fatalf("run %+v", r)
	}
	if e.Context == nil || e.Task == nil || e.Task.Attempt != 2 || e.Task.Retries != 1 || e.Task.State != string(task.Succeeded) {
		t.Fatalf("task %+v context %+v", e.Task, e.Context)
	}
	if len(e.Usage) != 1 || e.Usage[0].Total != r.Usage.Total || e.Usage[0].Total == 0 {
		t.Fatalf("usage %+v (run %+v)", e.Usage, r.Usage)
	}
	if len(e.Observations) != 1 || e.Observations[0].Kind != ObsAccepted {
		t.Fatalf("observations %+v", e.Observations)
	}
	// A version made by hand says so.
	w.save(doc, para("p1", "by hand"))
	v, _, _ := w.repo.Seal(ctx, doc, objstore.ReasonIdle, "author-a")
	h, err := w.svc.Explain(ctx, authorA, doc, v.Label)
	if err != nil || !h.ByHand || h.Run != nil || !strings.Contains(h.Note, "made by hand: checkpoint (idle) by author-a") {
		t.Fatalf("by hand: %+v %v", h, err)
	}
	first, _ := w.svc.Explain(ctx, authorA, doc, "v1.r0")
	if !first.ByHand || !strings.Contains(first.Note, "create") {
		t.Fatalf("first version: %+v", first.Note)
	}
	if _, err := w.svc.Explain(ctx, authorA, doc, "v9.r9"); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("missing label: %v", err)
	}
}
