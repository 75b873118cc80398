package attrs

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
)

var ctx = context.Background()

// recorder is an external provider that records every request it gets
// and answers a fixed attributes object.
type recorder struct {
	mu   sync.Mutex
	reqs []llm.Request
}

func (r *recorder) Name() string  { return "openai" }
func (r *recorder) Model() string { return "recorded-1" }
func (r *recorder) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	ans := `{"summary":"A summary.","slug":"Hello World!","category":"ENGINEERING","tags":["go","go","storage"]}`
	return llm.NewPieceStream(ctx, "openai", []string{ans}, "stop", llm.Usage{Input: 100, Output: 20, Total: 120}), nil
}

func (r *recorder) requests() []llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]llm.Request(nil), r.reqs...)
}

func openDB(t testing.TB) *kv.DB {
	t.Helper()
	db, err := kv.Open(t.TempDir(), kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func service(t testing.TB, db *kv.DB, p llm.Provider, sendPrivate bool) *Service {
	t.Helper()
	s, err := New(Options{
		Route:  assistant.Route{Provider: p, Policy: quota.NewPolicy(db, quota.Attributes, quota.Limits{}, nil), Source: "dedicated"},
		Ledger: quota.NewLedger(db, quota.LedgerOptions{}), Enabled: true, SendPrivate: sendPrivate,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func article() Input {
	return Input{
		Title: "Storage engines",
		Body: flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
			{ID: "h", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 1}, RichText: []flowdoc.Run{{Text: "Why LSM trees"}}},
			{ID: "p", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "Pebble is an LSM storage engine. ", Marks: []flowdoc.Mark{flowdoc.Bold}}, {Text: "Writes land in a log, good."}}},
			{ID: "c", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: "go", Text: "db.Set(k, v)"}},
		}},
		Categories: []string{"Engineering", "Travel"},
		Tags:       []string{"go", "storage", "cooking"},
	}
}

// keys lists every key of the store.
func keys(t testing.TB, db *kv.DB) []string {
	t.Helper()
	it, err := db.NewIter(&kv.IterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for it.First(); it.Valid(); it.Next() {
		out = append(out, string(it.Key()))
	}
	return out
}

func TestProviderReceivesExactlyTitleBodyAndNames(t *testing.T) {
	db := openDB(t)
	rec := &recorder{}
	s := service(t, db, rec, false)
	in := article()
	sug, err := s.Suggest(ctx, "author-a", in)
	if err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d provider calls, want 1", len(reqs))
	}
	got := reqs[0]
	if !reflect.DeepEqual(got.Messages, Prompt(in)) || got.Task != nil {
		t.Fatalf("the provider received %+v", got)
	}
	if len(got.Messages) != 2 || got.Messages[0].Content != systemPrompt {
		t.Fatal("want the fixed system prompt and one user message")
	}
	var user map[string]json.RawMessage
	if err := json.Unmarshal([]byte(got.Messages[1].Content), &user); err != nil {
		t.Fatal(err)
	}
	var fields []string
	for k := range user {
		fields = append(fields, k)
	}
	sort.Strings(fields)
	if strings.Join(fields, ",") != "categories,document,tags,title" {
		t.Fatalf("the user message carries %v, want exactly title, document, categories and tags", fields)
	}
	want := `[{"type":"heading","level":1,"text":"Why LSM trees"},{"type":"paragraph","text":"Pebble is an LSM storage engine. Writes land in a log, good."}]`
	if string(user["document"]) != want {
		t.Fatalf("document sent = %s\nwant %s", user["document"], want)
	}
	// The answer is cleaned: slug made valid, the category matched to an
	// existing one, tags deduplicated.
	if sug.Slug != "hello-world" || sug.Category != "Engineering" || strings.Join(sug.Tags, ",") != "go,storage" || sug.Summary != "A summary." {
		t.Fatalf("suggestion = %+v", sug)
	}
	// It wrote only the attributes counters and one usage event: no run,
	// task, suggestion, session or anything of the writing assistant.
	for _, k := range keys(t, db) {
		ok := strings.HasPrefix(k, "t/quota/attributes\x00") || strings.HasPrefix(k, "t/usage/") || strings.HasPrefix(k, "t/usageid/") ||
			!strings.HasPrefix(k, "t/") && !strings.HasPrefix(k, "e/") && !strings.HasPrefix(k, "o/") && !strings.HasPrefix(k, "r/")
		if !ok {
			t.Errorf("Suggest wrote %q", k)
		}
	}
	st, _ := quota.NewPolicy(db, quota.Writing, quota.Limits{}, nil).Status()
	if st.Requests != 0 || st.Tokens != 0 {
		t.Fatalf("writing counters moved: %+v", st)
	}
	st, _ = quota.NewPolicy(db, quota.Attributes, quota.Limits{}, nil).Status()
	if st.Requests != 1 || st.Tokens != 120 {
		t.Fatalf("attributes counters = %+v, want 1 request, 120 tokens", st)
	}
}

func TestPrivateContentNeverReachesAnExternalProviderWithoutTheSwitch(t *testing.T) {
	db := openDB(t)
	rec := &recorder{}
	in := article()
	in.Private = true
	_, err := service(t, db, rec, false).Suggest(ctx, "author-a", in)
	if errs.CodeOf(err) != CodePrivateBlocked || errs.KindOf(err) != errs.Forbidden {
		t.Fatalf("private article, switch off: %v, want private_content_blocked", err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Fatalf("the external provider received %d requests", n)
	}
	if st, _ := quota.NewPolicy(db, quota.Attributes, quota.Limits{}, nil).Status(); st.Requests != 0 {
		t.Fatal("a refused request was counted")
	}
	// The deployment switch allows it.
	if _, err := service(t, db, rec, true).Suggest(ctx, "author-a", in); err != nil || len(rec.requests()) != 1 {
		t.Fatalf("switch on: %v, %d requests", err, len(rec.requests()))
	}
	// The local provider is not external: private content is fine.
	if _, err := service(t, db, llm.NewLocal(""), false).Suggest(ctx, "author-a", in); err != nil {
		t.Fatalf("local provider, private article: %v", err)
	}
}

func TestDisabled(t *testing.T) {
	db := openDB(t)
	s, err := New(Options{Route: assistant.Route{Provider: llm.NewLocal(""), Policy: quota.NewPolicy(db, quota.Attributes, quota.Limits{}, nil)},
		Ledger: quota.NewLedger(db, quota.LedgerOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Suggest(ctx, "a", article()); errs.CodeOf(err) != CodeDisabled || errs.KindOf(err) != errs.Disabled {
		t.Fatalf("disabled: %v", err)
	}
}

func TestLocalEngine(t *testing.T) {
	db := openDB(t)
	s := service(t, db, llm.NewLocal(""), false)
	sug, err := s.Suggest(ctx, "author-a", article())
	if err != nil {
		t.Fatal(err)
	}
	if sug.Provider != "local" || sug.Slug != "storage-engines" || sug.Category != "Engineering" && sug.Category != "" {
		t.Fatalf("local suggestion = %+v", sug)
	}
	if strings.Join(sug.Tags, ",") != "storage" || !strings.Contains(sug.Summary, "Pebble is an LSM storage engine.") {
		t.Fatalf("local suggestion = %+v", sug)
	}
	zh := Input{
		Title: "数据库的版本管理",
		Body: flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
			{ID: "a", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "版本管理让每一次修改都可以追溯。数据库里的版本不可变，草稿可以随时保存。今天天气很好。"}}},
			{ID: "b", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "发布时，版本管理会封存一个检查点。"}}},
		}},
		Categories: []string{"数据库", "旅行"},
		Tags:       []string{"版本管理", "美食"},
	}
	sug, err = s.Suggest(ctx, "author-a", zh)
	if err != nil {
		t.Fatal(err)
	}
	if sug.Slug != "shu-ju-ku-de-ban-ben-guan-li" || sug.Category != "数据库" || strings.Join(sug.Tags, ",") != "版本管理" {
		t.Fatalf("Chinese suggestion = %+v", sug)
	}
	if !strings.Contains(sug.Summary, "版本管理让每一次修改都可以追溯。") || strings.Contains(sug.Summary, "天气") {
		t.Fatalf("Chinese summary = %q", sug.Summary)
	}
}

// The local engine proposes a title only for an untitled article: its
// first heading, else its first sentence; the slug follows it.
func TestLocalEngineTitle(t *testing.T) {
	s := service(t, openDB(t), llm.NewLocal(""), false)
	in := article()
	sug, err := s.Suggest(ctx, "author-a", in)
	if err != nil {
		t.Fatal(err)
	}
	if sug.Title != "" || sug.Slug != "storage-engines" {
		t.Fatalf("an article with a title got title %q, slug %q", sug.Title, sug.Slug)
	}
	in.Title = "Untitled"
	if sug, err = s.Suggest(ctx, "author-a", in); err != nil {
		t.Fatal(err)
	}
	if sug.Title != "Why LSM trees" || sug.Slug != "why-lsm-trees" {
		t.Fatalf("an untitled article with a heading got title %q, slug %q", sug.Title, sug.Slug)
	}
	in.Title = ""
	in.Body.Blocks = in.Body.Blocks[1:] // no heading: the first sentence
	if sug, err = s.Suggest(ctx, "author-a", in); err != nil {
		t.Fatal(err)
	}
	if sug.Title != "Pebble is an LSM storage engine" {
		t.Fatalf("an untitled article without a heading got title %q", sug.Title)
	}
	zh := Input{Title: "无标题", Body: flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		{ID: "a", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "版本管理让每一次修改都可以追溯。草稿可以随时保存。"}}}}}}
	if sug, err = s.Suggest(ctx, "author-a", zh); err != nil {
		t.Fatal(err)
	}
	if sug.Title != "版本管理让每一次修改都可以追溯" {
		t.Fatalf("an untitled Chinese article got title %q", sug.Title)
	}
}

// A model's title is kept on one line and bounded.
func TestCleanTitle(t *testing.T) {
	a, err := clean(answer{Title: "  Two\nlines  ", Summary: "S.", Slug: "s"}, nil)
	if err != nil || a.Title != "Two lines" {
		t.Fatalf("clean title = %q, %v", a.Title, err)
	}
	a, _ = clean(answer{Title: strings.Repeat("长", 200), Summary: "S.", Slug: "s"}, nil)
	if n := len([]rune(a.Title)); n != MaxTitle {
		t.Fatalf("a long title is cut to %d runes, want %d", n, MaxTitle)
	}
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"Hello, World!":             "hello-world",
		"Über Ærø — café":           "uber-aero-cafe",
		"写作系统 2.0 版":                "xie-zuo-xi-tong-2-0-ban",
		"":                          "",
		"!!!":                       "",
		strings.Repeat("word ", 40): strings.TrimSuffix(strings.Repeat("word-", 16), "-"),
	} {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
}
