package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
)

// Admins read the token usage report; authors are refused; a booking
// shows in it.
func TestAdminUsageEndpoint(t *testing.T) {
	var ledger *quota.Ledger
	e := newEnv(t, func(c *Config) {
		ledger = quota.NewLedger(repoOf(c).DB(), quota.LedgerOptions{})
		c.Usage = func(days int) (*quota.Report, error) {
			rep, err := ledger.Report(days)
			if err == nil {
				rep.Sources = map[quota.Category]string{quota.Writing: "compat"}
			}
			return rep, err
		}
	})
	if err := ledger.Book(quota.Event{ID: "run-1/attempt-1", Provider: "local", Model: "local-1",
		Input: 12, Output: 30, Total: 42, Category: quota.Writing, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var rep quota.Report
	e.ok(http.MethodGet, "/v1/admin/usage?days=2", e.admin, nil, &rep)
	if rep.Totals[quota.Writing].Total != 42 || rep.Health != quota.HealthOK || rep.Sources[quota.Writing] != "compat" {
		t.Fatalf("usage report = %+v", rep)
	}
	for _, q := range []string{"days=0", "days=x", "days=1000"} {
		e.wantErr(http.MethodGet, "/v1/admin/usage?"+q, e.admin, nil, http.StatusBadRequest, "invalid")
	}
	e.wantErr(http.MethodGet, "/v1/admin/usage", e.ann, nil, http.StatusForbidden, "forbidden")
	e.wantErr(http.MethodGet, "/v1/admin/usage", "", nil, http.StatusUnauthorized, "unauthorized")
}

// An admin collects garbage through the daemon while it serves; authors
// may not.
func TestAdminGC(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	v, err := e.repo.CreateDoc(ctx, repo.CreateParams{ID: "g", Owner: "ann", Attrs: flowdoc.Attributes{Title: "g"},
		Body: flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{para("p", "kept")}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"typed and thrown away", "kept in the end"} {
		blk := para("p", text)
		if _, err := e.repo.SaveDraft(ctx, repo.SaveParams{Doc: v.Doc, BaseSeq: uint64(1 + i),
			Changes: []repo.DraftChange{{Op: repo.ChangeUpsert, Block: &blk}}}); err != nil {
			t.Fatal(err)
		}
	}
	e.wantErr(http.MethodPost, "/v1/admin/gc", e.ann, GCRequest{}, http.StatusForbidden, "forbidden")
	var rep repo.GCReport
	e.ok(http.MethodPost, "/v1/admin/gc", e.admin, GCRequest{DryRun: true}, &rep)
	if rep.Removed != 1 || !rep.DryRun {
		t.Fatalf("dry run = %+v, want 1 object to remove", rep)
	}
	e.ok(http.MethodPost, "/v1/admin/gc", e.admin, nil, &rep)
	if rep.Removed != 1 {
		t.Fatalf("gc = %+v, want the thrown-away block removed", rep)
	}
	if f, err := e.repo.Fsck(ctx, repo.FsckOptions{}); err != nil || !f.OK {
		t.Fatalf("fsck after gc through the daemon: %+v %v", f.Problems, err)
	}
}
