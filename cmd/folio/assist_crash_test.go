package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/quota"
)

// stallingModel is an OpenAI-compatible server whose first answer stalls
// after its first piece until the client goes away; every later request
// gets the whole answer, with usage.
type stallingModel struct {
	*httptest.Server
	mu       sync.Mutex
	requests int
	stalled  chan struct{} // closed when the first answer has stalled
	release  chan struct{} // closed at the end of the test
}

const stallingReply = `{"summary":"shorter","ops":[{"op":"replace_block","blockId":"p1","block":{"type":"paragraph","richText":[{"text":"To win, the team decided."}]}}]}`

func newStallingModel(t *testing.T) *stallingModel {
	m := &stallingModel{stalled: make(chan struct{}), release: make(chan struct{})}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(func() { close(m.release); m.Close() })
	return m
}

func (m *stallingModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests
}

func (m *stallingModel) serve(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	m.mu.Lock()
	m.requests++
	n := m.requests
	m.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	chunk := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
	delta := func(text string, finish any) map[string]any {
		return map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": text}, "finish_reason": finish}}}
	}
	if n == 1 {
		chunk(delta(stallingReply[:20], nil))
		close(m.stalled)
		select { // the daemon is killed: its connection closes
		case <-r.Context().Done():
		case <-m.release:
		}
		return
	}
	for i := 0; i < len(stallingReply); i += 20 {
		chunk(delta(stallingReply[i:min(i+20, len(stallingReply))], nil))
	}
	chunk(delta("", "stop"))
	chunk(map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "fake-model", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 40, "total_tokens": 140}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// A daemon killed (SIGKILL) while a run's model call streams: after the
// restart the run is recovered once and runs again, and there is exactly
// one suggestion, one assistant message and one booked usage event —
// through the real daemon, its runner and its store.
func TestAssistDaemonKilledMidRun(t *testing.T) {
	isolateEnv(t)
	m := newStallingModel(t)
	tmp := t.TempDir()
	cfg := writeFile(t, tmp, "folio.toml", fmt.Sprintf(`
[ai.writing]
provider = "openai"
base_url = %q
model = "fake-model"
api_key = "sk-test"
timeout = "30s"
`, m.URL+"/v1"))
	body := writeFile(t, tmp, "body.json", assistBody)
	dir := filepath.Join(tmp, "data")
	d := startDaemon(t, dir, "", "--config", cfg)
	remote := []string{"--server", d.url, "--token", d.token}
	cli := func(args ...string) cliResult {
		t.Helper()
		r := runCLI(append(remote, args...)...)
		if r.code != 0 {
			t.Fatalf("folio %s: %+v", strings.Join(args, " "), r)
		}
		return r
	}
	cli("doc", "new", "--id", "d1", "--title", "Crash", "--from", body)
	runID := jsonID(t, cli("assist", "d1", "--scope", "block:p1", "--instruction", "shorter", "--format", "json"), "run", "id")
	select {
	case <-m.stalled:
	case <-time.After(time.Minute): // a hang guard, not a speed check
		t.Fatalf("the model was never asked\n%s", d.stderr)
	}
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.done

	d = startDaemon(t, dir, d.token, "--config", cfg)
	remote = []string{"--server", d.url, "--token", d.token}
	var run assistant.Run
	if err := unmarshalCLI([]byte(cli("run", "show", runID, "--wait", "--format", "json").stdout), &run); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		if run.State != assistant.RunSucceeded || run.Recoveries != 1 || run.Attempts != 2 || run.Suggestion == "" ||
			len(run.UsageEvents) != 1 || run.Usage.Total != 140 {
			t.Fatalf("%s: run %s, %d recoveries, %d attempts, suggestion %q, usage events %v, usage %+v",
				when, run.State, run.Recoveries, run.Attempts, run.Suggestion, run.UsageEvents, run.Usage)
		}
		var sgs []assistant.Suggestion
		unmarshalCLI([]byte(cli("suggestion", "list", "d1", "--format", "json").stdout), &sgs)
		if len(sgs) != 1 || sgs[0].ID != run.Suggestion {
			t.Fatalf("%s: suggestions %+v", when, sgs)
		}
		var rep quota.Report
		unmarshalCLI([]byte(cli("usage", "--format", "json").stdout), &rep)
		if tot := rep.Totals[quota.Writing]; tot.Events != 1 || tot.Total != 140 {
			t.Fatalf("%s: booked usage %+v", when, tot)
		}
		events := cli("run", "events", runID).stdout
		if n := strings.Count(events, "\trecovered_after_restart"); n != 1 {
			t.Fatalf("%s: %d recoveries in the events:\n%s", when, n, events)
		}
		if n := strings.Count(events, "\tsucceeded"); n != 1 {
			t.Fatalf("%s: %d successes in the events:\n%s", when, n, events)
		}
		sess := cli("session", "show", run.Session, "--format", "json").stdout
		if n := strings.Count(sess, `"role": "assistant"`); n != 1 {
			t.Fatalf("%s: %d assistant messages:\n%s", when, n, sess)
		}
	}
	check("after the restart")
	if n := m.count(); n != 2 {
		t.Fatalf("the model was asked %d times, want 2 (the killed attempt and its rerun)", n)
	}

	// Accepted, the version explains itself with the recovery; a clean
	// restart recovers nothing more.
	cli("suggestion", "accept", run.Suggestion)
	if ex := cli("explain", "d1").stdout; !strings.Contains(ex, "2 attempts of at most 3, 0 retries, 1 recovery") {
		t.Fatalf("explain:\n%s", ex)
	}
	d.stop(t)
	d = startDaemon(t, dir, d.token, "--config", cfg)
	remote = []string{"--server", d.url, "--token", d.token}
	unmarshalCLI([]byte(cli("run", "show", runID, "--format", "json").stdout), &run)
	check("after a second restart")
	d.stop(t)
	if r := runCLI("--data", dir, "fsck"); r.code != 0 {
		t.Fatalf("fsck: %+v", r)
	}
}

// SIGTERM while a run's model call streams: the daemon stops the runner
// after its servers (within the usual 10 s), the run is interrupted and
// requeued without spending an attempt, and the next start runs it to
// one suggestion and one booked usage event.
func TestAssistDaemonSIGTERMMidRun(t *testing.T) {
	isolateEnv(t)
	m := newStallingModel(t)
	tmp := t.TempDir()
	cfg := writeFile(t, tmp, "folio.toml", fmt.Sprintf(`
[ai.writing]
provider = "openai"
base_url = %q
model = "fake-model"
api_key = "sk-test"
timeout = "30s"
`, m.URL+"/v1"))
	body := writeFile(t, tmp, "body.json", assistBody)
	dir := filepath.Join(tmp, "data")
	d := startDaemon(t, dir, "", "--config", cfg)
	cli := func(args ...string) cliResult {
		t.Helper()
		r := runCLI(append([]string{"--server", d.url, "--token", d.token}, args...)...)
		if r.code != 0 {
			t.Fatalf("folio %s: %+v", strings.Join(args, " "), r)
		}
		return r
	}
	cli("doc", "new", "--id", "d1", "--title", "Stop", "--from", body)
	runID := jsonID(t, cli("assist", "d1", "--scope", "block:p1", "--instruction", "shorter", "--format", "json"), "run", "id")
	select {
	case <-m.stalled:
	case <-time.After(time.Minute): // a hang guard, not a speed check
		t.Fatalf("the model was never asked\n%s", d.stderr)
	}
	if took := d.stop(t); took > 10*time.Second {
		t.Errorf("the daemon took %v to stop with a run in flight", took)
	}
	d = startDaemon(t, dir, d.token, "--config", cfg)
	var run assistant.Run
	unmarshalCLI([]byte(cli("run", "show", runID, "--wait", "--format", "json").stdout), &run)
	if run.State != assistant.RunSucceeded || run.Recoveries != 0 || run.Attempts != 2 || run.Suggestion == "" || len(run.UsageEvents) != 1 {
		t.Fatalf("run %s, %d recoveries, %d attempts, suggestion %q, usage events %v", run.State, run.Recoveries, run.Attempts, run.Suggestion, run.UsageEvents)
	}
	events := cli("run", "events", runID).stdout
	if strings.Count(events, "\tinterrupted") != 1 || strings.Contains(events, "recovered_after_restart") {
		t.Fatalf("events:\n%s", events)
	}
	cli("suggestion", "accept", run.Suggestion)
	if ex := cli("explain", "d1").stdout; !strings.Contains(ex, "2 attempts of at most 3, 0 retries, 0 recoveries, 1 refunded") {
		t.Fatalf("explain:\n%s", ex)
	}
	d.stop(t)
}
