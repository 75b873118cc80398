package assistant

import (
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// The whole path for each scope: request -> run -> pending suggestion ->
// accept -> the right version.
func TestRequestToAcceptedVersionPerScope(t *testing.T) {
	w := newWorld(t)
	doc := w.article(4, true)
	tests := []struct {
		scope Scope
		label string
		text  string // expected in the accepted body
	}{
		{Scope{Kind: ScopeSelection, Block: "p1", Start: 0, End: 9}, "v1.r1", "EDITED 1 says"},
		{Scope{Kind: ScopeBlock, Block: "p2"}, "v1.r2", "Paragraph 2 says something about 世界 and 🌍. (edited)"},
		{Scope{Kind: ScopeSection, From: "p3", To: "p4"}, "v1.r3", "Paragraph 4 says something about 世界 and 🌍. (edited)"},
		{Scope{Kind: ScopeDocument}, "v2.r0", "EDITED 1 says something about 世界 and 🌍. (edited)"},
	}
	for _, tt := range tests {
		sg := w.suggest(doc, tt.scope)
		if sg.Status != StatusPending || sg.Base.Label == "" || len(sg.Base.Targets) == 0 {
			t.Fatalf("%s: suggestion %+v", tt.scope, sg)
		}
		acc, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{})
		if err != nil {
			t.Fatalf("%s: accept: %v", tt.scope, err)
		}
		if acc.Version.Label != tt.label || acc.Version.Kind != objstore.KindAcceptSuggestion || acc.Suggestion.Status != StatusAccepted {
			t.Fatalf("%s: accepted as %s %s (%s), want %s", tt.scope, acc.Version.Label, acc.Version.Kind, acc.Suggestion.Status, tt.label)
		}
		snap, err := w.repo.Show(ctx, doc, "")
		if err != nil {
			t.Fatal(err)
		}
		body := string(mustJSON(snap.Body))
		if !strings.Contains(body, tt.text) {
			t.Fatalf("%s: body %s lacks %q", tt.scope, body, tt.text)
		}
		if !strings.Contains(body, `"fmt.Println(1)"`) {
			t.Fatalf("%s: the code block changed: %s", tt.scope, body)
		}
	}
	_ = kv.Sync
}
