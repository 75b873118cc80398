package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv/pgkv"
	"github.com/foliodev/folio/internal/kv/pgkv/pgtest"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
	"github.com/jackc/pgx/v5"
)

// pgPassword is put into every DSN of these tests (the test cluster
// trusts local connections, so it is sent and ignored): it must never
// show in anything the daemon or the CLI prints.
const pgPassword = "pw-never-printed-7f3a"

// pgConfig writes a configuration file putting the store in database
// dsn and returns its path.
func pgConfig(t testing.TB, dir, dsn string) string {
	t.Helper()
	return writeFile(t, dir, "folio-pg.toml", fmt.Sprintf("[storage]\nengine = \"postgres\"\ndsn = %q\nmax_conns = 4\nstatement_timeout = \"10s\"\n", dsn+" password="+pgPassword))
}

// volatileOut masks what differs between two stores holding the same
// history: hashes (they cover times), times and durations.
var volatileOut = regexp.MustCompile(`[0-9a-f]{7,64}|\d{4}-\d\d-\d\d[T ][0-9:.]+(Z|[+-]\d\d:?\d\d)?( UTC)?|\d+(\.\d+)?(ms|µs|s) ago|"(time|at|seconds|ms|took_ms|elapsed_ms)": [0-9.]+`)

// TestServeOnPostgres runs one `folio serve` on PostgreSQL and one on
// Pebble, makes the same history on both — documents from the CLI, drafts
// saved over /v1/sync, checkpoints, a restore, a publication — and
// checks that every verb answers the same on both, that the history is in
// the database after the daemon stops (direct mode reads it), that direct
// mode is refused while the daemon holds the database, and that the DSN's
// password is never printed.
func TestServeOnPostgres(t *testing.T) {
	isolateEnv(t)
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	tmp := t.TempDir()
	cfg := pgConfig(t, tmp, dsn)
	body := writeFile(t, tmp, "b.json", `{"schemaVersion":1,"blocks":[
		{"id":"p1","type":"paragraph","richText":[{"text":"The first paragraph."}]},
		{"id":"h1","type":"heading","attrs":{"level":2},"richText":[{"text":"A heading"}]}]}`)

	dirP, dirG := filepath.Join(tmp, "pebble"), filepath.Join(tmp, "pg")
	dP := startDaemon(t, dirP, "")
	dG := startDaemon(t, dirG, "", "--config", cfg)
	if !strings.Contains(dP.stdout.String(), "created a new folio store") {
		t.Errorf("pebble daemon's first start: %s", dP.stdout)
	}
	ctx := context.Background()

	// The same history on both daemons.
	history := func(d *daemon) []cliResult {
		remote := []string{"--server", d.url, "--token", d.token}
		var out []cliResult
		run := func(a ...string) { out = append(out, runCLI(append(remote, a...)...)) }
		run("doc", "new", "--id", "d1", "--title", "On PostgreSQL", "--from", body)
		run("doc", "new", "--id", "d2", "--title", "Second")
		ws := "ws" + strings.TrimPrefix(d.url, "http") + "/v1/sync"
		c, err := client.Dial(ctx, ws, client.Options{Token: d.token, Name: "editor"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		snap, err := c.Open(ctx, "d1")
		if err != nil {
			t.Fatal(err)
		}
		seq := snap.Seq
		for i := range 20 {
			b := flowdoc.Block{ID: "p1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: fmt.Sprintf("typed %d", i)}}}
			ack, err := c.Save(ctx, "d1", seq, syncproto.Change{Op: "upsert", Block: &b})
			if err != nil {
				t.Fatalf("save %d: %v", i, err)
			}
			if ack.Seq != seq+1 {
				t.Fatalf("save %d: ack seq %d after %d", i, ack.Seq, seq)
			}
			seq = ack.Seq
		}
		cp, err := c.Checkpoint(ctx, "d1", "", "twenty keystrokes")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cliResult{stdout: fmt.Sprintf("checkpoint %s", cp.Version.Label)})
		rd, err := c.Restore(ctx, "d1", "v1.r0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cliResult{stdout: fmt.Sprintf("restore %s", rd.Version.Label)})
		c.Close()
		run("publish", "d1", "-m", "out")
		for _, r := range [][]string{
			{"log", "d1"}, {"log", "d1", "--format", "json"}, {"show", "d1"}, {"history", "d1", "p1"},
			{"diff", "d1", "v1.r0", "v1.r1"}, {"status"}, {"doc", "list"}, {"fsck"}, {"pack", "heads"},
		} {
			run(r...)
		}
		// pack heads lists refs by their target's hash, which covers times.
		heads := &out[len(out)-1]
		lines := strings.Split(volatileOut.ReplaceAllString(heads.stdout, "#"), "\n")
		slices.Sort(lines)
		heads.stdout = strings.Join(lines, "\n")
		return out
	}
	onPebble, onPG := history(dP), history(dG)
	for i := range onPebble {
		a, b := onPebble[i], onPG[i]
		a.stdout, b.stdout = volatileOut.ReplaceAllString(a.stdout, "#"), volatileOut.ReplaceAllString(b.stdout, "#")
		a.stderr, b.stderr = volatileOut.ReplaceAllString(a.stderr, "#"), volatileOut.ReplaceAllString(b.stderr, "#")
		if a != b {
			t.Errorf("step %d:\npebble:   %+v\npostgres: %+v", i, a, b)
		}
		if onPG[i].code != 0 {
			t.Errorf("step %d on postgres: %+v", i, onPG[i])
		}
	}
	if testing.Verbose() {
		for _, r := range onPG {
			t.Logf("%d %s%s", r.code, r.stdout, r.stderr)
		}
	}
	// fsck on PostgreSQL finds the store clean.
	if fsck := onPG[len(onPG)-2]; !strings.Contains(fsck.stdout, "2 documents, 4 versions checked: 0 problems") {
		t.Errorf("fsck on postgres: %+v", fsck)
	}

	// Direct mode is refused while the daemon holds the database.
	held := runCLI("--data", dirG, "--config", cfg, "log", "d1")
	if held.code != exitUnavailable || !strings.Contains(held.stderr, "held by a running folio daemon at "+dG.url) {
		t.Errorf("direct mode on a held database: %+v", held)
	}
	// So is a second daemon on the same database.
	second := runCLI("--data", filepath.Join(tmp, "pg2"), "serve", "--config", cfg, "--listen", "127.0.0.1:0")
	if second.code != exitUnavailable || !strings.Contains(second.stderr, "already served by another folio daemon") {
		t.Errorf("a second daemon on the database: %+v", second)
	}
	dG.stop(t)
	dP.stop(t)

	// What the daemon wrote is in the database: direct mode reads it.
	log := runCLI("--data", dirG, "--config", cfg, "log", "d1", "--format", "json")
	if log.code != 0 || volatileOut.ReplaceAllString(log.stdout, "#") != volatileOut.ReplaceAllString(onPG[6].stdout, "#") {
		t.Errorf("log d1 in direct mode after the daemon stopped: %+v\nthrough the daemon: %s", log, onPG[6].stdout)
	}
	// A restarted daemon serves the same store.
	dG = startDaemon(t, dirG, dG.token, "--config", cfg)
	again := runCLI("--server", dG.url, "--token", dG.token, "log", "d1")
	if volatileOut.ReplaceAllString(again.stdout, "#") != volatileOut.ReplaceAllString(onPG[5].stdout, "#") {
		t.Errorf("log after a restart: %+v\nbefore: %s", again, onPG[5].stdout)
	}
	dG.stop(t)

	for _, out := range []string{dG.stdout.String(), dG.stderr.String(), log.stdout, log.stderr, held.stderr, second.stderr} {
		if strings.Contains(out, pgPassword) {
			t.Errorf("the DSN's password is printed:\n%s", out)
		}
	}
}

// TestPostgresOpenErrors: a DSN that does not parse, a database that
// cannot be reached and a schema written by a newer folio each fail with
// one clear line and exit code, never printing the password.
func TestPostgresOpenErrors(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	bad := writeFile(t, tmp, "bad.toml", "[storage]\nengine = \"postgres\"\ndsn = \"postgres://folio:"+pgPassword+"@[::1\"\n")
	r := runCLI("--data", tmp, "--config", bad, "doc", "list")
	if r.code != exitInvalid || !strings.Contains(r.stderr, "DSN does not parse") || strings.Contains(r.stderr, pgPassword) {
		t.Errorf("a DSN that does not parse: %+v", r)
	}
	// Nothing listens on a fresh port's socket directory.
	gone := pgConfig(t, tmp, fmt.Sprintf("host=%s port=1 user=folio dbname=folio sslmode=disable connect_timeout=2", tmp))
	for _, a := range [][]string{{"doc", "list"}, {"serve", "--listen", "127.0.0.1:0"}} {
		r = runCLI(append([]string{"--data", filepath.Join(tmp, "d"), "--config", gone}, a...)...)
		if r.code != exitUnavailable || !strings.Contains(r.stderr, "postgres "+tmp+":1/folio") || strings.Contains(r.stderr, pgPassword) {
			t.Errorf("%s on an unreachable database: %+v", a[0], r)
		}
	}

	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	cfg := pgConfig(t, tmp, dsn)
	if r := runCLI("--data", tmp, "--config", cfg, "init"); r.code != 0 {
		t.Fatalf("init on postgres: %+v", r)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO folio_schema (version) VALUES ($1)`, pgkv.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	r = runCLI("--data", tmp, "--config", cfg, "doc", "list")
	if r.code != exitUnavailable || !strings.Contains(r.stderr, "newer than this folio's") {
		t.Errorf("a schema of a newer folio: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(tmp, "FOLIO")); err == nil {
		t.Errorf("init on postgres wrote a Pebble marker into the data directory")
	}
}

// health fetches the daemon's /healthz.
func health(t testing.TB, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, h
}

// waitHealth waits until /healthz answers code with "database": db.
func waitHealth(t testing.TB, d *daemon, code int, db string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, h := health(t, d.url)
		if c == code && h["database"] == db {
			return h
		}
		select {
		case <-d.done:
			t.Fatalf("the daemon exited: %v\n%s", d.err, d.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz is %d %v, want %d with database %q", c, h, code, db)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPostgresOutage stops the database (pg_ctl stop -m immediate: no
// shutdown checkpoint, as a crash) while documents are created in a loop
// through the daemon, then starts it again: while it is down writes fail
// with storage_failed (exit 6) and /healthz says the database is
// unreachable; the daemon does not exit and serves again by itself once
// the database is back; every acknowledged document is there and fsck is
// clean.
func TestPostgresOutage(t *testing.T) {
	isolateEnv(t)
	cluster := pgtest.Start(t)
	tmp := t.TempDir()
	cfg := pgConfig(t, tmp, cluster.NewDatabase(t))
	d := startDaemon(t, filepath.Join(tmp, "data"), "", "--config", cfg)
	remote := []string{"--server", d.url, "--token", d.token}
	if c, h := health(t, d.url); c != 200 || h["database"] != "ok" {
		t.Fatalf("/healthz of a daemon on postgres: %d %v", c, h)
	}

	var (
		mu      sync.Mutex
		acked   []string
		failed  []cliResult
		stop    = make(chan struct{})
		stopped = make(chan struct{})
	)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("w%04d", i)
			r := runCLI(append(remote, "doc", "new", "--id", id, "--title", "written in a loop")...)
			mu.Lock()
			if r.code == 0 {
				acked = append(acked, id)
			} else {
				failed = append(failed, r)
			}
			mu.Unlock()
			if r.code != 0 {
				time.Sleep(20 * time.Millisecond) // a client's retry pause
			}
		}
	}()
	waitCount := func(n int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for count() < n {
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%d writes acknowledged, want %d; failures: %+v", len(acked), n, failed)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitCount(20)
	cluster.Kill(t)
	h := waitHealth(t, d, http.StatusServiceUnavailable, "unreachable")
	if e, _ := h["error"].(map[string]any); e["code"] != "storage_failed" || strings.Contains(fmt.Sprint(h), pgPassword) {
		t.Errorf("/healthz while the database is down: %v", h)
	}
	down := count()
	r := runCLI(append(remote, "doc", "new", "--id", "while-down", "--title", "x")...)
	if r.code != exitUnavailable || !strings.Contains(r.stderr, "unreachable") {
		t.Errorf("a write while the database is down: %+v", r)
	}
	time.Sleep(500 * time.Millisecond) // the loop keeps trying
	cluster.Resume(t)
	waitHealth(t, d, http.StatusOK, "ok")
	waitCount(count() + 20)
	close(stop)
	<-stopped

	mu.Lock()
	defer mu.Unlock()
	if len(failed) == 0 {
		t.Error("no write failed while the database was down")
	}
	for _, f := range failed {
		if f.code != exitUnavailable {
			t.Errorf("a write during the outage: %+v, want exit %d (storage_failed)", f, exitUnavailable)
		}
	}
	list := runCLI(append(remote, "doc", "list", "--format", "json")...)
	for _, id := range acked {
		if !strings.Contains(list.stdout, `"`+id+`"`) {
			t.Errorf("acknowledged document %s is missing after the outage", id)
		}
	}
	if fsck := runCLI(append(remote, "fsck")...); fsck.code != 0 || !strings.Contains(fsck.stdout, " 0 problems") {
		t.Errorf("fsck after the outage: %+v", fsck)
	}
	t.Logf("%d writes acknowledged (%d before the outage), %d refused during it; a refusal: %s", len(acked), down, len(failed), r.stderr)
	d.stop(t)
	if testing.Verbose() {
		t.Logf("the daemon's log:\n%s", d.stderr)
	}
	if strings.Contains(d.stderr.String(), pgPassword) {
		t.Errorf("the daemon logged the DSN's password:\n%s", d.stderr)
	}
}

// TestMoveStoreBetweenEngines moves a store from Pebble to PostgreSQL and
// back with `pack export | pack import`: the histories are the same,
// hash for hash, on all three stores, and fsck is clean on each.
func TestMoveStoreBetweenEngines(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	body := writeFile(t, tmp, "b.json", `{"schemaVersion":1,"blocks":[{"id":"p1","type":"paragraph","richText":[{"text":"Moved."}]}]}`)
	body2 := writeFile(t, tmp, "b2.json", `{"schemaVersion":1,"blocks":[{"id":"p1","type":"paragraph","richText":[{"text":"Moved twice."}]}]}`)
	src := []string{"--data", filepath.Join(tmp, "src")}
	for _, a := range [][]string{
		{"init"}, {"user", "add", "admin", "--admin"},
		{"doc", "new", "--id", "d1", "--title", "Moving", "--from", body},
		{"doc", "save", "d1", "--from", body2, "--checkpoint", "-m", "second"},
		{"doc", "new", "--id", "d2", "--title", "Other"},
	} {
		if r := runCLI(append(src, a...)...); r.code != 0 {
			t.Fatalf("%v: %+v", a, r)
		}
	}
	cluster := pgtest.Start(t)
	pg := []string{"--data", filepath.Join(tmp, "pg"), "--config", pgConfig(t, tmp, cluster.NewDatabase(t))}
	back := []string{"--data", filepath.Join(tmp, "back")}
	move := func(from, to []string) {
		t.Helper()
		exp := runCLI(append(from, "pack", "export")...)
		if exp.code != 0 {
			t.Fatalf("pack export: %+v", exp)
		}
		file := writeFile(t, tmp, "all.pack", exp.stdout)
		if r := runCLI(append(to, "init")...); r.code != 0 {
			t.Fatalf("init: %+v", r)
		}
		if r := runCLI(append(to, "pack", "import", file)...); r.code != 0 {
			t.Fatalf("pack import: %+v", r)
		}
	}
	move(src, pg)
	move(pg, back)
	for _, doc := range []string{"d1", "d2"} {
		want := runCLI(append(src, "log", doc, "--format", "json")...)
		for name, store := range map[string][]string{"postgres": pg, "back on pebble": back} {
			if got := runCLI(append(store, "log", doc, "--format", "json")...); got != want {
				t.Errorf("log %s %s:\n%+v\nwant %+v", doc, name, got, want)
			}
		}
	}
	for _, store := range [][]string{src, pg, back} {
		if r := runCLI(append(store, "fsck")...); r.code != 0 || !strings.Contains(r.stdout, "2 documents") || !strings.Contains(r.stdout, " 0 problems") {
			t.Errorf("fsck %v: %+v", store, r)
		}
	}
}
