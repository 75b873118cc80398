package repo

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/objstore"
)

// Two writers commit against the same baseline at once: exactly one wins
// each round, the other gets a conflict, and every win is in the history.
func TestConcurrentCommitsOneWinsEachRound(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 5)
	type win struct {
		label, text string
	}
	var wins []win
	for round := 0; round < 100; round++ {
		d, err := r.Draft(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		base := d.HeadID
		target := d.Body.Blocks[2]
		targetHash := objstore.ID(flowdoc.ContentHash(target))
		var wg sync.WaitGroup
		results := make([]error, 2)
		infos := make([]VersionInfo, 2)
		start := make(chan struct{})
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				blk := para(target.ID, fmt.Sprintf("round %d writer %d", round, w))
				<-start
				infos[w], results[w] = r.CommitChange(ctx, ChangeParams{
					Doc: doc, Actor: fmt.Sprintf("w%d", w), Kind: objstore.KindAcceptSuggestion,
					BaseVersion: base, BaseFingerprint: d.Fingerprint,
					TargetBlocks: map[string]objstore.ID{target.ID: targetHash},
					Ops:          []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: target.ID, Block: &blk}},
				})
			}(w)
		}
		close(start)
		wg.Wait()
		ok := 0
		for w, err := range results {
			switch {
			case err == nil:
				ok++
				wins = append(wins, win{infos[w].Label, fmt.Sprintf("round %d writer %d", round, w)})
			case errors.Is(err, ErrConflict):
			default:
				t.Fatalf("round %d writer %d: %v", round, w, err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d writers won, want exactly 1 (%v)", round, ok, results)
		}
	}
	for _, w := range wins {
		s, err := r.Show(ctx, doc, w.label)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Body.Blocks[2].RichText[0].Text; got != w.text {
			t.Fatalf("%s: block = %q, want the acknowledged %q", w.label, got, w.text)
		}
	}
	log, _ := r.Log(ctx, doc, 0, 0)
	if len(log) != 101 {
		t.Fatalf("log has %d versions, want 101", len(log))
	}
}

// The same idempotency key twice gives the first result, not a second version.
func TestIdempotencyKey(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 3)
	d, _ := r.Draft(ctx, doc)
	blk := para("b1", "accepted once")
	p := ChangeParams{Doc: doc, Actor: "ana", BaseVersion: d.HeadID, BaseFingerprint: d.Fingerprint,
		TargetBlocks:   map[string]objstore.ID{"b1": objstore.ID(flowdoc.ContentHash(d.Body.Blocks[1]))},
		Ops:            []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: "b1", Block: &blk}},
		IdempotencyKey: "suggestion-7-accept", SuggestionID: "s7"}
	v1, err := r.CommitChange(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := r.CommitChange(ctx, p) // stale baseline now, but the key was seen
	if err != nil || v2.Hash != v1.Hash {
		t.Fatalf("repeat = %+v %v, want the first result %s", v2, err, v1.Label)
	}
	if log, _ := r.Log(ctx, doc, 0, 0); len(log) != 2 {
		t.Fatalf("log has %d versions, want 2", len(log))
	}
	// A stale fingerprint is a conflict and writes nothing.
	d2, _ := r.Draft(ctx, doc)
	save(t, r, doc, d2.Seq, para("b0", "unsealed"))
	p.IdempotencyKey = "other"
	p.BaseVersion = d2.HeadID
	if _, err := r.CommitChange(ctx, p); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale fingerprint: %v, want conflict", err)
	}
}

const crashEnv = "FOLIO_REPO_CRASH_CHILD"

// TestCrashChild is the child of TestCrashDuringCheckpoints: it makes
// checkpoints forever and prints each one after it returned.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("child process of TestCrashDuringCheckpoints")
	}
	r, err := Open(dir, Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	if _, err := r.GetDoc(ctx, "crash"); errors.Is(err, ErrNotFound) {
		if _, err := r.CreateDoc(ctx, CreateParams{ID: "crash", Owner: "ana", Attrs: flowdoc.Attributes{Title: "crash"}, Body: docOf(50)}); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
	}
	rnd := rand.New(rand.NewSource(time.Now().UnixNano()))
	for i := 0; ; i++ {
		dr, _, err := r.OpenDraft(ctx, "crash", "ana")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		for k := 0; k < 1+rnd.Intn(3); k++ {
			blk := para(fmt.Sprintf("b%d", rnd.Intn(50)), fmt.Sprintf("edit %d.%d %d", i, k, rnd.Int63()))
			if _, err := r.SaveDraft(ctx, SaveParams{Doc: "crash", Actor: "ana", BaseSeq: dr.Seq, Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}}); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
			dr, _ = r.Draft(ctx, "crash")
		}
		v, ok, err := r.Seal(ctx, "crash", objstore.ReasonIdle, "ana")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		if ok {
			fmt.Printf("done %s %s\n", v.Label, v.Hash)
		}
	}
}

// A child process making checkpoints is killed with SIGKILL at random
// moments; after each kill the store reopens, fsck is clean, head is a
// complete version and every checkpoint the child reported is there.
func TestCrashDuringCheckpoints(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip()
	}
	dir := t.TempDir()
	if err := Init(dir); err != nil {
		t.Fatal(err)
	}
	kills := 20
	rnd := rand.New(rand.NewSource(1))
	reported := map[string]string{}
	for k := 0; k < kills; k++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Wait for the first checkpoint, then kill at a random moment.
		deadline := time.After(30 * time.Second)
		got := 0
		kill := time.Duration(5+rnd.Intn(60)) * time.Millisecond
		var timer <-chan time.Time
	loop:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break loop
				}
				if strings.HasPrefix(l, "error") {
					t.Fatalf("child: %s", l)
				}
				if f := strings.Fields(l); len(f) == 3 && f[0] == "done" {
					reported[f[1]] = f[2]
					got++
					if got == 1 {
						timer = time.After(kill)
					}
				}
			case <-timer:
				cmd.Process.Signal(syscall.SIGKILL)
				timer = nil
			case <-deadline:
				cmd.Process.Kill()
				t.Fatal("child made no checkpoint in 30s")
			}
		}
		cmd.Wait()
		r, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("kill %d: reopen: %v", k, err)
		}
		rep, err := r.Fsck(ctx, FsckOptions{})
		if err != nil || !rep.OK {
			t.Fatalf("kill %d: fsck = %+v %v", k, rep.Problems, err)
		}
		if _, err := r.Show(ctx, "crash", ""); err != nil {
			t.Fatalf("kill %d: head does not materialize: %v", k, err)
		}
		for label, hash := range reported {
			v, err := r.ResolveLabel(ctx, "crash", label)
			if err != nil || v.Hash.String() != hash {
				t.Fatalf("kill %d: reported checkpoint %s %s lost: %+v %v", k, label, hash, v, err)
			}
		}
		r.Close()
	}
	if len(reported) < kills {
		t.Fatalf("only %d checkpoints reported over %d kills", len(reported), kills)
	}
}
