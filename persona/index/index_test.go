package index

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
)

// tableSource keeps test snapshots in Pebble: t/itest/<snapshot>\0<key>
// -> Doc, and t/itestsnap/<snapshot> marks that the snapshot exists. It
// is a real Source over the store, as the persona store's is.
type tableSource struct{}

func snapKey(id string) []byte      { return kv.TableKey("itestsnap", id) }
func itemPrefix(id string) []byte   { return append(kv.TableKey("itest", id), 0) }
func itemKey(id, key string) []byte { return kv.TableKey("itest", id, key) }
func (tableSource) Snapshot(r kv.Reader, id string, fn func(Doc) error) (bool, error) {
	ok, err := kv.Has(r, snapKey(id))
	if err != nil || !ok {
		return false, err
	}
	p := itemPrefix(id)
	it, err := r.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return false, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		var d Doc
		if err := kv.Unmarshal(it.Value(), &d); err != nil {
			return false, err
		}
		if err := fn(d); err != nil {
			return false, err
		}
	}
	return true, it.Error()
}

func (tableSource) Snapshots(r kv.Reader, fn func(string) error) error {
	p := kv.TableKey("itestsnap")
	it, err := r.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if err := fn(string(it.Key()[len(p):])); err != nil {
			return err
		}
	}
	return it.Error()
}

// writeSnapshot stores docs as snapshot id with its outbox entry, in one
// synced batch.
func writeSnapshot(tb testing.TB, db *kv.DB, id string, docs []Doc) {
	tb.Helper()
	b := db.NewBatch()
	defer b.Close()
	b.Set(snapKey(id), nil)
	for _, d := range docs {
		d.Snapshot = id
		v, err := kv.Marshal(d)
		if err != nil {
			tb.Fatal(err)
		}
		b.Set(itemKey(id, d.Key), v)
	}
	if err := Enqueue(db, b, id); err != nil {
		tb.Fatal(err)
	}
	if err := db.Apply(b, kv.Sync); err != nil {
		tb.Fatal(err)
	}
}

func dropSnapshotRecords(tb testing.TB, db *kv.DB, id string) {
	b := db.NewBatch()
	defer b.Close()
	b.Delete(snapKey(id))
	b.DeleteRange(itemPrefix(id), kv.PrefixEnd(itemPrefix(id)))
	if err := Enqueue(db, b, id); err != nil {
		tb.Fatal(err)
	}
	if err := db.Apply(b, kv.Sync); err != nil {
		tb.Fatal(err)
	}
}

func openAll(tb testing.TB, dir string) (*kv.DB, *Index) {
	tb.Helper()
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		tb.Fatal(err)
	}
	x, err := Open(context.Background(), db, filepath.Join(dir, "index"), tableSource{}, Options{Manual: true, Logger: quiet})
	if err != nil {
		db.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { x.Close(context.Background()); db.Close() })
	return db, x
}

func doc(key, user, persona, status, text string, conf float64, ev int, sole string) Doc {
	return Doc{Key: key, User: user, Persona: persona, Status: status, Text: text, Confidence: conf, Evidence: ev,
		SoleDoc: sole, Chars: len([]rune(text))}
}

func keys(r Result) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Key)
	}
	return out
}

func find(tb testing.TB, x *Index, q Query) Result {
	tb.Helper()
	r, err := x.Search(context.Background(), q)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func TestSingleCharacterChineseQueriesMatch(t *testing.T) {
	db, x := openAll(t, t.TempDir())
	writeSnapshot(t, db, "s1", []Doc{
		doc("m1", "author-a", "p1", "supported", "我在北京大学读了四年书。", 0.7, 1, "d1"),
		doc("m2", "author-a", "p1", "supported", "In 2019 I joined Acme Corp in Toronto.", 0.7, 1, "d1"),
		doc("m3", "author-a", "p1", "supported", "我住在成都。", 0.7, 1, "d2"),
	})
	if err := x.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := Query{User: "author-a", Persona: "p1", Snapshot: "s1"}
	for text, want := range map[string][]string{
		"京": {"m1"}, "大": {"m1"}, "北京": {"m1"}, "北京大学": {"m1"}, "成": {"m3"}, "toronto": {"m2"}, "ACME": {"m2"}, "上海": nil,
	} {
		q.Text = text
		if got := keys(find(t, x, q)); !reflect.DeepEqual(got, want) {
			t.Errorf("query %q: %v, want %v", text, got, want)
		}
	}
}

func TestFilterIsAConjunction(t *testing.T) {
	db, x := openAll(t, t.TempDir())
	writeSnapshot(t, db, "sa", []Doc{
		doc("a1", "author-a", "pa", "supported", "我在上海工作。", 0.7, 1, "d1"),
		doc("a2", "author-a", "pa", "conflicted", "我在上海出生。", 0.35, 1, "d1"),
		doc("a3", "author-a", "pa", "restricted", "我在上海住院。", 0.7, 1, "d1"),
	})
	writeSnapshot(t, db, "sb", []Doc{doc("b1", "author-a", "pb", "supported", "我在上海工作。", 0.7, 1, "d1")})
	writeSnapshot(t, db, "sc", []Doc{doc("c1", "author-b", "pa", "supported", "我在上海工作。", 0.7, 1, "d1")})
	writeSnapshot(t, db, "sa2", []Doc{doc("a9", "author-a", "pa", "supported", "我在上海工作。", 0.7, 1, "d1")})
	x.Drain(context.Background())
	q := Query{User: "author-a", Persona: "pa", Snapshot: "sa", Text: "上海"}
	if got := keys(find(t, x, q)); !reflect.DeepEqual(got, []string{"a1"}) {
		t.Errorf("persona a, snapshot sa, supported: %v", got)
	}
	q.Statuses = []string{"supported", "conflicted"}
	if got := keys(find(t, x, q)); !reflect.DeepEqual(got, []string{"a1", "a2"}) {
		t.Errorf("supported and conflicted: %v", got)
	}
	q = Query{User: "author-a", Persona: "pb", Snapshot: "sa", Text: "上海"}
	if got := keys(find(t, x, q)); len(got) != 0 {
		t.Errorf("persona b asking for persona a's snapshot got %v", got)
	}
	q = Query{User: "author-b", Persona: "pa", Snapshot: "sa", Text: "上海"}
	if got := keys(find(t, x, q)); len(got) != 0 {
		t.Errorf("another user got %v", got)
	}
	if _, err := x.Search(context.Background(), Query{User: "author-a", Persona: "pa", Text: "上海"}); err == nil {
		t.Error("a query without snapshot was accepted")
	}
}

func TestRankingExclusionAndBudgets(t *testing.T) {
	db, x := openAll(t, t.TempDir())
	writeSnapshot(t, db, "s", []Doc{
		doc("low", "u", "p", "supported", "我在杭州工作。", 0.3, 1, "d1"),
		doc("high", "u", "p", "supported", "我在杭州工作过。", 0.9, 3, ""),
		doc("self", "u", "p", "supported", "我在杭州读书。", 0.99, 1, "current"),
		doc("long", "u", "p", "supported", "我在杭州"+strings.Repeat("很久很久", 50)+"。", 0.9, 2, ""),
	})
	x.Drain(context.Background())
	q := Query{User: "u", Persona: "p", Snapshot: "s", Text: "杭州", ExcludeDoc: "current", MaxChars: 100}
	r := find(t, x, q)
	if got := keys(r); !reflect.DeepEqual(got, []string{"high", "low"}) {
		t.Errorf("ranked %v, want [high low] (self excluded, long over the character budget)", got)
	}
	if r.OverBudget != 1 {
		t.Errorf("over budget %d", r.OverBudget)
	}
	q.MaxItems, q.MaxChars = 1, 0
	if got := keys(find(t, x, q)); len(got) != 1 {
		t.Errorf("item budget 1: %v", got)
	}
	q.ExcludeDoc = ""
	q.MaxItems = 10
	if got := keys(find(t, x, q)); !contains(got, "self") {
		t.Errorf("without exclusion: %v", got)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestDroppedSnapshotLeavesTheIndexAndOutboxEmpties(t *testing.T) {
	db, x := openAll(t, t.TempDir())
	writeSnapshot(t, db, "s", []Doc{doc("m", "u", "p", "supported", "我在杭州工作。", 0.7, 1, "")})
	x.Drain(context.Background())
	dropSnapshotRecords(t, db, "s")
	if st, _ := x.Status(context.Background()); st.Pending != 1 || st.Docs != 1 {
		t.Fatalf("before drain: %+v", st)
	}
	x.Drain(context.Background())
	st, _ := x.Status(context.Background())
	if st.Pending != 0 || st.Docs != 0 {
		t.Fatalf("after drain: %+v", st)
	}
}

// corpus writes n items over a few snapshots.
func corpus(tb testing.TB, db *kv.DB, snapshots, perSnapshot int) {
	places := []string{"北京", "上海", "杭州", "成都", "深圳", "Toronto", "Lisbon"}
	verbs := []string{"工作", "读书", "住过", "出差", "开会"}
	for s := 0; s < snapshots; s++ {
		var docs []Doc
		for i := 0; i < perSnapshot; i++ {
			text := fmt.Sprintf("%d年我在%s%s，第%d次。", 2000+i%20, places[(i+s)%len(places)], verbs[i%len(verbs)], i)
			docs = append(docs, doc(fmt.Sprintf("m%05d", i), "u", fmt.Sprintf("p%d", s%2), "supported", text,
				float64(50+i%50)/100, 1+i%4, ""))
		}
		writeSnapshot(tb, db, fmt.Sprintf("s%d", s), docs)
	}
}

func TestRebuildAfterDeletingTheDirectoryGivesIdenticalResults(t *testing.T) {
	dir := t.TempDir()
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "index")
	x, err := Open(context.Background(), db, root, tableSource{}, Options{Manual: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	corpus(t, db, 4, 300)
	x.Drain(context.Background())
	queries := []Query{
		{User: "u", Persona: "p0", Snapshot: "s0", Text: "北京工作"},
		{User: "u", Persona: "p1", Snapshot: "s1", Text: "杭"},
		{User: "u", Persona: "p0", Snapshot: "s2", Text: "2005年 成都", MaxItems: 20, MaxChars: 5000},
		{User: "u", Persona: "p1", Snapshot: "s3", Text: "toronto 出差", MaxItems: 50, MaxChars: 100000},
	}
	var before []Result
	for _, q := range queries {
		before = append(before, find(t, x, q))
	}
	st1, _ := x.Status(context.Background())
	x.Close(context.Background())
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	x, err = Open(context.Background(), db, root, tableSource{}, Options{Manual: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { x.Close(context.Background()); db.Close() }()
	st2, _ := x.Status(context.Background())
	if st2.Docs != st1.Docs || st2.Docs != 1200 || st2.LastReason != "missing" {
		t.Fatalf("rebuilt index: %+v (before %+v)", st2, st1)
	}
	for i, q := range queries {
		after := find(t, x, q)
		if len(before[i].Hits) == 0 || !reflect.DeepEqual(before[i], after) {
			t.Errorf("query %+v:\n before %+v\n after  %+v", q, before[i], after)
		}
	}
}

func TestCorruptOrOldIndexIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	db, x := func() (*kv.DB, *Index) {
		db, err := kv.Open(dir, kv.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		x, err := Open(context.Background(), db, filepath.Join(dir, "index"), tableSource{}, Options{Manual: true, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		return db, x
	}()
	corpus(t, db, 1, 20)
	x.Drain(context.Background())
	// An older mapping version.
	x.mu.RLock()
	x.idx.SetInternal([]byte(internalKey), []byte("0"))
	x.mu.RUnlock()
	x.Close(context.Background())
	x, err := Open(context.Background(), db, filepath.Join(dir, "index"), tableSource{}, Options{Manual: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := x.Status(context.Background())
	if st.Generation != 2 || st.Docs != 20 || !strings.Contains(st.LastReason, "mapping version") {
		t.Fatalf("after an old mapping: %+v", st)
	}
	x.Close(context.Background())
	// Corrupt files of the current generation.
	gen := filepath.Join(dir, "index", genName(2))
	filepath.Walk(gen, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			os.WriteFile(p, []byte("garbage"), 0o644)
		}
		return nil
	})
	x, err = Open(context.Background(), db, filepath.Join(dir, "index"), tableSource{}, Options{Manual: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	st, _ = x.Status(context.Background())
	if st.Generation != 3 || st.Docs != 20 || !strings.Contains(st.LastReason, "corrupt") {
		t.Fatalf("after corruption: %+v", st)
	}
	if _, err := os.Stat(gen); !os.IsNotExist(err) {
		t.Errorf("old generation %s still there", gen)
	}
	x.Close(context.Background())
	db.Close()
}

// --- crash: a real child process killed with SIGKILL ---

const (
	envCrashDir   = "FOLIO_INDEX_CRASH_DIR"
	envCrashPoint = "FOLIO_INDEX_CRASH_POINT"
)

// TestCrashChild is the child of TestCrashConverges; it does nothing
// unless started by it. It writes a snapshot with its outbox entry in one
// synced batch and then waits to be killed: before the index saw the
// entry ("committed") or after the index committed it but before the
// entry was deleted ("applied").
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(envCrashDir)
	if dir == "" {
		t.Skip("child of TestCrashConverges")
	}
	point := os.Getenv(envCrashPoint)
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	x, err := Open(context.Background(), db, filepath.Join(dir, "index"), tableSource{}, Options{Manual: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	corpus(t, db, 3, 50)
	switch point {
	case "committed":
		fmt.Println("KILLME")
	case "applied":
		testAfterApply = func(string) { fmt.Println("KILLME"); select {} }
		x.Drain(context.Background())
	}
	select {}
}

func TestCrashConverges(t *testing.T) {
	if os.Getenv(envCrashDir) != "" {
		t.Skip("running as a child")
	}
	for _, point := range []string{"committed", "applied"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashPoint+"="+point)
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
			sc := bufio.NewScanner(out)
			killed := false
			for sc.Scan() {
				if strings.TrimSpace(sc.Text()) == "KILLME" {
					cmd.Process.Signal(syscall.SIGKILL)
					killed = true
					break
				}
			}
			cmd.Wait()
			if !killed {
				t.Fatal("the child never reached the kill point")
			}
			db, x := openAll(t, dir) // Open replays the outbox
			st, err := x.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Pending != 0 || st.Docs != 150 {
				t.Fatalf("after restart: %+v, want 150 documents and nothing pending", st)
			}
			r := find(t, x, Query{User: "u", Persona: "p1", Snapshot: "s1", Text: "上海", MaxItems: 100, MaxChars: 100000})
			if len(r.Hits) == 0 || r.Matched == 0 {
				t.Fatalf("nothing found after restart: %+v", r)
			}
			_ = db
		})
	}
}

var quiet = slog.New(slog.DiscardHandler)

func TestBackgroundApplier(t *testing.T) {
	dir := t.TempDir()
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	x, err := Open(context.Background(), db, filepath.Join(dir, "index"), tableSource{}, Options{Logger: quiet, Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close(context.Background())
	writeSnapshot(t, db, "s", []Doc{doc("m", "u", "p", "supported", "我在杭州工作。", 0.7, 1, "")})
	x.Notify()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := x.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Pending == 0 && st.Docs == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the applier never applied the entry: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := keys(find(t, x, Query{User: "u", Persona: "p", Snapshot: "s", Text: "杭"})); !reflect.DeepEqual(got, []string{"m"}) {
		t.Fatalf("found %v", got)
	}
}
