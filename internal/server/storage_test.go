package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/faultfs"
	"github.com/foliodev/folio/internal/repo"
)

// newFaultEnv is a server over a store on a fault-injecting filesystem,
// with a 64 MiB reserve.
func newFaultEnv(t *testing.T) (*env, *faultfs.FS) {
	fs := faultfs.NewOS()
	e := newEnvRepo(t, repo.Options{KV: kv.Options{FS: fs, MinFree: 64 << 20}}, nil)
	e.ok("POST", "/v1/docs", e.admin, CreateRequest{ID: "d1", Owner: "ann", Attrs: flowdoc.Attributes{Title: "One"}, Body: doc(para("p1", "one"))}, nil)
	return e, fs
}

func (e *env) health() (int, Health) {
	e.t.Helper()
	st, data := e.call("GET", "/healthz", "", nil)
	var h Health
	if err := json.Unmarshal(data, &h); err != nil {
		e.t.Fatalf("healthz body %s: %v", data, err)
	}
	return st, h
}

func saveReq(id, text string) SaveRequest {
	b := para(id, text)
	return SaveRequest{Changes: []repo.DraftChange{{Op: "upsert", Block: &b}}}
}

// When the store fails, the save caught in it gets 503 storage_failed,
// /healthz turns 503 naming the cause, every later request is refused the
// same way, and FailStop closes the sync sessions.
func TestStorageFailureFailsStop(t *testing.T) {
	e, fs := newFaultEnv(t)
	if st, h := e.health(); st != http.StatusOK || h.Status != "ok" || h.Error != nil {
		t.Fatalf("healthy: %d %+v", st, h)
	}
	fs.SetRule(faultfs.Fail(faultfs.OpSync, ".log", syscall.EIO))
	er := e.wantErr("POST", "/v1/docs/d1/draft", e.ann, saveReq("p2", "lost"), http.StatusServiceUnavailable, "storage_failed")
	if !strings.Contains(er.Message, "restart") {
		t.Fatalf("storage_failed message does not say what happens: %q", er.Message)
	}
	st, h := e.health()
	if st != http.StatusServiceUnavailable || h.Status != "storage failed" || h.Error == nil ||
		h.Error.Code != "storage_failed" || !strings.Contains(h.Error.Cause, "input/output error") {
		t.Fatalf("healthz after the failure: %d %+v", st, h)
	}
	fs.SetRule(nil)
	// Fail-stop: reads are refused too (they could show a write that is
	// not durable), and so is the sync endpoint.
	e.wantErr("GET", "/v1/docs/d1", e.ann, nil, http.StatusServiceUnavailable, "storage_failed")
	e.wantErr("POST", "/v1/docs/d1/draft", e.ann, saveReq("p3", "later"), http.StatusServiceUnavailable, "storage_failed")
	e.wantErr("GET", "/v1/sync", "", nil, http.StatusServiceUnavailable, "storage_failed")

	if err := e.srv.FailStop(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.sync.mu.Lock()
	reason := e.sync.failStop
	e.sync.mu.Unlock()
	if !strings.Contains(reason, "storage failed") {
		t.Fatalf("sync sessions were not failed-stopped (reason %q)", reason)
	}
}

// Below the reserve, saves get 507 storage_full with Retry-After while
// reads keep working and /healthz stays 200 saying the storage is full;
// saves work again once space is freed.
func TestStorageFullRefusesWritesOnly(t *testing.T) {
	e, fs := newFaultEnv(t)
	fs.SetFree(1 << 20)
	st, data := e.call("POST", "/v1/docs/d1/draft", e.ann, saveReq("p2", "refused"))
	if st != http.StatusInsufficientStorage || errOf(t, data).Code != "storage_full" {
		t.Fatalf("save on a full disk: %d %s", st, data)
	}
	if msg := errOf(t, data).Message; !strings.Contains(msg, "1.0 MiB free") || !strings.Contains(msg, "reads work") {
		t.Fatalf("storage_full message: %q", msg)
	}
	body, _ := json.Marshal(saveReq("p2", "refused"))
	req, _ := http.NewRequest("POST", e.ts.URL+"/v1/docs/d1/draft", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+e.ann)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInsufficientStorage || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("storage_full answer: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	var d repo.Draft
	e.ok("GET", "/v1/docs/d1/draft", e.ann, nil, &d)
	if len(d.Body.Blocks) != 1 {
		t.Fatalf("draft while the disk is full: %+v", d.Body)
	}
	if st, h := e.health(); st != http.StatusOK || h.Status != "ok" || h.Storage != "full" || h.Error == nil || h.Error.Code != "storage_full" {
		t.Fatalf("healthz on a full disk: %d %+v", st, h)
	}

	fs.SetFree(1 << 30)
	e.ok("POST", "/v1/docs/d1/draft", e.ann, saveReq("p2", "accepted"), nil)
	if st, h := e.health(); st != http.StatusOK || h.Storage != "" {
		t.Fatalf("healthz after space was freed: %d %+v", st, h)
	}
}
