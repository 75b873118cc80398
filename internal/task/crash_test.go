package task

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
)

// The crash test re-executes the test binary as a child that runs tasks
// against a shared store and is SIGKILLed at chosen points: inside a
// handler before and after its business effect, right after particular
// transitions committed, right after an enqueue, and at random moments.
// After every round a new child restarts on the same store (recovery runs
// first); at the end the parent drains the queue in-process and checks the
// store.

const (
	envCrashDir   = "FOLIO_TASK_CRASH_DIR"
	envCrashRound = "FOLIO_TASK_CRASH_ROUND"
	envCrashKill  = "FOLIO_TASK_CRASH_KILL" // point:occurrence
)

// Workload of one round: the mode of task j is crashModes[j].
var crashModes = []string{"ok", "flaky", "ok", "perm", "cancel", "flaky"}

var killPoints = []string{
	"handler-start", "effect-written", "commit:" + EventStarted, "commit:" + EventRetryScheduled,
	"commit:" + EventEnqueued, "commit:" + EventSucceeded, "commit:" + EventCancelRequested, "timer",
}

func effectKey(id ID) []byte       { return kv.TableKey("crashtest", "effect", id.String()) }
func effectLogPrefix(id ID) []byte { return kv.TableKey("crashtest", "log", id.String(), "") }

// crashHandler is the business logic of the crash workload. Its effect is
// keyed by task id and written only when absent, in one synced batch with
// an append to an effect log that must end with exactly one entry per task.
func crashHandler(r *Runner, db *kv.DB, mu *sync.Mutex, point func(string)) Handler {
	return func(ctx context.Context, t *Task) error {
		point("handler-start")
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		mode := string(t.Payload)
		switch mode {
		case "perm":
			return Permanent(errors.New("invalid request"))
		case "cancel":
			go r.Cancel(context.Background(), t.ID)
			<-ctx.Done()
			return nil
		case "flaky":
			if t.Attempt == 1 {
				return errors.New("transient upstream error")
			}
		}
		mu.Lock()
		done, err := kv.Has(db, effectKey(t.ID))
		if err == nil && !done {
			b := db.NewBatch()
			b.Set(effectKey(t.ID), []byte("1"))
			b.Set(kv.Uint64(effectLogPrefix(t.ID), uint64(time.Now().UnixNano())), nil)
			err = db.Apply(b, kv.Sync)
			b.Close()
		} else if done {
			fmt.Println("RERUN", t.ID)
		}
		mu.Unlock()
		if err != nil {
			return err
		}
		point("effect-written")
		return nil
	}
}

func crashKindOptions() KindOptions {
	return KindOptions{MaxAttempts: 10, BackoffBase: time.Millisecond, BackoffCap: 5 * time.Millisecond}
}

// TestCrashChild is the child process of TestCrash; it does nothing unless
// started by it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(envCrashDir)
	if dir == "" {
		t.Skip("child of TestCrash")
	}
	round, _ := strconv.Atoi(os.Getenv(envCrashRound))
	spec := os.Getenv(envCrashKill)
	i := strings.LastIndexByte(spec, ':')
	killAt := spec[:max(i, 0)]
	want, _ := strconv.Atoi(spec[i+1:])
	var seenMu sync.Mutex
	seen := map[string]int{}
	point := func(p string) {
		seenMu.Lock()
		seen[p]++
		hit := p == killAt && seen[p] == want
		seenMu.Unlock()
		if hit {
			fmt.Println("KILLME", p)
			select {} // wait for SIGKILL
		}
	}
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(db, Options{Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	r.testHook = func(p string, _ Task) { point(p) }
	var mu sync.Mutex
	r.Register("work", crashHandler(r, db, &mu, point), crashKindOptions())
	ctx := context.Background()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Println("READY")
	enqueue := func(key, mode string) {
		tk, _, err := r.Enqueue(ctx, Spec{Kind: "work", User: "u" + key[len(key)-1:], Payload: []byte(mode), UniqueKey: key})
		if err != nil {
			t.Error(err)
			return
		}
		fmt.Println("ENQ", key, tk.ID, mode)
	}
	for j, mode := range crashModes {
		enqueue(fmt.Sprintf("r%d-%d", round, j), mode)
	}
	if round > 0 {
		enqueue(fmt.Sprintf("r%d-0", round-1), crashModes[0]) // idempotent across restarts
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		q, _ := r.List(ctx, Queued, 0, 1)
		run, _ := r.List(ctx, Running, 0, 1)
		if len(q) == 0 && len(run) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks still pending after 15s: queued %v, running %v", q, run)
		}
		time.Sleep(2 * time.Millisecond)
	}
	r.Close(ctx)
	db.Close()
	fmt.Println("IDLE")
}

type crashEnq struct {
	key, mode string
	id        ID
}

func TestCrash(t *testing.T) {
	if os.Getenv(envCrashDir) != "" {
		t.Skip("running as a child")
	}
	rounds := 24
	if testing.Short() {
		rounds = 8
	}
	dir := t.TempDir()
	var enqs []crashEnq
	kills, reruns := 0, 0
	for round := range rounds {
		point := killPoints[round%len(killPoints)]
		kill := fmt.Sprintf("%s:%d", point, 1+round%3)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashRound+"="+strconv.Itoa(round), envCrashKill+"="+kill)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var killOnce sync.Once
		doKill := func() { killOnce.Do(func() { cmd.Process.Signal(syscall.SIGKILL) }) }
		var hung atomic.Bool
		watchdog := time.AfterFunc(30*time.Second, func() { hung.Store(true); doKill() })
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 0 {
				continue
			}
			switch f[0] {
			case "READY":
				if point == "timer" {
					time.AfterFunc(time.Duration(2+rand.IntN(20))*time.Millisecond, doKill)
				}
			case "KILLME":
				doKill()
			case "RERUN":
				reruns++
			case "ENQ":
				id, err := ParseID(f[2])
				if err != nil {
					t.Fatalf("child printed %q: %v", sc.Text(), err)
				}
				enqs = append(enqs, crashEnq{key: f[1], id: id, mode: f[3]})
			case "PASS", "IDLE":
			default:
				t.Logf("round %d child: %s", round, sc.Text())
			}
		}
		err = cmd.Wait()
		watchdog.Stop()
		if hung.Load() {
			t.Fatalf("round %d: child made no progress for 30s (kill point %s)", round, kill)
		}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled():
			kills++
		case err != nil:
			t.Fatalf("round %d child failed: %v", round, err)
		}
	}
	if min := rounds * 3 / 4; kills < min {
		t.Fatalf("only %d of %d rounds ended in SIGKILL; want at least %d", kills, rounds, min)
	}

	// Restart in-process and drain whatever the last kill left behind.
	db := openDB(t, dir)
	defer db.Close()
	r, err := Open(db, Options{Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	r.Register("work", crashHandler(r, db, &mu, func(string) {}), crashKindOptions())
	ctx := context.Background()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h := &harness{tb: t, db: db, r: r}
	h.waitFor("queue to drain", func() bool {
		q, _ := r.List(ctx, Queued, 0, 1)
		run, _ := r.List(ctx, Running, 0, 1)
		return len(q) == 0 && len(run) == 0
	})
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	verifyCrashStore(t, db, enqs)
	t.Logf("%d rounds, %d SIGKILLs, %d acknowledged enqueues, %d handler reruns found the effect already recorded",
		rounds, kills, len(enqs), reruns)
	if !testing.Short() && reruns == 0 {
		t.Fatal("no handler ever re-ran after its effect was written; the test did not exercise the crash window")
	}
}

func verifyCrashStore(t *testing.T, db *kv.DB, enqs []crashEnq) {
	t.Helper()
	// The state index names every task exactly once, in its record's state.
	inIndex := map[ID]State{}
	p := kv.TableKey(tableState, "")
	it, _ := db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	for it.First(); it.Valid(); it.Next() {
		k := string(it.Key()[len(p):])
		st, ids, _ := strings.Cut(k, "\x00")
		id, err := ParseID(ids)
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := inIndex[id]; dup {
			t.Errorf("task %s is in two state indexes: %s and %s", id, prev, st)
		}
		inIndex[id] = State(st)
	}
	it.Close()
	due := kv.TableKey(tableDue, "")
	it, _ = db.NewIter(&kv.IterOptions{LowerBound: due, UpperBound: kv.PrefixEnd(due)})
	if it.First() {
		t.Errorf("due index still holds %q after the queue drained", it.Key())
	}
	it.Close()

	byKey := map[string]ID{}
	for _, e := range enqs {
		if prev, ok := byKey[e.key]; ok && prev != e.id {
			t.Errorf("unique key %s gave two tasks: %s and %s", e.key, prev, e.id)
		}
		byKey[e.key] = e.id
	}
	checked := map[ID]bool{}
	for _, e := range enqs {
		if checked[e.id] {
			continue
		}
		checked[e.id] = true
		tk, err := loadTask(db, e.id)
		if err != nil {
			t.Errorf("acknowledged task %s (%s) lost: %v", e.id, e.key, err)
			continue
		}
		if inIndex[e.id] != tk.State {
			t.Errorf("task %s: record says %s, index says %q", e.id, tk.State, inIndex[e.id])
		}
		want := map[string]State{"ok": Succeeded, "flaky": Succeeded, "perm": Failed, "cancel": Cancelled}[e.mode]
		if tk.State != want {
			t.Errorf("task %s (%s): ended %s after %d attempts (%s), want %s", e.id, e.mode, tk.State, tk.Attempt, tk.LastError, want)
		}
		evs, err := stream.Read(db, e.id.Stream(), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		terminal, started := 0, 0
		for i, ev := range evs {
			if ev.Seq != uint64(i+1) {
				t.Errorf("task %s: event %d has seq %d (gap)", e.id, i+1, ev.Seq)
			}
			if terminalEvent(ev.Type) {
				terminal++
			}
			if ev.Type == EventStarted {
				started++
			}
		}
		if uint64(len(evs)) != tk.LastSeq || terminal != 1 || !terminalEvent(evs[len(evs)-1].Type) || evs[len(evs)-1].Type != string(tk.State) {
			t.Errorf("task %s: %d events (record says %d), %d terminal: %v", e.id, len(evs), tk.LastSeq, terminal, eventTypes(evs))
		}
		if started != tk.Attempt {
			t.Errorf("task %s: %d started events, attempt %d", e.id, started, tk.Attempt)
		}
		lp := effectLogPrefix(e.id)
		it, _ := db.NewIter(&kv.IterOptions{LowerBound: lp, UpperBound: kv.PrefixEnd(lp)})
		effects := 0
		for it.First(); it.Valid(); it.Next() {
			effects++
		}
		it.Close()
		if wantEff := map[bool]int{true: 1, false: 0}[want == Succeeded]; effects != wantEff {
			t.Errorf("task %s (%s): business effect recorded %d times, want %d", e.id, e.mode, effects, wantEff)
		}
	}
}
