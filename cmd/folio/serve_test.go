package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
)

// TestMain lets the test binary act as the folio binary, so that daemon
// tests start a real child process without building one.
func TestMain(m *testing.M) {
	if os.Getenv("FOLIO_TEST_MAIN") == "1" {
		if trigger := os.Getenv("FOLIO_TEST_DISK_FAULT"); trigger != "" {
			storeFS = syncFailsOnTrigger(trigger)
		}
		if os.Getenv("FOLIO_TEST_NO_AGENT_RATE") == "1" {
			agentRate = -1
		}
		if dir := os.Getenv("FOLIO_TEST_PERSONA_HOLD"); dir != "" {
			generationSources = holdSources(dir)
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lockedBuffer collects a child's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// daemon is a `folio serve` child process.
type daemon struct {
	cmd    *exec.Cmd
	dir    string
	url    string
	token  string
	stdout *lockedBuffer
	stderr *lockedBuffer
	done   chan struct{}
	err    error // valid after done is closed
}

var tokenRE = regexp.MustCompile(`FOLIO_TOKEN=(folio_\S+)`)

// startDaemon runs `folio serve` on dir on a free loopback port and
// waits until it has recorded its address. token is the admin token from
// an earlier start ("" on the first start: it is read from the output).
func startDaemon(t testing.TB, dir, token string, extra ...string) *daemon {
	t.Helper()
	return startDaemonWith(t, exec.Command, dir, token, extra...)
}

// startDaemonWith is startDaemon with the function that makes the command
// (to run the daemon under a shell that sets limits, say).
func startDaemonWith(t testing.TB, command func(name string, args ...string) *exec.Cmd, dir, token string, extra ...string) *daemon {
	t.Helper()
	os.Remove(filepath.Join(dir, addrFile))
	d := &daemon{dir: dir, token: token, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	d.cmd = command(os.Args[0], append([]string{"serve", "--data", dir, "--listen", "127.0.0.1:0", "--log-level", "warn"}, extra...)...)
	d.cmd.Env = append(os.Environ(), "FOLIO_TEST_MAIN=1", "FOLIO_CONFIG=", "FOLIO_LISTEN=")
	d.cmd.Stdout, d.cmd.Stderr = d.stdout, d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		select {
		case <-d.done:
		default:
			d.cmd.Process.Kill()
			<-d.done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		// The child's output reaches d.stdout through a pipe copied by
		// another goroutine, so the token printed before the address was
		// recorded may arrive after it: wait for both.
		if b, err := os.ReadFile(filepath.Join(dir, addrFile)); err == nil && len(b) > 0 &&
			(token != "" || tokenRE.MatchString(d.stdout.String())) {
			d.url = strings.TrimSpace(string(b))
			break
		}
		select {
		case <-d.done:
			t.Fatalf("daemon exited: %v\n%s%s", d.err, d.stdout, d.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not start\n%s%s", d.stdout, d.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d.token == "" {
		m := tokenRE.FindStringSubmatch(d.stdout.String())
		if m == nil {
			t.Fatalf("no admin token in the daemon's output:\n%s", d.stdout)
		}
		d.token = m[1]
	}
	return d
}

// stop sends SIGTERM and waits; it returns how long the exit took.
func (d *daemon) stop(t testing.TB) time.Duration {
	t.Helper()
	start := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("daemon did not exit within 15 s of SIGTERM\n%s", d.stderr)
	}
	if d.err != nil {
		t.Fatalf("daemon exit: %v\n%s", d.err, d.stderr)
	}
	return time.Since(start)
}

// cliResult is what one CLI run printed and its exit code.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the CLI in this process, as main does.
func runCLI(args ...string) cliResult {
	var out, errb bytes.Buffer
	code := execute(context.Background(), args, &out, &errb)
	return cliResult{out.String(), errb.String(), code}
}

func writeFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func isolateEnv(t *testing.T) {
	for _, k := range []string{"FOLIO_SERVER", "FOLIO_TOKEN", "FOLIO_DATA", "FOLIO_CONFIG", "FOLIO_LISTEN"} {
		t.Setenv(k, "")
	}
	t.Setenv("FOLIO_USER", "admin")
}

// TestRemoteMatchesDirect runs the history verbs against a daemon and
// directly on a data directory and compares what they print, byte for
// byte, with the exit codes.
func TestRemoteMatchesDirect(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	body1 := writeFile(t, tmp, "b1.json", `{"schemaVersion":1,"blocks":[
		{"id":"p1","type":"paragraph","richText":[{"text":"The first paragraph."}]},
		{"id":"p2","type":"heading","attrs":{"level":2},"richText":[{"text":"A heading"}]}]}`)
	body2 := writeFile(t, tmp, "b2.json", `{"schemaVersion":1,"blocks":[
		{"id":"p1","type":"paragraph","richText":[{"text":"The first paragraph, edited."}]},
		{"id":"p3","type":"paragraph","richText":[{"text":"A new one."}]},
		{"id":"p2","type":"heading","attrs":{"level":2},"richText":[{"text":"A heading"}]}]}`)
	bad := writeFile(t, tmp, "bad.json", `{"schemaVersion":1,"blocks":[{"id":"p1","type":"paragraph","richText":[{"text":1}]}]}`)

	dirA, dirB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	if r := runCLI("--data", dirA, "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	// Both stores have the admin the CLI acts as (FOLIO_USER=admin).
	if r := runCLI("--data", dirA, "user", "add", "admin", "--admin"); r.code != 0 {
		t.Fatalf("user add: %+v", r)
	}
	d := startDaemon(t, dirB, "")
	remote := []string{"--server", d.url, "--token", d.token}
	direct := []string{"--data", dirA}

	writes := [][]string{
		{"doc", "new", "--id", "d1", "--title", "First", "--from", body1},
		{"doc", "new", "--id", "d1", "--title", "Again"},
		{"doc", "new", "--id", "d2", "--title", "Second"},
		{"doc", "save", "d1", "--from", body2},
		{"doc", "save", "d1", "--from", body2, "--checkpoint", "-m", "second"},
		{"doc", "save", "d1", "--from", body2, "--checkpoint"},
		{"doc", "save", "d1", "--from", body1, "--checkpoint", "--format", "json"},
		{"doc", "save", "d1", "--from", bad},
		{"doc", "save", "nosuch", "--from", body1},
		{"restore", "d1", "v1.r0"},
		{"restore", "d1", "v1.r1", "--block", "p3"},
		{"restore", "d1", "v9.r9"},
		{"restore", "d1", "v1.r0", "--block", "nosuchblock"},
		{"restore", "nosuch", "v1.r0"},
		{"restore", "d1", "head~1"},
		{"restore", "d1", "draft"},
		{"doc", "save", "d2", "--from", body1},
		{"checkpoint", "d2", "-m", "sealed by checkpoint"},
		{"checkpoint", "d2", "-m", "nothing left"},
		{"checkpoint", "d2"},
		{"doc", "save", "d2", "--from", body1, "--checkpoint", "-m", "dropped?"},
		{"checkpoint", "nosuch"},
		{"doc", "save", "d2", "--from", body2},
	}
	for _, w := range writes {
		a := runCLI(append(direct, w...)...)
		b := runCLI(append(remote, w...)...)
		if a != b {
			t.Errorf("folio %s:\ndirect: %+v\nremote: %+v", strings.Join(w, " "), a, b)
		}
	}

	reads := [][]string{
		{"doc", "list"}, {"doc", "list", "--format", "json"},
		{"log", "d1"}, {"log", "d1", "--format", "json"}, {"log", "d1", "-n", "2"}, {"log", "nosuch"},
		{"show", "d1"}, {"show", "d1", "--format", "json"}, {"show", "d1@v1.r1", "--format", "text"},
		{"show", "d1@v9.r9"}, {"show", "nosuch"},
		{"diff", "d1", "v1.r0", "v1.r1"}, {"diff", "d1", "v1.r0", "v2.r0", "--format", "json"}, {"diff", "d1", "v1.r0", "v8.r0"},
		{"history", "d1", "p1"}, {"history", "d1", "p3", "--format", "json"}, {"history", "d1", "zz"},
		{"blocks", "d1"}, {"blocks", "d1@v1.r0", "--format", "json"}, {"blocks", "d1@v9.r9"}, {"blocks", "nosuch"},
		{"status"}, {"status", "--format", "json"}, {"status", "d2"}, {"status", "d1", "--format", "json"}, {"status", "nosuch"},
		{"show", "d2@draft"}, {"show", "d1@HEAD", "--format", "text"}, {"show", "d1@head~2", "--format", "json"}, {"show", "d1@head~99"},
		{"show", "d1@head~x"}, {"diff", "d2"}, {"diff", "d2", "head", "draft", "--format", "json"}, {"diff", "d1", "head~3"},
		{"blocks", "d1@head~1"},
		{"fsck"}, {"fsck", "--format", "json"},
		{"pack", "heads"}, {"pack", "heads", "--format", "json"}, {"log", "d1", "-n1"}, {"lgo", "d1"}, {"pack", "export"}, {"pack", "export", "--doc", "d2"}, {"pack", "export", "--doc", "nosuch"},
		{"export", "git"}, {"export", "git", "--doc", "d1", "--branch", "copy"}, {"export", "git", "--branch", "bad..name"},
		{"usage"}, {"usage", "--format", "json"}, {"usage", "--days", "0"},
		{"user", "list"}, {"user", "list", "--format", "json"}, {"token", "list"},
	}
	remoteOut := make([]cliResult, len(reads))
	for i, r := range reads {
		remoteOut[i] = runCLI(append(remote, r...)...)
	}

	// While the daemon holds the directory, direct mode says so.
	held := runCLI("--data", dirB, "log", "d1")
	want := fmt.Sprintf("data directory %s is held by a running folio daemon at %s: use --server %s", dirB, d.url, d.url)
	if held.code != exitUnavailable || !strings.Contains(held.stderr, want) {
		t.Errorf("direct mode on a held directory: %+v, want %q", held, want)
	}

	if took := d.stop(t); took > 10*time.Second {
		t.Errorf("daemon took %v to stop", took)
	}
	if _, err := os.Stat(filepath.Join(dirB, addrFile)); !os.IsNotExist(err) {
		t.Errorf("daemon.addr left behind: %v", err)
	}
	for i, r := range reads {
		got := runCLI(append([]string{"--data", dirB}, r...)...)
		if testing.Verbose() {
			t.Logf("folio %s -> %d\n%s%s", strings.Join(r, " "), got.code, got.stdout, got.stderr)
		}
		if got != remoteOut[i] {
			t.Errorf("folio %s:\ndirect: %+v\nremote: %+v", strings.Join(r, " "), got, remoteOut[i])
		}
	}
	// The history written through the daemon is the one written directly,
	// but for the times and the hashes that cover them.
	volatile := regexp.MustCompile(`"(hash|time)": "[^"]*"`)
	for _, doc := range []string{"d1", "d2"} {
		a := runCLI("--data", dirA, "log", doc, "--format", "json")
		b := runCLI("--data", dirB, "log", doc, "--format", "json")
		if a.code != 0 || volatile.ReplaceAllString(a.stdout, "") != volatile.ReplaceAllString(b.stdout, "") {
			t.Errorf("log %s written directly:\n%s\nwritten through the daemon:\n%s", doc, a.stdout, b.stdout)
		}
	}
	if remoteOut[0].code != 0 || !strings.Contains(remoteOut[0].stdout, "d1") {
		t.Errorf("doc list: %+v", remoteOut[0])
	}
	for i, r := range reads {
		if r[0] == "pack" && len(r) == 2 && r[1] == "export" && (remoteOut[i].code != 0 || len(remoteOut[i].stdout) < 100) {
			t.Errorf("pack export through the daemon: exit %d, %d bytes", remoteOut[i].code, len(remoteOut[i].stdout))
		}
	}

	// ai check runs in the daemon with its configuration, and prints what
	// direct mode prints but for the time it took.
	latency := regexp.MustCompile(`(latency:  |"latency_ms": |"first_text_ms": |first text after )[0-9.]+m?s?`)
	checks := [][]string{{"ai", "check"}, {"ai", "check", "--category", "reading", "--format", "json"}, {"ai", "check", "--category", "poetry"}}
	direct2 := make([]cliResult, len(checks))
	for i, c := range checks {
		direct2[i] = runCLI(append([]string{"--data", dirB}, c...)...)
	}
	d = startDaemon(t, dirB, d.token)
	remote = []string{"--server", d.url, "--token", d.token}
	for i, c := range checks {
		got := runCLI(append(remote, c...)...)
		got.stdout, direct2[i].stdout = latency.ReplaceAllString(got.stdout, "$1#"), latency.ReplaceAllString(direct2[i].stdout, "$1#")
		if got != direct2[i] {
			t.Errorf("folio %s:\ndirect: %+v\nremote: %+v", strings.Join(c, " "), direct2[i], got)
		}
	}
	if direct2[0].code != 0 || !strings.Contains(direct2[0].stdout, "offline local provider") {
		t.Errorf("ai check with the default provider: %+v", direct2[0])
	}
	d.stop(t)
}

// TestUserVerbs manages users and tokens through the daemon and directly.
func TestUserVerbs(t *testing.T) {
	isolateEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	d := startDaemon(t, dir, "")
	remote := []string{"--server", d.url, "--token", d.token}

	r := runCLI(append(remote, "user", "add", "carol", "--format", "json")...)
	var added struct{ User, Token, TokenID string }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &added) != nil || added.User != "carol" || !strings.HasPrefix(added.Token, "folio_") {
		t.Fatalf("user add: %+v", r)
	}
	// carol is an author: her token reads her documents but manages nobody.
	carol := []string{"--server", d.url, "--token", added.Token}
	if r := runCLI(append(carol, "doc", "list")...); r.code != 0 {
		t.Fatalf("carol's doc list: %+v", r)
	}
	if r := runCLI(append(carol, "user", "list")...); r.code != exitDenied || !strings.Contains(r.stderr, "admin") {
		t.Fatalf("carol's user list: %+v", r)
	}
	if r := runCLI(append(carol, "fsck")...); r.code != exitDenied || !strings.Contains(r.stderr, "admin") {
		t.Fatalf("carol's fsck: %+v", r)
	}
	if r := runCLI(append(remote, "user", "add", "carol")...); r.code != exitConflict || !strings.Contains(r.stderr, `user "carol" already exists`) {
		t.Fatalf("duplicate user: %+v", r)
	}
	r = runCLI(append(remote, "user", "list")...)
	if r.code != 0 || !strings.Contains(r.stdout, "carol") || !strings.Contains(r.stdout, "folio_"+added.TokenID) || strings.Contains(r.stdout, added.Token) {
		t.Fatalf("user list: %+v", r)
	}
	r = runCLI(append(remote, "token", "add", "carol", "--kind", "backup", "--format", "json")...)
	if r.code != 0 || !strings.Contains(r.stdout, `"kind": "backup"`) {
		t.Fatalf("token add: %+v", r)
	}
	if r := runCLI(append(remote, "token", "revoke", added.TokenID[:6])...); r.code != 0 || !strings.Contains(r.stdout, "revoked token folio_"+added.TokenID) {
		t.Fatalf("token revoke: %+v", r)
	}
	if r := runCLI(append(carol, "doc", "list")...); r.code != exitDenied || r.stderr != "folio: "+auth.ErrUnauthenticated.Error()+"\n" {
		t.Fatalf("revoked token: %+v", r)
	}
	if r := runCLI(append(remote, "token", "revoke", added.TokenID)...); r.code != exitConflict || !strings.Contains(r.stderr, "already revoked") {
		t.Fatalf("second revoke: %+v", r)
	}
	if r := runCLI("--server", d.url, "--token", "folio_nonsense", "doc", "list"); r.code != exitDenied {
		t.Fatalf("wrong token: %+v", r)
	}
	if r := runCLI("--server", d.url, "doc", "list"); r.code != exitUsage || !strings.Contains(r.stderr, "FOLIO_TOKEN") {
		t.Fatalf("no token: %+v", r)
	}
	d.stop(t)
	if r := runCLI("--server", d.url, "--token", d.token, "doc", "list"); r.code != exitUnavailable || !strings.Contains(r.stderr, "cannot reach") {
		t.Fatalf("stopped daemon: %+v", r)
	}

	// Direct mode on the directory once the daemon is gone.
	if r := runCLI("--data", dir, "user", "delete", "carol"); r.code != 0 || r.stdout != "deleted user carol; 1 token revoked\n" {
		t.Fatalf("user delete: %+v", r)
	}
	if r := runCLI("--data", dir, "user", "delete", "carol"); r.code != exitNotFound || !strings.Contains(r.stderr, `user "carol" not found`) {
		t.Fatalf("user delete again: %+v", r)
	}
	r = runCLI("--data", dir, "user", "add", "dan", "--admin")
	if r.code != 0 || !strings.Contains(r.stdout, "created user dan (admin)") {
		t.Fatalf("direct user add: %+v", r)
	}
	dan := tokenLine(r.stdout)
	// The restarted daemon knows dan and prints no new admin token.
	d2 := startDaemon(t, dir, d.token)
	if tokenRE.MatchString(d2.stdout.String()) {
		t.Fatalf("second start created another admin:\n%s", d2.stdout)
	}
	if r := runCLI("--server", d2.url, "--token", dan, "fsck"); r.code != 0 {
		t.Fatalf("dan's fsck: %+v", r)
	}
	d2.stop(t)
}

// tokenLine returns the token printed by `folio user add` in text form.
func tokenLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "folio_") {
			return l
		}
	}
	return ""
}

// ack is one acknowledged save.
type ack struct {
	seq     uint64
	fp      flowdoc.Fingerprint
	version *repo.VersionInfo
}

// TestSIGTERMUnderLoad stops a daemon with SIGTERM while clients save
// drafts (some sealing checkpoints): it exits 0 within 10 s, and every save
// it acknowledged is in the store afterwards.
func TestSIGTERMUnderLoad(t *testing.T) {
	isolateEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	d := startDaemon(t, dir, "")
	const docs = 6
	hc := &http.Client{Timeout: 20 * time.Second}
	call := func(method, path string, in, out any) (int, error) {
		b, _ := json.Marshal(in)
		req, _ := http.NewRequest(method, d.url+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+d.token)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 == 2 && out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return resp.StatusCode, err
			}
		}
		return resp.StatusCode, nil
	}
	para := func(id, text string) flowdoc.Block {
		return flowdoc.Block{ID: id, Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: text}}}
	}
	for k := 0; k < docs; k++ {
		body := flowdoc.CanonicalJSON(flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{para("p1", "start"), para("p2", "fixed")}})
		if st, err := call("POST", "/v1/docs", server.CreateRequest{ID: fmt.Sprintf("load%d", k), Attrs: flowdoc.Attributes{Title: "Load"}, Body: body}, nil); err != nil || st != 201 {
			t.Fatalf("create: %d %v", st, err)
		}
	}

	acks := make([][]ack, docs)
	var wg sync.WaitGroup
	var total sync.Map
	stop := make(chan struct{})
	for k := 0; k < docs; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			seq := uint64(1)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				b := para("p1", fmt.Sprintf("doc %d save %d", k, i))
				req := server.SaveRequest{BaseSeq: seq}
				if i%2 == 0 {
					req.Changes = []repo.DraftChange{{Op: "upsert", Block: &b}}
				} else {
					req.Body = flowdoc.CanonicalJSON(flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{b, para("p2", "fixed")}})
				}
				if i%4 == 3 {
					req.Seal = "manual"
				}
				var res repo.SaveResult
				st, err := call("POST", fmt.Sprintf("/v1/docs/load%d/draft", k), req, &res)
				if err != nil || st == http.StatusServiceUnavailable {
					return // the daemon is going away
				}
				if st != 200 {
					t.Errorf("save %d/%d: HTTP %d", k, i, st)
					return
				}
				acks[k] = append(acks[k], ack{res.Seq, res.Fingerprint, res.Version})
				total.Store(k, len(acks[k]))
				seq = res.Seq
			}
		}(k)
	}
	// Let the load run until every client has some acknowledged saves.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := 0
		total.Range(func(_, v any) bool {
			if v.(int) >= 25 {
				n++
			}
			return true
		})
		if n == docs || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := d.stop(t)
	close(stop)
	wg.Wait()
	if took > 10*time.Second {
		t.Fatalf("daemon took %v to exit after SIGTERM", took)
	}

	r, err := repo.Open(dir, repo.Options{})
	if err != nil {
		t.Fatalf("reopen after SIGTERM: %v", err)
	}
	defer r.Close()
	ctx := context.Background()
	saves, sealed := 0, 0
	for k := 0; k < docs; k++ {
		doc := fmt.Sprintf("load%d", k)
		if len(acks[k]) == 0 {
			t.Errorf("%s: no save was acknowledged before SIGTERM", doc)
			continue
		}
		saves += len(acks[k])
		last := acks[k][len(acks[k])-1]
		dr, err := r.Draft(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		// A save the daemon committed but could not answer may follow the
		// last acknowledged one; nothing acknowledged may be missing.
		if dr.Seq < last.seq || (dr.Seq == last.seq && dr.Fingerprint != last.fp) {
			t.Errorf("%s: store has draft seq %d %s, last acknowledged seq %d %s", doc, dr.Seq, dr.Fingerprint.Short(), last.seq, last.fp.Short())
		}
		for _, a := range acks[k] {
			if a.version == nil {
				continue
			}
			sealed++
			v, err := r.ResolveLabel(ctx, doc, a.version.Label)
			if err != nil || v.Hash != a.version.Hash {
				t.Errorf("%s: acknowledged version %s (%s) is not in the store: %v", doc, a.version.Label, a.version.Hash.Short(), err)
			}
		}
	}
	if rep, err := r.Fsck(ctx, repo.FsckOptions{}); err != nil || !rep.OK {
		t.Errorf("fsck after SIGTERM: %+v %v", rep, err)
	}
	t.Logf("%d acknowledged saves (%d sealed) survived; daemon exited in %v", saves, sealed, took)
}

// TestServeErrors: a bad address is a usage error, a busy port and a
// served directory say what to do, and nothing is created by a daemon
// that never listened.
func TestServeErrors(t *testing.T) {
	isolateEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	for _, addr := range []string{"127.0.0.1:80000", "127.0.0.1", "127.0.0.1:port"} {
		if r := runCLI("serve", "--data", dir, "--listen", addr); r.code != exitUsage || !strings.Contains(r.stderr, "--listen") || strings.Contains(r.stderr, "daemon") {
			t.Errorf("serve --listen %s: %+v, want a usage error", addr, r)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a refused serve created the directory: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := runCLI("serve", "--data", dir, "--listen", ln.Addr().String())
	if r.code != exitUnavailable || !strings.Contains(r.stderr, "listen on "+ln.Addr().String()+": the address is in use") {
		t.Fatalf("serve on a busy port: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, addrFile)); !os.IsNotExist(err) {
		t.Fatalf("daemon.addr written by a daemon that never listened: %v", err)
	}
	if tokenRE.MatchString(r.stdout) {
		t.Fatalf("a daemon that never listened created the admin: %s", r.stdout)
	}

	// A second daemon on a served directory is told so, as a daemon.
	d := startDaemon(t, dir, "")
	r = runCLI("serve", "--data", dir, "--listen", "127.0.0.1:0")
	want := fmt.Sprintf("data directory %s is already served by the folio daemon at %s: stop that one first", dir, d.url)
	if r.code != exitUnavailable || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "--server") {
		t.Fatalf("second serve: %+v, want %q", r, want)
	}
	d.stop(t)
}

// TestServeCreatesStore: the first run of `folio serve` on a new
// directory creates the store and says so; later runs do not.
func TestServeCreatesStore(t *testing.T) {
	isolateEnv(t)
	dir := filepath.Join(t.TempDir(), "new", "data")
	d := startDaemon(t, dir, "")
	if !strings.Contains(d.stdout.String(), "created a new folio store in "+dir+"\n") {
		t.Fatalf("first run does not say it created the store:\n%s", d.stdout)
	}
	d.stop(t)
	d = startDaemon(t, dir, d.token)
	if strings.Contains(d.stdout.String(), "created a new folio store") {
		t.Fatalf("second run claims to create the store:\n%s", d.stdout)
	}
	d.stop(t)
}

// TestSIGTERMWithStuckRequest: a client that sends half a request and
// stalls does not keep the daemon alive past its shutdown timeout, and
// the exit is still clean.
func TestSIGTERMWithStuckRequest(t *testing.T) {
	isolateEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	d := startDaemon(t, dir, "", "--shutdown-timeout", "500ms")
	if r := runCLI("--server", d.url, "--token", d.token, "doc", "new", "--id", "s1", "--title", "S"); r.code != 0 {
		t.Fatalf("doc new: %+v", r)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(d.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/docs/s1/draft HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{\"baseSeq\":1,", d.token)
	time.Sleep(100 * time.Millisecond) // the handler is now reading the body
	if took := d.stop(t); took > 3*time.Second {
		t.Fatalf("daemon took %v to exit with a stuck request (timeout 500ms)", took)
	}
	r, err := repo.Open(dir, repo.Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer r.Close()
	if dr, err := r.Draft(context.Background(), "s1"); err != nil || dr.Seq != 1 {
		t.Fatalf("draft after the stuck save: %+v %v", dr, err)
	}
}

// TestBackupPullFromDaemon mirrors a running daemon with backup tokens:
// an admin's gets every document, an author's only their own; pulls are
// incremental, and an author's full token may not pull.
func TestBackupPullFromDaemon(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	d := startDaemon(t, filepath.Join(tmp, "data"), "")
	admin := []string{"--server", d.url, "--token", d.token}
	var ann struct{ Token string }
	r := runCLI(append(admin, "user", "add", "ann", "--format", "json")...)
	// An author cannot choose an id: the admin creates "hers" for ann.
	if r := runCLI("--server", d.url, "--token", ann.Token, "doc", "new", "--id", "hers", "--title", "x"); r.code == 0 {
		t.Fatalf("an author chose a document id: %+v", r)
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ann) != nil {
		t.Fatalf("user add: %+v", r)
	}
	for _, c := range [][]string{
		append(admin, "doc", "new", "--id", "mine", "--title", "Admin's"),
		append(admin, "doc", "new", "--id", "hers", "--owner", "ann", "--title", "Ann's"),
	} {
		if r := runCLI(c...); r.code != 0 {
			t.Fatalf("%v: %+v", c, r)
		}
	}
	backupToken := func(user string) string {
		var it struct{ Token string }
		r := runCLI(append(admin, "token", "add", user, "--kind", "backup", "--format", "json")...)
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &it) != nil {
			t.Fatalf("token add: %+v", r)
		}
		return it.Token
	}
	all, annOnly := filepath.Join(tmp, "all"), filepath.Join(tmp, "ann")
	pull := func(token, to string) cliResult {
		return runCLI("--server", d.url, "--token", token, "backup", "pull", "--to", to, "--format", "json")
	}
	type pulled struct{ Docs, New int }
	parse := func(r cliResult) pulled {
		var p pulled
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil {
			t.Fatalf("backup pull: %+v", r)
		}
		return p
	}
	adminBackup := backupToken("admin")
	if p := parse(pull(adminBackup, all)); p.Docs != 2 || p.New == 0 {
		t.Fatalf("first pull: %+v", p)
	}
	if p := parse(pull(adminBackup, all)); p.New != 0 {
		t.Fatalf("second pull brought %d new objects, want 0", p.New)
	}
	if p := parse(pull(backupToken("ann"), annOnly)); p.Docs != 1 {
		t.Fatalf("ann's pull carried %d documents, want 1", p.Docs)
	}
	if r := pull(ann.Token, filepath.Join(tmp, "x")); r.code != exitDenied || !strings.Contains(r.stderr, "backup token") {
		t.Fatalf("pull with an author's full token: %+v", r)
	}
	// A pull that sees no documents says so (and how to see them all).
	if r := runCLI(append(admin, "user", "add", "cy")...); r.code != 0 {
		t.Fatalf("user add cy: %+v", r)
	}
	r = pull(backupToken("cy"), filepath.Join(tmp, "cy"))
	if p := parse(r); p.Docs != 0 || !strings.Contains(r.stderr, "note: the daemon at "+d.url+" showed this token no documents") ||
		!strings.Contains(r.stderr, "folio token add admin --kind backup") {
		t.Fatalf("pull that sees nothing: %+v", r)
	}
	// The backup token cannot change anything.
	if r := runCLI("--server", d.url, "--token", adminBackup, "doc", "new", "--title", "x"); r.code != exitDenied || !strings.Contains(r.stderr, "may only read") {
		t.Fatalf("backup token wrote: %+v", r)
	}
	d.stop(t)
	for _, c := range []struct{ dir, doc string }{{all, "mine"}, {all, "hers"}, {annOnly, "hers"}} {
		want := runCLI("--data", d.dir, "log", c.doc, "--format", "json")
		got := runCLI("--data", c.dir, "log", c.doc, "--format", "json")
		if got != want || want.code != 0 {
			t.Errorf("log %s in the mirror %s:\n%+v\nwant\n%+v", c.doc, c.dir, got, want)
		}
	}
	if r := runCLI("--data", annOnly, "log", "mine"); r.code != exitNotFound {
		t.Errorf("ann's mirror holds the admin's document: %+v", r)
	}
}
