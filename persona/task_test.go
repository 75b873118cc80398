package persona

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/task"
)

// runner opens a task runner on w's store with the generation task.
func (w *world) runner(t *testing.T, start bool) *task.Runner {
	t.Helper()
	r, err := task.Open(w.db, task.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	w.svc.Register(r, w.src, nil, task.KindOptions{BackoffBase: time.Millisecond, BackoffCap: time.Millisecond})
	if start {
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.Close(ctx)
	})
	return r
}

func TestGenerateAsADurableTask(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, allOn)
	w.runner(t, true)
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	p, err := w.svc.Create(ctx, "author-a", "p", []string{"d1"})
	if err != nil {
		t.Fatal(err)
	}
	j, err := w.svc.StartGenerate(ctx, "author-a", p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != task.Queued || j.Persona != p.ID {
		t.Fatalf("queued job %+v", j)
	}
	if _, err := w.svc.Job(ctx, "author-b", j.Task); err == nil {
		t.Fatal("another user read the job")
	}
	j, err = w.svc.WaitJob(ctx, "author-a", j.Task)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != task.Succeeded || j.Version != 1 || j.Error != nil || j.Attempts != 1 {
		t.Fatalf("finished job %+v", j)
	}
	if got, _ := w.svc.Get(ctx, "author-a", p.ID); got.Active != 1 {
		t.Fatalf("persona %+v, want version 1 active", got)
	}

	// A refusal fails the job at once with its code; version 1 stays.
	w.src.publish("author-a", "d1", VisibilityPrivate, 2, articleB()...)
	j, err = w.svc.StartGenerate(ctx, "author-a", p.ID)
	if err != nil {
		t.Fatal(err)
	}
	j, err = w.svc.WaitJob(ctx, "author-a", j.Task)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != task.Failed || j.Error == nil || j.Error.Code != CodePrivateSource || j.Attempts != 1 {
		t.Fatalf("refused job %+v %+v", j, j.Error)
	}
	if got, _ := w.svc.Get(ctx, "author-a", p.ID); got.Active != 1 || got.Versions != 1 {
		t.Fatalf("persona %+v after a failed job, want version 1 active", got)
	}
}

const envTaskCrashDir = "FOLIO_PERSONA_TASK_CRASH_DIR"

// TestGenerateTaskCrashChild generates version 1, then queues the
// generation of version 2 on a runner and waits to be killed just before
// the version's batch commits.
func TestGenerateTaskCrashChild(t *testing.T) {
	dir := os.Getenv(envTaskCrashDir)
	if dir == "" {
		t.Skip("child of TestCrashDuringTheGenerationTask")
	}
	ctx := context.Background()
	w := &world{dir: dir, src: newSources()}
	w.open(t, allOn)
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	p, err := w.svc.Create(ctx, "author-a", "p", []string{"d1"})
	if err != nil {
		t.Fatal(err)
	}
	mustGenerate(t, w, "author-a", p.ID)
	w.src.publish("author-a", "d1", VisibilityPublic, 2, articleB()...)
	w.svc.testHook = func(stage string) error {
		if stage == "commit" {
			fmt.Println("KILLME")
			select {}
		}
		return nil
	}
	w.runner(t, true)
	j, err := w.svc.StartGenerate(ctx, "author-a", p.ID)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("JOB", p.ID, j.Task)
	select {}
}

// A process killed while the generation task builds version 2: version
// 1 stays active, and the next runner recovers the job and finishes it
// from sources as they are then.
func TestCrashDuringTheGenerationTask(t *testing.T) {
	if os.Getenv(envTaskCrashDir) != "" {
		t.Skip("running as a child")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGenerateTaskCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envTaskCrashDir+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer watchdog.Stop()
	var id, job string
	killed := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "JOB" {
			id, job = f[1], f[2]
		}
		if len(f) == 1 && f[0] == "KILLME" && id != "" {
			cmd.Process.Signal(syscall.SIGKILL)
			killed = true
			break
		}
	}
	cmd.Wait()
	if !killed {
		t.Fatal("the child did not reach the kill point")
	}
	ctx := context.Background()
	w := &world{dir: dir, src: newSources()}
	w.open(t, allOn)
	p, err := w.svc.Get(ctx, "author-a", id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Active != 1 || p.Versions != 1 {
		t.Fatalf("after the crash: %+v, want version 1 active", p)
	}
	j, err := w.svc.Job(ctx, "author-a", job)
	if err != nil || j.State != task.Running {
		t.Fatalf("job after the crash: %+v %v", j, err)
	}
	// The restarted runner runs the job again (the sources are published
	// again here: the fake content service lived in the killed process).
	w.src.publish("author-a", "d1", VisibilityPublic, 3, articleB()...)
	w.runner(t, true)
	j, err = w.svc.WaitJob(ctx, "author-a", job)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != task.Succeeded || j.Version != 2 || j.Attempts != 2 {
		t.Fatalf("recovered job %+v", j)
	}
	v, err := w.svc.Version(ctx, "author-a", id, 0)
	if err != nil || v.Seq != 2 || v.Sources[0].Pin.Label != "v3.r0" {
		t.Fatalf("active version %+v %v", v, err)
	}
}
