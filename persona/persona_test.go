package persona

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/pgkv/pgtest"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/persona/index"
	"github.com/foliodev/folio/persona/learning"
	"github.com/foliodev/folio/persona/source"
)

// fakeSources is an in-memory content service: documents with a current
// published version each.
type fakeSources struct {
	mu    sync.Mutex
	state map[string]SourceState
	docs  map[source.VersionID]source.Document
	owner map[string]string
}

func newSources() *fakeSources {
	return &fakeSources{state: map[string]SourceState{}, docs: map[source.VersionID]source.Document{}, owner: map[string]string{}}
}

// publish makes text the published version n of doc.
func (f *fakeSources) publish(user, doc, vis string, n int, paras ...string) source.Pin {
	f.mu.Lock()
	defer f.mu.Unlock()
	pin := source.Pin{Doc: doc, Label: fmt.Sprintf("v%d.r0", n), Version: source.VersionID(sha256.Sum256([]byte(fmt.Sprint(doc, n)))),
		Fingerprint: flowdoc.Fingerprint(sha256.Sum256([]byte(fmt.Sprint(doc, n, paras)))), Time: int64(n)}
	d := source.Document{Pin: pin}
	for i, p := range paras {
		d.Blocks = append(d.Blocks, source.Block{ID: fmt.Sprintf("b%d", i), Type: flowdoc.Paragraph, Text: p})
	}
	f.docs[pin.Version] = d
	f.state[doc] = SourceState{Pin: pin, Published: true, Visibility: vis}
	f.owner[doc] = user
	return pin
}

func (f *fakeSources) Current(_ context.Context, user, doc string) (SourceState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.state[doc]
	if !ok || f.owner[doc] != user {
		return SourceState{}, errs.E(errs.NotFound, "no document %s", doc)
	}
	return st, nil
}

func (f *fakeSources) Load(_ context.Context, pin source.Pin) (source.Document, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.docs[pin.Version]
	if !ok {
		return source.Document{}, errs.E(errs.NotFound, "no version %s", pin)
	}
	return d, nil
}

// fakeObs is a learning.Reader over a slice.
type fakeObs []learning.Observation

func (f fakeObs) Observations(_ context.Context, user, persona string, fn func(learning.Observation) error) error {
	for _, o := range f {
		if o.User == user && o.Persona == persona {
			if err := fn(o); err != nil {
				return err
			}
		}
	}
	return nil
}

var allOn = Switches{Enabled: true, Style: true, Learning: true, Memory: true}

type world struct {
	db  *kv.DB
	idx *index.Index
	svc *Service
	src *fakeSources
	dir string
	fs  kv.FS // the store's in-memory filesystem, kept across reopens
}

func newWorld(t *testing.T, sw Switches) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{dir: dir, src: newSources(), fs: kv.NewMemFS()}
	w.open(t, sw)
	return w
}

func (w *world) open(t *testing.T, sw Switches) {
	t.Helper()
	// A world made by newWorld runs on the in-memory engine (a reopen
	// finds the store on the world's memory filesystem); one made around a
	// directory (the crash tests' processes) on the disk.
	o := kv.Options{Create: true}
	if w.fs != nil {
		o = pgtest.Store(t, w.dir, kv.Options{Engine: kv.EngineMemory, FS: w.fs})
	}
	db, err := kv.Open(w.dir, o)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := index.Open(context.Background(), db, filepath.Join(w.dir, "index"), IndexSource(), index.Options{Manual: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	w.db, w.idx = db, idx
	w.svc = New(db, idx, sw, Options{})
	t.Cleanup(func() { w.close() })
}

func (w *world) close() {
	if w.db == nil {
		return
	}
	w.idx.Close(context.Background())
	w.db.Close()
	w.db = nil
}

func articleA() []string {
	return []string{"我在北京工作了很多年。2015年我加入了星火公司，负责搜索。", "我住在北京市海淀区。后来我写了很多文章。"}
}

func articleB() []string {
	return []string{"2018年我搬到了上海。", "我在上海开了一家咖啡店，做了三年。"}
}

func mustGenerate(t *testing.T, w *world, user, id string) Version {
	t.Helper()
	v, err := w.svc.Generate(context.Background(), GenerateRequest{User: user, Persona: id}, w.src, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestGenerateActivatesEveryComponentAtOnce(t *testing.T) {
	w := newWorld(t, allOn)
	ctx := context.Background()
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	w.src.publish("author-a", "d2", VisibilityPublic, 1, articleB()...)
	p, err := w.svc.Create(ctx, "author-a", "随笔", []string{"d1", "d2", "d1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sources) != 2 {
		t.Fatalf("sources %v", p.Sources)
	}
	if _, err := w.svc.Context(ctx, "author-a", p.ID, "北京", "d9"); errs.CodeOf(err) != CodeNotGenerated {
		t.Fatalf("context before a version: %v", err)
	}
	obs := fakeObs{}
	for i := 0; i < 4; i++ {
		obs = append(obs, learning.Observation{Key: fmt.Sprint("o", i), Kind: learning.KindAccepted, User: "author-a", Persona: p.ID,
			Edits: []learning.Edit{{Before: "其实我们基本上非常需要进行讨论。", After: "我们需要讨论。"}}})
	}
	v, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, w.src, obs)
	if err != nil {
		t.Fatal(err)
	}
	if v.Seq != 1 || v.Style == "" || v.Learning == "" || v.Memory == "" || len(v.Sources) != 2 {
		t.Fatalf("version %+v", v)
	}
	rc, err := w.svc.Context(ctx, "author-a", p.ID, "北京 工作", "d9")
	if err != nil {
		t.Fatal(err)
	}
	if rc.Style == nil || len(rc.Style.Sources) != 2 {
		t.Fatalf("style %+v", rc.Style)
	}
	if len(rc.Learning) != 3 || rc.Learning[1].ID != "fewer_fillers" {
		t.Fatalf("active learning rules %+v", rc.Learning)
	}
	if len(rc.Memory.Items) == 0 || !strings.Contains(rc.Memory.Items[0].Statement, "北京") {
		t.Fatalf("memory %+v", rc.Memory)
	}
	for _, it := range rc.Memory.Items {
		for _, e := range it.Evidence {
			if d, _ := w.src.Load(ctx, source.Pin{Version: e.Version}); !e.Verify(d) {
				t.Errorf("item %s: evidence %+v does not verify", it.Key, e)
			}
		}
	}
	// The current article's own facts are not memory.
	rc, err = w.svc.Context(ctx, "author-a", p.ID, "北京", "d1")
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range rc.Memory.Items {
		if docs := it.Docs(); len(docs) == 1 && docs[0] == "d1" {
			t.Errorf("item %q only evidenced by the current article", it.Statement)
		}
	}
}

func TestSourceEditedDuringGenerationConflictsAndTheOldVersionStays(t *testing.T) {
	w := newWorld(t, allOn)
	ctx := context.Background()
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	p, _ := w.svc.Create(ctx, "author-a", "p", []string{"d1"})
	v1 := mustGenerate(t, w, "author-a", p.ID)
	w.svc.testHook = func(stage string) error {
		if stage == "verify" {
			w.src.publish("author-a", "d1", VisibilityPublic, 2, "我在深圳工作。")
		}
		return nil
	}
	_, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, w.src, nil)
	if !errors.Is(err, errs.Conflict) || errs.CodeOf(err) != CodeSourceChanged {
		t.Fatalf("err %v, want source_changed", err)
	}
	w.svc.testHook = nil
	cur, _ := w.svc.Get(ctx, "author-a", p.ID)
	if cur.Active != v1.Seq || cur.Versions != 1 {
		t.Fatalf("after the conflict: %+v", cur)
	}
	vs, _ := w.svc.Versions(ctx, "author-a", p.ID)
	if len(vs) != 1 {
		t.Fatalf("%d versions", len(vs))
	}
	// Generating again pins the new version.
	v2 := mustGenerate(t, w, "author-a", p.ID)
	if v2.Seq != 2 || v2.Sources[0].Pin.Label != "v2.r0" {
		t.Fatalf("v2 %+v", v2)
	}
}

func TestAFailingComponentKeepsThePreviousVersion(t *testing.T) {
	w := newWorld(t, allOn)
	ctx := context.Background()
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	p, _ := w.svc.Create(ctx, "author-a", "p", []string{"d1"})
	v1 := mustGenerate(t, w, "author-a", p.ID)
	w.src.publish("author-a", "d1", VisibilityPublic, 2, articleB()...)
	for _, stage := range []string{"style", "learning", "memory", "commit"} {
		w.svc.testHook = func(s string) error {
			if s == stage {
				return errors.New("injected failure")
			}
			return nil
		}
		if _, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, w.src, nil); err == nil {
			t.Fatalf("failure at %s: no error", stage)
		}
		cur, _ := w.svc.Get(ctx, "author-a", p.ID)
		if cur.Active != v1.Seq {
			t.Fatalf("failure at %s: active %d", stage, cur.Active)
		}
		rc, err := w.svc.Context(ctx, "author-a", p.ID, "北京", "")
		if err != nil || len(rc.Memory.Items) == 0 || rc.Version.ID != v1.ID {
			t.Fatalf("failure at %s: context %+v, %v", stage, rc.Version, err)
		}
	}
}

func TestMemoryOfOnePersonaNeverReachesAnother(t *testing.T) {
	w := newWorld(t, allOn)
	ctx := context.Background()
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	w.src.publish("author-a", "d2", VisibilityPublic, 1, articleB()...)
	w.src.publish("author-b", "d3", VisibilityPublic, 1, articleA()...)
	pa, _ := w.svc.Create(ctx, "author-a", "a", []string{"d1"})
	pb, _ := w.svc.Create(ctx, "author-a", "b", []string{"d2"})
	pc, _ := w.svc.Create(ctx, "author-b", "c", []string{"d3"})
	for _, p := range []Persona{pa, pb, pc} {
		mustGenerate(t, w, p.User, p.ID)
	}
	ra, _ := w.svc.Context(ctx, "author-a", pa.ID, "北京 星火公司", "")
	rb, _ := w.svc.Context(ctx, "author-a", pb.ID, "北京 星火公司", "")
	if len(ra.Memory.Items) == 0 {
		t.Fatal("persona a finds nothing of its own")
	}
	for _, it := range rb.Memory.Items {
		for _, e := range it.Evidence {
			if e.Doc != "d2" {
				t.Fatalf("persona b got %q from %s", it.Statement, e.Doc)
			}
		}
	}
	// Another user's persona does not exist for author-a.
	if _, err := w.svc.Context(ctx, "author-a", pc.ID, "北京", ""); !errors.Is(err, errs.NotFound) {
		t.Fatalf("author-a reading author-b's persona: %v", err)
	}
	// Same text, two users: each sees only its own snapshot.
	rcC, _ := w.svc.Context(ctx, "author-b", pc.ID, "北京 星火公司", "")
	if rcC.Memory.Snapshot == ra.Memory.Snapshot {
		t.Fatal("two personas share a memory snapshot")
	}
}

func TestPrivateSourcesNeedTheSwitches(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, allOn)
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	w.src.publish("author-a", "d2", VisibilityPrivate, 1, articleB()...)
	p, _ := w.svc.Create(ctx, "author-a", "p", []string{"d1", "d2"})
	if _, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, w.src, nil); errs.CodeOf(err) != CodePrivateSource {
		t.Fatalf("private source without the switch: %v", err)
	}
	if cur, _ := w.svc.Get(ctx, "author-a", p.ID); cur.Active != 0 {
		t.Fatal("a version was activated")
	}
	w.svc.sw.SendPrivate = true
	v := mustGenerate(t, w, "author-a", p.ID)
	if len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "private_memory") || v.Sources[1].Memory {
		t.Fatalf("without private_memory: %+v", v)
	}
	rc, _ := w.svc.Context(ctx, "author-a", p.ID, "上海 咖啡店", "")
	for _, it := range rc.Memory.Items {
		if it.Docs()[0] == "d2" {
			t.Fatalf("memory from the private source without private_memory: %q", it.Statement)
		}
	}
	w.svc.sw.PrivateMemory = true
	mustGenerate(t, w, "author-a", p.ID)
	rc, _ = w.svc.Context(ctx, "author-a", p.ID, "上海 咖啡店", "")
	if len(rc.Memory.Items) == 0 || rc.Memory.Items[0].Sensitivity == "low" {
		t.Fatalf("with private_memory: %+v", rc.Memory.Items)
	}
	w.src.mu.Lock()
	st := w.src.state["d1"]
	st.Published = false
	w.src.state["d1"] = st
	w.src.mu.Unlock()
	if _, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, w.src, nil); errs.CodeOf(err) != CodeSourceUnpublished {
		t.Fatalf("unpublished source: %v", err)
	}
}

func TestSwitches(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, Switches{Enabled: true, Style: false})
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	p, _ := w.svc.Create(ctx, "author-a", "p", []string{"d1"})
	v := mustGenerate(t, w, "author-a", p.ID)
	if v.Style == "" || v.Learning != "" || v.Memory != "" {
		t.Fatalf("style only: %+v", v)
	}
	rc, err := w.svc.Context(ctx, "author-a", p.ID, "北京", "")
	if err != nil || rc.Style != nil || rc.Learning != nil || len(rc.Memory.Items) != 0 {
		t.Fatalf("everything off but the master: %+v, %v", rc, err)
	}
	w.svc.sw.Enabled = false
	for _, err := range []error{
		func() error { _, err := w.svc.Create(ctx, "author-a", "q", []string{"d1"}); return err }(),
		func() error { _, err := w.svc.Context(ctx, "author-a", p.ID, "x", ""); return err }(),
		func() error {
			_, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, w.src, nil)
			return err
		}(),
	} {
		if errs.CodeOf(err) != CodeDisabled {
			t.Errorf("with the master switch off: %v", err)
		}
	}
}

func TestGenerateIsIdempotentAndReusesObservations(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, allOn)
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	p1, _ := w.svc.Create(ctx, "author-a", "one", []string{"d1"})
	p2, _ := w.svc.Create(ctx, "author-a", "two", []string{"d1"})
	a, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p1.ID, Key: "task-1"}, w.src, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p1.ID, Key: "task-1"}, w.src, nil)
	if err != nil || b.ID != a.ID {
		t.Fatalf("repeat: %+v %v", b, err)
	}
	mustGenerate(t, w, "author-a", p2.ID)
	mustGenerate(t, w, "author-a", p1.ID)
	keys, _ := kv.Keys(w.db, kv.TableKey(tableObs), 0)
	if len(keys) != 1 {
		t.Fatalf("%d observation sets for one source version, want 1", len(keys))
	}
	// The two personas' snapshots are separate, built from the same
	// observations.
	ra, _ := w.svc.Context(ctx, "author-a", p1.ID, "北京", "")
	rb, _ := w.svc.Context(ctx, "author-a", p2.ID, "北京", "")
	if ra.Memory.Snapshot == rb.Memory.Snapshot || len(ra.Memory.Items) == 0 || ra.Memory.Items[0].Observations[0] != rb.Memory.Items[0].Observations[0] {
		t.Fatalf("snapshots %s / %s", ra.Memory.Snapshot, rb.Memory.Snapshot)
	}
}

func TestTheDataLayerRefusesSnapshotsWithoutPersona(t *testing.T) {
	w := newWorld(t, allOn)
	b := w.db.NewBatch()
	defer b.Close()
	if _, err := putLearning(b, learning.Snapshot{User: "author-a"}); !errors.Is(err, ErrNoPersona) {
		t.Fatalf("learning: %v", err)
	}
	if _, err := putMemory(w.db, b, memorySnapshot("author-a", "")); !errors.Is(err, ErrNoPersona) {
		t.Fatalf("memory: %v", err)
	}
	if b.Count() != 0 {
		t.Fatalf("%d records staged", b.Count())
	}
}

// --- crash during generation ---

const envGenCrashDir = "FOLIO_PERSONA_CRASH_DIR"

// TestGenerateCrashChild generates version 1, then starts version 2 and
// waits to be killed just before its batch commits.
func TestGenerateCrashChild(t *testing.T) {
	dir := os.Getenv(envGenCrashDir)
	if dir == "" {
		t.Skip("child of TestCrashDuringGenerationKeepsThePreviousVersion")
	}
	w := &world{dir: dir, src: newSources()}
	w.open(t, allOn)
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	p, err := w.svc.Create(context.Background(), "author-a", "p", []string{"d1"})
	if err != nil {
		t.Fatal(err)
	}
	mustGenerate(t, w, "author-a", p.ID)
	fmt.Println("PERSONA", p.ID)
	w.src.publish("author-a", "d1", VisibilityPublic, 2, articleB()...)
	w.svc.testHook = func(stage string) error {
		if stage == "commit" {
			fmt.Println("KILLME")
			select {}
		}
		return nil
	}
	w.svc.Generate(context.Background(), GenerateRequest{User: "author-a", Persona: p.ID}, w.src, nil)
}

func TestCrashDuringGenerationKeepsThePreviousVersion(t *testing.T) {
	if os.Getenv(envGenCrashDir) != "" {
		t.Skip("running as a child")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGenerateCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envGenCrashDir+"="+dir)
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
	var id string
	killed := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "PERSONA" {
			id = f[1]
		}
		if len(f) == 1 && f[0] == "KILLME" {
			cmd.Process.Signal(syscall.SIGKILL)
			killed = true
			break
		}
	}
	cmd.Wait()
	if !killed || id == "" {
		t.Fatal("the child did not reach the kill point")
	}
	w := &world{dir: dir, src: newSources()}
	w.open(t, allOn)
	p, err := w.svc.Get(context.Background(), "author-a", id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Active != 1 || p.Versions != 1 {
		t.Fatalf("after the crash: %+v", p)
	}
	rc, err := w.svc.Context(context.Background(), "author-a", id, "北京", "")
	if err != nil || len(rc.Memory.Items) == 0 || rc.Version.Sources[0].Pin.Label != "v1.r0" {
		t.Fatalf("after the crash: %+v, %v", rc.Version, err)
	}
}

func TestListSourcesAndMemoryItems(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, SwitchesFrom(func() *config.Config { c := config.Default(); return c }()))
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	w.src.publish("author-a", "d2", VisibilityPublic, 1, articleB()...)
	a, _ := w.svc.Create(ctx, "author-a", "a", []string{"d1"})
	w.svc.Create(ctx, "author-a", "b", []string{"d2"})
	w.svc.Create(ctx, "author-b", "c", []string{"d2"})
	ps, err := w.svc.List(ctx, "author-a")
	if err != nil || len(ps) != 2 {
		t.Fatalf("list: %d personas, %v", len(ps), err)
	}
	if _, err := w.svc.Create(ctx, "author-a", " ", []string{"d1"}); !errors.Is(err, errs.Invalid) {
		t.Errorf("blank name: %v", err)
	}
	if _, err := w.svc.Create(ctx, "author-a", "x", nil); !errors.Is(err, errs.Invalid) {
		t.Errorf("no sources: %v", err)
	}
	v1 := mustGenerate(t, w, "author-a", a.ID)
	if _, err := w.svc.SetSources(ctx, "author-a", a.ID, []string{"d1", "d2"}); err != nil {
		t.Fatal(err)
	}
	// The active version keeps what it pinned until the next generation.
	_, items, err := w.svc.MemoryItems(ctx, "author-a", a.ID, 0, 0)
	if err != nil || len(items) == 0 {
		t.Fatalf("items: %d, %v", len(items), err)
	}
	for _, it := range items {
		if it.Docs()[0] != "d1" {
			t.Fatalf("version 1 has an item from %v", it.Docs())
		}
	}
	v2 := mustGenerate(t, w, "author-a", a.ID)
	head, items2, err := w.svc.MemoryItems(ctx, "author-a", a.ID, 0, 0)
	if err != nil || len(items2) <= len(items) || head.Items != len(items2) || len(head.Sources) != 2 {
		t.Fatalf("version 2: head %+v, %d items, %v", head, len(items2), err)
	}
	if _, old, _ := w.svc.MemoryItems(ctx, "author-a", a.ID, v1.Seq, 0); len(old) != len(items) {
		t.Fatalf("version 1 changed: %d items", len(old))
	}
	if v2.Seq != 2 {
		t.Fatalf("v2 %+v", v2)
	}
}

func TestConcurrentGenerationsAreSerialized(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, allOn)
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	p, _ := w.svc.Create(ctx, "author-a", "p", []string{"d1"})
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, w.src, nil)
			errc <- err
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	vs, _ := w.svc.Versions(ctx, "author-a", p.ID)
	cur, _ := w.svc.Get(ctx, "author-a", p.ID)
	if len(vs) != 4 || cur.Active != 4 || vs[3].Seq != 4 {
		t.Fatalf("%d versions, active %d", len(vs), cur.Active)
	}
}

// The privacy rule is the attributes assistant's (llm.PrivateAllowed): a
// private source needs [privacy] send_private_to_provider only when the
// provider it reaches is external; with the local one, which sends
// nothing anywhere, generation uses it without the switch.
func TestPrivateSourcesWithTheLocalProvider(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, allOn)
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	w.src.publish("author-a", "d2", VisibilityPrivate, 1, articleB()...)
	p, _ := w.svc.Create(ctx, "author-a", "p", []string{"d1", "d2"})
	w.svc.UseProvider(llm.NewLocal(""))
	if !w.svc.PrivateAllowed() {
		t.Fatal("the local provider may not receive private sources")
	}
	v := mustGenerate(t, w, "author-a", p.ID)
	if len(v.Sources) != 2 || v.Sources[1].Visibility != VisibilityPrivate {
		t.Fatalf("version %+v", v)
	}
	w.svc.UseProvider(externalProvider{})
	if _, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, w.src, nil); errs.CodeOf(err) != CodePrivateSource {
		t.Fatalf("private source to an external provider without the switch: %v", err)
	}
}

type externalProvider struct{ llm.Provider }

func (externalProvider) Name() string { return "openai" }

// Re-activating an older version moves the active pointer back, leaves
// every version as it was, records the move, and the next generation
// still gets a new number.
func TestActivateOlderVersion(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, allOn)
	w.src.publish("author-a", "d1", VisibilityPublic, 1, articleA()...)
	p, _ := w.svc.Create(ctx, "author-a", "p", []string{"d1"})
	for i := 0; i < 2; i++ {
		if _, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, w.src, nil); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := w.svc.Versions(ctx, "author-a", p.ID)
	got, err := w.svc.Activate(ctx, "author-a", p.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Active != 1 || got.Versions != 2 {
		t.Fatalf("after activate: active %d, versions %d", got.Active, got.Versions)
	}
	if v, err := w.svc.Version(ctx, "author-a", p.ID, 0); err != nil || v.Seq != 1 || v.Style != before[0].Style {
		t.Fatalf("active version %+v, %v", v, err)
	}
	after, _ := w.svc.Versions(ctx, "author-a", p.ID)
	if len(after) != 2 || after[0].ID != before[0].ID || after[1].Created != before[1].Created {
		t.Fatalf("versions changed: %+v", after)
	}
	acts, err := w.svc.Activations(ctx, "author-a", p.ID)
	if err != nil || len(acts) != 1 || acts[0].From != 2 || acts[0].To != 1 || acts[0].N != 1 {
		t.Fatalf("activations %+v, %v", acts, err)
	}
	if _, err := w.svc.Activate(ctx, "author-a", p.ID, 3); !errors.Is(err, errs.NotFound) {
		t.Fatalf("missing version: %v", err)
	}
	if _, err := w.svc.Activate(ctx, "author-a", p.ID, 0); !errors.Is(err, errs.Invalid) {
		t.Fatalf("version 0: %v", err)
	}
	if _, err := w.svc.Activate(ctx, "author-b", p.ID, 2); !errors.Is(err, errs.NotFound) {
		t.Fatalf("another user's persona: %v", err)
	}
	v3, err := w.svc.Generate(ctx, GenerateRequest{User: "author-a", Persona: p.ID}, w.src, nil)
	if err != nil || v3.Seq != 3 {
		t.Fatalf("generation after activate: %+v, %v", v3, err)
	}
	if cur, _ := w.svc.Get(ctx, "author-a", p.ID); cur.Active != 3 {
		t.Fatalf("active after generation %d", cur.Active)
	}
}
