package assistant

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

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/stream"
)

// The crash test re-executes the test binary as a child that makes
// assistant requests against a shared store and is SIGKILLed at chosen
// points of a run: when the handler starts, in the middle of the model's
// stream, after the model answered but before the success commit, right
// after it, and at random moments. Each round a new child restarts on the
// same store (the runner recovers what was running first); at the end the
// parent drains every run in-process and checks that each acknowledged
// request has exactly one run, and each succeeded run exactly one
// suggestion, one assistant message and one booked usage event.

const (
	envAssistCrashDir   = "FOLIO_ASSIST_CRASH_DIR"
	envAssistCrashRound = "FOLIO_ASSIST_CRASH_ROUND"
	envAssistCrashKill  = "FOLIO_ASSIST_CRASH_KILL" // point:occurrence
)

var assistKillPoints = []string{"handler-start", "mid-stream", "model-answered", "success-committed", "timer"}

// crashModel is the fake model of the crash test: it streams slowly and
// passes a point after its first piece.
type crashModel struct {
	*fakeModel
	point func(string)
}

func (m *crashModel) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	s, err := m.fakeModel.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &crashStream{fakeStream: s.(*fakeStream), point: m.point}, nil
}

type crashStream struct {
	*fakeStream
	point func(string)
	n     int
}

func (s *crashStream) Next() (string, error) {
	time.Sleep(200 * time.Microsecond)
	p, err := s.fakeStream.Next()
	if s.n++; s.n == 2 {
		s.point("mid-stream")
	}
	return p, err
}

func crashDoc(round int) string { return fmt.Sprintf("d%d", round) }

// TestAssistCrashChild is the child process of TestAssistCrash; it does
// nothing unless started by it.
func TestAssistCrashChild(t *testing.T) {
	dir := os.Getenv(envAssistCrashDir)
	if dir == "" {
		t.Skip("child of TestAssistCrash")
	}
	round, _ := strconv.Atoi(os.Getenv(envAssistCrashRound))
	spec := os.Getenv(envAssistCrashKill)
	i := strings.LastIndexByte(spec, ':')
	killAt := spec[:max(i, 0)]
	want, _ := strconv.Atoi(spec[i+1:])
	var mu sync.Mutex
	seen := map[string]int{}
	point := func(p string) {
		mu.Lock()
		seen[p]++
		hit := p == killAt && seen[p] == want
		mu.Unlock()
		if hit {
			fmt.Println("KILLME", p)
			select {} // wait for SIGKILL
		}
	}
	w := newWorld(t, func(o *worldOptions) {
		o.dir, o.noStart = dir, true
		o.provider = &crashModel{fakeModel: &fakeModel{}, point: point}
		o.taskOpts.MaxAttempts = 20 // kills charge attempts; the runs must still finish
	})
	w.svc.point = point
	w.start()
	fmt.Println("READY")
	d := flowdoc.Document{SchemaVersion: 1}
	for k := 1; k <= 3; k++ {
		d.Blocks = append(d.Blocks, para(fmt.Sprintf("p%d", k), fmt.Sprintf("Round %d block %d 文字.", round, k)))
	}
	if _, err := w.repo.CreateDoc(ctx, repo.CreateParams{ID: crashDoc(round), Owner: authorA.UserID, Attrs: flowdoc.Attributes{Title: "t"}, Body: d}); err != nil {
		t.Fatal(err)
	}
	var runs []string
	request := func(doc, key string, block int) {
		q, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: fmt.Sprintf("p%d", block)},
			Instruction: "tighten", IdempotencyKey: key})
		if err != nil {
			t.Error(err)
			return
		}
		fmt.Println("REQ", key, q.Run.ID)
		runs = append(runs, q.Run.ID)
	}
	for j := 1; j <= 3; j++ {
		request(crashDoc(round), fmt.Sprintf("r%d-%d", round, j), j)
	}
	if round > 0 {
		request(crashDoc(round-1), fmt.Sprintf("r%d-1", round-1), 1) // idempotent across restarts
	}
	for _, id := range runs {
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		r, err := w.svc.WaitRun(c, id)
		cancel()
		if err != nil {
			t.Fatalf("run %s still %s after 20s: %v", id, r.State, err)
		}
	}
	fmt.Println("IDLE")
}

func TestAssistCrash(t *testing.T) {
	if os.Getenv(envAssistCrashDir) != "" {
		t.Skip("running as a child")
	}
	rounds := 15
	if testing.Short() {
		rounds = 5
	}
	dir := t.TempDir()
	if err := repo.Init(dir); err != nil {
		t.Fatal(err)
	}
	reqs := map[string]string{} // idempotency key -> run
	kills := 0
	for round := range rounds {
		pt := assistKillPoints[round%len(assistKillPoints)]
		kill := fmt.Sprintf("%s:%d", pt, 1+round%2)
		cmd := exec.Command(os.Args[0], "-test.run=^TestAssistCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envAssistCrashDir+"="+dir, envAssistCrashRound+"="+strconv.Itoa(round), envAssistCrashKill+"="+kill)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		doKill := func() { once.Do(func() { cmd.Process.Signal(syscall.SIGKILL) }) }
		var hung atomic.Bool
		watchdog := time.AfterFunc(60*time.Second, func() { hung.Store(true); doKill() })
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 0 {
				continue
			}
			switch f[0] {
			case "READY":
				if pt == "timer" {
					time.AfterFunc(time.Duration(1+rand.IntN(15))*time.Millisecond, doKill)
				}
			case "KILLME":
				doKill()
			case "REQ":
				if prev, ok := reqs[f[1]]; ok && prev != f[2] {
					t.Errorf("key %s gave runs %s and %s", f[1], prev, f[2])
				}
				reqs[f[1]] = f[2]
			case "IDLE", "PASS":
			default:
				t.Logf("round %d child: %s", round, sc.Text())
			}
		}
		err = cmd.Wait()
		watchdog.Stop()
		if hung.Load() {
			t.Fatalf("round %d: child made no progress for 60s (kill %s)", round, kill)
		}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled():
			kills++
		case err != nil:
			t.Fatalf("round %d child failed: %v", round, err)
		}
	}
	if kills < rounds/2 {
		t.Fatalf("only %d of %d rounds ended in SIGKILL", kills, rounds)
	}

	// Restart in-process and finish whatever the last kill left.
	w := newWorld(t, func(o *worldOptions) { o.dir = dir; o.taskOpts.MaxAttempts = 20 })
	// Every run in the store: the acknowledged ones, and those whose
	// request committed but whose answer the kill cut off.
	runs := map[string]bool{}
	keys, err := kv.Keys(w.db, kv.TableKey(tableRun, ""), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		runs[string(k[len(kv.TableKey(tableRun, "")):])] = true
	}
	for key, id := range reqs {
		if !runs[id] {
			t.Errorf("the acknowledged request %s lost its run %s", key, id)
		}
	}
	recovered := 0
	for id := range runs {
		run := w.wait(id)
		if run.State != RunSucceeded {
			t.Errorf("run %s ended %s (%+v)", id, run.State, run.Error)
			continue
		}
		recovered += run.Recoveries
		verifyRunOnce(t, w, run)
	}
	// Every booked writing event belongs to exactly one run's success.
	booked := 0
	p := kv.TableKey("usageid", "")
	it, _ := w.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	for it.First(); it.Valid(); it.Next() {
		booked++
	}
	it.Close()
	if booked != len(runs) {
		t.Errorf("%d usage events booked for %d succeeded runs (a kill must never book twice or leave one unbooked)", booked, len(runs))
	}
	if len(runs) < len(reqs) {
		t.Errorf("%d runs for %d acknowledged requests", len(runs), len(reqs))
	}
	rep, _ := w.ledger.Report(1)
	if rep.Totals[quota.Writing].Events != int64(len(runs)) {
		t.Errorf("the report counts %d writing events", rep.Totals[quota.Writing].Events)
	}
	t.Logf("%d rounds, %d SIGKILLs, %d runs (%d acknowledged), %d recoveries after restart", rounds, kills, len(runs), len(reqs), recovered)
	if !testing.Short() && recovered == 0 {
		t.Fatal("no run was ever recovered after a restart; the test did not hit a run mid-flight")
	}
}

// verifyRunOnce checks that a succeeded run has exactly one of each
// record of its success and a consistent event stream.
func verifyRunOnce(t *testing.T, w *world, run Run) {
	t.Helper()
	var suggs, userMsgs, asstMsgs int
	p := kv.TableKey(tableSuggestion, "")
	it, _ := w.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	for it.First(); it.Valid(); it.Next() {
		var sg Suggestion
		kv.Unmarshal(it.Value(), &sg)
		if sg.Run == run.ID {
			suggs++
			if sg.ID != run.Suggestion {
				t.Errorf("run %s has stray suggestion %s", run.ID, sg.ID)
			}
		}
	}
	it.Close()
	p = messagePrefix(run.Session)
	it, _ = w.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	for it.First(); it.Valid(); it.Next() {
		var m Message
		kv.Unmarshal(it.Value(), &m)
		if m.Run != run.ID {
			continue
		}
		if m.Role == RoleUser {
			userMsgs++
		} else {
			asstMsgs++
		}
	}
	it.Close()
	if suggs != 1 || userMsgs != 1 || asstMsgs != 1 || run.Suggestion == "" || run.AssistantMessage == 0 {
		t.Errorf("run %s: %d suggestions, %d user and %d assistant messages", run.ID, suggs, userMsgs, asstMsgs)
	}
	for _, id := range run.UsageEvents {
		if _, ok, err := w.ledger.Event(id); !ok || err != nil {
			t.Errorf("run %s: usage event %s not booked (%v)", run.ID, id, err)
		}
	}
	if len(run.UsageEvents) != 1 {
		t.Errorf("run %s: %d usage events", run.ID, len(run.UsageEvents))
	}
	evs, err := stream.Read(w.db, streamRun(run.ID), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	succeeded, recoveries, started := 0, 0, 0
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Errorf("run %s: event %d has seq %d", run.ID, i+1, e.Seq)
		}
		switch e.Type {
		case EventSucceeded:
			succeeded++
			if i != len(evs)-1 {
				t.Errorf("run %s: events after succeeded: %v", run.ID, types(evs[i:]))
			}
		case EventRecovered:
			recoveries++
		case EventStarted:
			started++
		}
	}
	if succeeded != 1 || recoveries != run.Recoveries || started != run.Attempts || evs[0].Type != EventQueued {
		t.Errorf("run %s: events %v (recoveries %d, attempts %d)", run.ID, types(evs), run.Recoveries, run.Attempts)
	}
}
