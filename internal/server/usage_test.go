package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/quota"
)

// Admins read the token usage report; authors are refused; a booking
// shows in it.
func TestAdminUsageEndpoint(t *testing.T) {
	var ledger *quota.Ledger
	e := newEnv(t, func(c *Config) {
		ledger = quota.NewLedger(c.Repo.DB(), quota.LedgerOptions{})
		c.Usage = quota.UsageHandler(ledger, map[quota.Category]string{quota.Writing: "compat"})
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
	e.wantErr(http.MethodGet, "/v1/admin/usage", e.ann, nil, http.StatusForbidden, "forbidden")
	e.wantErr(http.MethodGet, "/v1/admin/usage", "", nil, http.StatusUnauthorized, "unauthorized")
}
