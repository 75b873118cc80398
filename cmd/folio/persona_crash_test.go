package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/source"
)

// heldSources holds every source load of a generation: it creates
// <dir>/held and waits until <dir>/release exists (or the task's context
// ends). The test binary acting as the daemon installs it when
// FOLIO_TEST_PERSONA_HOLD names such a directory.
type heldSources struct {
	persona.Sources
	dir string
}

func holdSources(dir string) func(persona.Sources) persona.Sources {
	return func(s persona.Sources) persona.Sources { return heldSources{Sources: s, dir: dir} }
}

func (h heldSources) Load(ctx context.Context, pin source.Pin) (source.Document, error) {
	if err := os.WriteFile(filepath.Join(h.dir, "held"), nil, 0o644); err != nil {
		return source.Document{}, err
	}
	for {
		if _, err := os.Stat(filepath.Join(h.dir, "release")); err == nil {
			return h.Sources.Load(ctx, pin)
		}
		select {
		case <-ctx.Done():
			return source.Document{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitForFile waits until path exists or the daemon exits.
func waitForFile(t *testing.T, d *daemon, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a hang guard, not a speed check
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-d.done:
			t.Fatalf("the daemon exited before %s appeared: %v\n%s", path, d.err, d.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared\n%s", path, d.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A daemon killed (SIGKILL) while a "generate persona version" task is
// between pinning its sources and activating: the version active before
// stays active through the crash and while the recovered task runs
// again; the task then makes exactly one new version, its job records
// two attempts and that version, a further restart changes nothing, and
// fsck finds the store clean.
func TestPersonaDaemonKilledMidGeneration(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	src := writeFile(t, tmp, "src.json", personaSource)
	dir := filepath.Join(tmp, "data")
	ctx := context.Background()

	d := startDaemon(t, dir, "")
	token := d.token
	dial := func() *remote {
		t.Helper()
		r, err := dialRemote(d.url, token)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cli := func(args ...string) cliResult {
		t.Helper()
		r := runCLI(append([]string{"--server", d.url, "--token", token}, args...)...)
		if r.code != 0 {
			t.Fatalf("folio %s: %+v", strings.Join(args, " "), r)
		}
		return r
	}
	cli("doc", "new", "--id", "s1", "--title", "加入星火", "--from", src)
	cli("publish", "s1")
	pid := jsonID(t, cli("persona", "create", "--name", "博客", "--source", "s1", "--format", "json"), "id")
	if out := cli("persona", "generate", pid, "--wait").stdout; !strings.Contains(out, "version 1 of persona") {
		t.Fatalf("first generation: %s", out)
	}
	d.stop(t)

	// The second generation is held while it loads its sources; the
	// daemon is killed there.
	holdB, holdC := filepath.Join(tmp, "hold-b"), filepath.Join(tmp, "hold-c")
	for _, h := range []string{holdB, holdC} {
		if err := os.Mkdir(h, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("FOLIO_TEST_PERSONA_HOLD", holdB)
	d = startDaemon(t, dir, token)
	job, err := dial().GeneratePersona(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	waitForFile(t, d, filepath.Join(holdB, "held"))
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.done

	// Restarted, the recovered task runs again and is held the same way:
	// meanwhile version 1 is the active one and the job is not over.
	t.Setenv("FOLIO_TEST_PERSONA_HOLD", holdC)
	d = startDaemon(t, dir, token)
	waitForFile(t, d, filepath.Join(holdC, "held"))
	r := dial()
	p, err := r.Persona(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	if p.Active != 1 || p.Versions != 1 {
		t.Fatalf("while the recovered generation runs: active %d of %d versions, want 1 of 1", p.Active, p.Versions)
	}
	var mid persona.Job
	if err := r.do(ctx, http.MethodGet, personaPath(pid, "jobs", job.Task), nil, nil, &mid); err != nil {
		t.Fatal(err)
	}
	if mid.State.Terminal() || mid.Version != 0 {
		t.Fatalf("while the recovered generation runs: job %+v", mid)
	}
	if out := cli("persona", "style", pid).stdout; !strings.Contains(out, "of persona "+pid+" version 1 ") {
		t.Errorf("the active style profile is not version 1's:\n%s", out)
	}

	// Released, it ends with one new version.
	if err := os.WriteFile(filepath.Join(holdC, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute) // a hang guard
	defer cancel()
	done, err := r.WaitPersonaJob(wctx, pid, job.Task)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, j persona.Job) {
		t.Helper()
		if j.State != task.Succeeded || j.Version != 2 || j.Attempts != 2 || j.Error != nil || j.Finished == 0 {
			t.Fatalf("%s: job %+v, want succeeded with version 2 after 2 attempts", when, j)
		}
		p, err := dial().Persona(ctx, pid)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := dial().PersonaVersions(ctx, pid)
		if err != nil {
			t.Fatal(err)
		}
		if p.Active != 2 || p.Versions != 2 || len(vs) != 2 {
			t.Fatalf("%s: active %d of %d versions, %d listed; want 2 of 2", when, p.Active, p.Versions, len(vs))
		}
		for _, v := range vs {
			if v.Seq == 2 && v.Key != job.Task {
				t.Fatalf("%s: version 2 was made by %q, not the job %s", when, v.Key, job.Task)
			}
		}
	}
	check("after the restart", done)
	d.stop(t)

	// A clean restart with nothing held runs nothing again.
	t.Setenv("FOLIO_TEST_PERSONA_HOLD", "")
	d = startDaemon(t, dir, token)
	var again persona.Job
	if err := dial().do(ctx, http.MethodGet, personaPath(pid, "jobs", job.Task), nil, nil, &again); err != nil {
		t.Fatal(err)
	}
	check("after a second restart", again)
	d.stop(t)
	if r := runCLI("--data", dir, "fsck"); r.code != 0 {
		t.Fatalf("fsck: %+v", r)
	}
}
