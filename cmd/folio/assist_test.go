package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// idRE finds the ids a store makes up (runs, suggestions, sessions,
// users, presets, preset versions, tasks, usage events, objects), and
// timeRE the times it records, so that the output of two stores can be
// compared: each distinct id is replaced by a placeholder numbered by
// first appearance, every time by the same one (two records made in the
// same millisecond in one store may not be in the other).
var (
	idRE   = regexp.MustCompile(`\b(?:[rscpu][a-z2-7]{16}|t-[0-9a-f]{24}|pv[0-9a-f]{16}|[0-9a-f]{64}|[0-9a-f]{16}|[0-9a-f]{12})\b`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z|\b1\d{12}\b`)
)

func normalize(s string) string {
	s = timeRE.ReplaceAllString(s, "<time>")
	seen := map[string]string{}
	return idRE.ReplaceAllStringFunc(s, func(m string) string {
		if p, ok := seen[m]; ok {
			return p
		}
		p := fmt.Sprintf("<%d>", len(seen))
		seen[m] = p
		return p
	})
}

func normalized(r cliResult) cliResult {
	return cliResult{stdout: normalize(r.stdout), stderr: normalize(r.stderr), code: r.code}
}

// jsonID reads the string at key from a command's JSON output ("run.id").
func jsonID(t *testing.T, r cliResult, path ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("not JSON: %+v", r)
	}
	for _, k := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			if len(x) == 0 {
				t.Fatalf("no %s in %s", k, r.stdout)
			}
			v = x[0]
			if k != "0" {
				v = v.(map[string]any)[k]
			}
		}
	}
	s, _ := v.(string)
	if s == "" {
		t.Fatalf("no %v in %s", path, r.stdout)
	}
	return s
}

const assistBody = `{"schemaVersion":1,"blocks":[
	{"id":"p1","type":"paragraph","richText":[{"text":"In order to win, the team made a decision."}]},
	{"id":"p2","type":"paragraph","richText":[{"text":"We basically need to cut the filler."}]},
	{"id":"p3","type":"paragraph","richText":[{"text":"The results are in the table."}]}]}`

// TestAssistRemoteMatchesDirect runs the writing assistant's verbs
// through a daemon and directly on a data directory and compares what
// they print and their exit codes: byte for byte on the same store (reads
// through the daemon, then directly once it stopped), and with the ids
// and times each store makes up numbered in order on two stores (writes).
// Personalization exclusivity is refused alike by both entry points.
func TestAssistRemoteMatchesDirect(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	body := writeFile(t, tmp, "body.json", assistBody)
	dirA, dirB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	if r := runCLI("--data", dirA, "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	if r := runCLI("--data", dirA, "user", "add", "admin", "--admin"); r.code != 0 {
		t.Fatalf("user add: %+v", r)
	}
	d := startDaemon(t, dirB, "")
	remote := []string{"--server", d.url, "--token", d.token}
	direct := []string{"--data", dirA}
	both := func(args ...string) (cliResult, cliResult) {
		t.Helper()
		a := runCLI(append(direct, args...)...)
		b := runCLI(append(remote, args...)...)
		if normalized(a) != normalized(b) {
			t.Errorf("folio %s:\ndirect: %+v\nremote: %+v", strings.Join(args, " "), a, b)
			if dump := os.Getenv("FOLIO_TEST_DUMP"); dump != "" {
				os.WriteFile(dump+".a", []byte(normalize(a.stdout)), 0o644)
				os.WriteFile(dump+".b", []byte(normalize(b.stdout)), 0o644)
			}
		}
		return a, b
	}
	// each runs a command that names a store's own id in both modes.
	each := func(argsA, argsB []string) (cliResult, cliResult) {
		t.Helper()
		a := runCLI(append(direct, argsA...)...)
		b := runCLI(append(remote, argsB...)...)
		if normalized(a) != normalized(b) {
			t.Errorf("folio %s:\ndirect: %+v\nremote: %+v", strings.Join(argsA, " "), a, b)
		}
		return a, b
	}
	both("doc", "new", "--id", "d1", "--title", "Assist", "--from", body)

	// Personalization is exclusive on both entry points; the refusals
	// write nothing.
	for _, flags := range [][]string{
		{"--writing-preset", "clear-concise", "--editing-preset", "six-rules"},
		{"--persona", "x", "--editing-preset", "six-rules"},
		{"--persona", "x", "--writing-preset", "clear-concise"},
	} {
		a, _ := both(append([]string{"assist", "d1", "--scope", "block:p1", "--instruction", "tighten"}, flags...)...)
		if a.code != exitInvalid || !strings.Contains(a.stderr, "a request chooses one of persona, writing preset and editing preset") {
			t.Errorf("assist %v: %+v", flags, a)
		}
	}
	if a, _ := both("assist", "d1", "--scope", "block:p1", "--instruction", "x", "--persona", "x"); a.code != exitNotFound || !strings.Contains(a.stderr, `no persona "x"`) {
		t.Errorf("persona: %+v", a)
	}
	if a, _ := both("session", "list", "d1"); strings.Count(a.stdout, "\n") != 1 {
		t.Errorf("refused requests started a session: %+v", a)
	}
	for _, bad := range [][]string{
		{"assist", "nosuch", "--scope", "document", "--instruction", "x"},
		{"assist", "d1", "--scope", "paragraph:p1", "--instruction", "x"},
		{"assist", "d1", "--scope", "block:zz", "--instruction", "x"},
		{"assist", "d1", "--scope", "selection:p1:5:500", "--instruction", "x"},
		{"assist", "d1", "--scope", "block:p1"},
		{"assist", "d1", "--scope", "block:p1", "--writing-preset", "nosuch", "--instruction", "x"},
		{"assist", "d1", "--instruction", "x"},
		{"suggestion", "accept", "snosuchnosuchnosu"},
		{"suggestion", "list", "d1", "--status", "maybe"},
		{"run", "show", "rnosuchnosuchnosu"},
		{"session", "show", "cnosuchnosuchnosu"},
		{"explain", "d1@v9.r9"},
		{"explain", "nosuch"},
		{"preset", "show", "nosuch"},
		{"preset", "list", "--type", "poetry"},
	} {
		if a, _ := both(bad...); a.code == 0 {
			t.Errorf("folio %s succeeded: %+v", strings.Join(bad, " "), a)
		}
	}

	// A suggestion, accepted; another, rejected; a request the rules
	// cannot carry out: no change.
	a, b := both("assist", "d1", "--scope", "block:p1", "--editing-preset", "six-rules", "--wait", "--format", "json")
	sgA, sgB := jsonID(t, a, "suggestion", "id"), jsonID(t, b, "suggestion", "id")
	if a.code != 0 || !strings.Contains(a.stdout, `"status": "pending"`) {
		t.Fatalf("assist --wait: %+v", a)
	}
	both("suggestion", "list", "d1")
	each([]string{"suggestion", "show", sgA}, []string{"suggestion", "show", sgB})
	a, _ = each([]string{"suggestion", "accept", sgA}, []string{"suggestion", "accept", sgB})
	if a.code != 0 || !strings.Contains(a.stdout, "as d1@v1.r1") {
		t.Fatalf("accept: %+v", a)
	}
	each([]string{"suggestion", "accept", sgA}, []string{"suggestion", "accept", sgB}) // a repeat answers the first result
	a, b = both("assist", "d1", "--scope", "selection:p2:0:36", "--instruction", "make it concise", "--wait")
	if a.code != 0 || !strings.Contains(a.stdout, "[-basically -]") {
		t.Fatalf("selection: %+v", a)
	}
	sgA, sgB = sgRE.FindString(a.stdout), sgRE.FindString(b.stdout)
	each([]string{"suggestion", "reject", sgA, "--reason", "not now"}, []string{"suggestion", "reject", sgB, "--reason", "not now"})
	a, _ = each([]string{"suggestion", "accept", sgA}, []string{"suggestion", "accept", sgB})
	if a.code != exitConflict {
		t.Errorf("accepting a rejected suggestion: %+v", a)
	}
	a, _ = both("assist", "d1", "--scope", "document", "--instruction", "write it as a sonnet", "--wait")
	// The offline provider cannot do this at all: the outcome is printed
	// and the exit says so (disabled, needs_model_provider).
	if a.code != exitLimited || !strings.Contains(a.stdout, "no change proposed") || !strings.Contains(a.stderr, "the offline assistant cannot do this") {
		t.Errorf("no change: %+v", a)
	}
	a, _ = both("assist", "d1", "--scope", "block:p3", "--instruction", "make it concise", "--key", "k1")
	if a.code != 0 || !strings.Contains(a.stdout, "queued run") {
		t.Errorf("assist without --wait: %+v", a)
	}
	both("explain", "d1")
	both("explain", "d1@v1.r0")
	both("explain", "d1", "--format", "json")
	both("preset", "add", "--type", "writing", "--name", "短句", "--description", "short", "--prompt", "Use short sentences.")

	// Reads of one store: through the daemon, then directly, byte for byte.
	ids := func(args ...string) cliResult { return runCLI(append(remote, args...)...) }
	runs := ids("suggestion", "list", "d1", "--format", "json")
	sugg := jsonID(t, runs, "0", "id")
	run := jsonID(t, runs, "0", "run")
	sess := jsonID(t, ids("session", "list", "d1", "--format", "json"), "0", "id")
	reads := [][]string{
		{"suggestion", "list", "d1"}, {"suggestion", "list", "d1", "--status", "accepted", "--format", "json"},
		{"suggestion", "show", sugg}, {"suggestion", "show", sugg, "--format", "json"},
		{"session", "list", "d1"}, {"session", "list", "d1", "--format", "json"},
		{"session", "show", sess}, {"session", "show", sess, "--format", "json"}, {"session", "show", sess, "--full", "1"},
		{"session", "show", sess, "--full", "1", "--format", "json"}, {"session", "show", sess, "--full", "99"},
		{"run", "show", run}, {"run", "show", run, "--format", "json"}, {"run", "events", run}, {"run", "events", run, "--format", "json"},
		{"run", "events", run, "--after", "2"}, {"run", "events", run, "--follow"},
		{"explain", "d1"}, {"explain", "d1@v1.r1", "--format", "json"}, {"explain", "d1@v1.r0"},
		{"preset", "list"}, {"preset", "list", "--type", "editing", "--format", "json"}, {"preset", "show", "six-rules"},
		{"preset", "show", "six-rules", "--version", "1", "--format", "json"},
	}
	remoteOut := make([]cliResult, len(reads))
	for i, r := range reads {
		remoteOut[i] = runCLI(append(remote, r...)...)
	}
	d.stop(t)
	for i, r := range reads {
		got := runCLI(append([]string{"--data", dirB}, r...)...)
		if testing.Verbose() {
			t.Logf("folio %s -> %d\n%s%s", strings.Join(r, " "), got.code, got.stdout, got.stderr)
		}
		if got != remoteOut[i] {
			t.Errorf("folio %s:\ndirect: %+v\nremote: %+v", strings.Join(r, " "), got, remoteOut[i])
		}
	}
	if remoteOut[0].code != 0 || !strings.Contains(remoteOut[0].stdout, "accepted as v1.r1") {
		t.Errorf("suggestion list: %+v", remoteOut[0])
	}
}

var sgRE = regexp.MustCompile(`\bs[a-z2-7]{16}\b`)

// Direct mode acts as FOLIO_USER, which must name a user: the assistant
// keeps sessions and runs per user. A run queued in direct mode without
// --wait stays queued until something runs the store's runner, and says
// so; `run show --wait` runs it.
func TestAssistDirectMode(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	body := writeFile(t, tmp, "body.json", assistBody)
	run(t, "--data", data, "init")
	if _, stderr, code := run(t, "--data", data, "doc", "new", "--id", "d1", "--title", "t", "--from", body); code != 0 {
		t.Fatal(stderr)
	}
	_, stderr, code := run(t, "--data", data, "assist", "d1", "--scope", "block:p1", "--instruction", "make it concise")
	if code != exitDenied || !strings.Contains(stderr, "folio user add admin") {
		t.Fatalf("assist as nobody: %d %s", code, stderr)
	}
	run(t, "--data", data, "user", "add", "admin", "--admin")
	out, stderr, code := run(t, "--data", data, "assist", "d1", "--scope", "block:p1", "--instruction", "make it concise", "--format", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var res struct {
		Run struct{ ID, State string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Run.State != "queued" {
		t.Fatalf("assist: %s", out)
	}
	out, _, _ = run(t, "--data", data, "run", "show", res.Run.ID)
	if !strings.Contains(out, "queued for a task runner") || !strings.Contains(out, "folio run show "+res.Run.ID+" --wait") {
		t.Fatalf("run show of a queued run:\n%s", out)
	}
	out, stderr, code = run(t, "--data", data, "run", "show", res.Run.ID, "--wait")
	if code != 0 || !strings.Contains(out, "succeeded") || !strings.Contains(out, "outcome   suggestion") {
		t.Fatalf("run show --wait: %d\n%s%s", code, out, stderr)
	}
	// The events are all there, in order.
	out, _, _ = run(t, "--data", data, "run", "events", res.Run.ID)
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		types = append(types, strings.Split(line, "\t")[2])
	}
	if got := strings.Join(types, " "); got != "queued started progress succeeded" {
		t.Fatalf("events: %s", got)
	}
	// A cancel of a finished run changes nothing.
	if out, _, code = run(t, "--data", data, "run", "cancel", res.Run.ID); code != 0 || !strings.Contains(out, "already succeeded") {
		t.Fatalf("cancel: %d %s", code, out)
	}
	// A queued run cancelled before anything ran it ends cancelled.
	out, _, _ = run(t, "--data", data, "assist", "d1", "--scope", "block:p2", "--instruction", "make it concise", "--format", "json")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(out)
	}
	if out, _, code = run(t, "--data", data, "run", "cancel", res.Run.ID); code != 0 || !strings.Contains(out, "cancelled") {
		t.Fatalf("cancel queued: %d %s", code, out)
	}
	if _, stderr, code = run(t, "--data", data, "run", "show", res.Run.ID, "--wait"); code != 0 {
		t.Fatalf("show cancelled: %d %s", code, stderr)
	}

	// Presets through direct mode: add, edit, copy, reorder, archive, restore.
	prompt := writeFile(t, tmp, "prompt.md", "Write in short sentences.\n")
	out, stderr, code = run(t, "--data", data, "preset", "add", "--type", "writing", "--name", "短句", "--prompt-file", prompt, "--format", "json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var p struct{ ID string }
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.ID == "" {
		t.Fatalf("preset add: %s", out)
	}
	for _, step := range [][]string{
		{"preset", "edit", p.ID, "--description", "short"},
		{"preset", "copy", p.ID, "--name", "copy"},
		{"preset", "reorder", "--type", "writing", p.ID},
		{"preset", "archive", p.ID},
		{"preset", "restore", p.ID},
	} {
		if out, stderr, code := run(t, append([]string{"--data", data}, step...)...); code != 0 {
			t.Fatalf("%v: %d %s%s", step, code, out, stderr)
		}
	}
	out, _, _ = run(t, "--data", data, "preset", "show", p.ID)
	if !strings.Contains(out, "Write in short sentences.") || !strings.Contains(out, "version 2") {
		t.Fatalf("preset show:\n%s", out)
	}
	out, _, _ = run(t, "--data", data, "preset", "list", "--type", "writing")
	_, table, _ := strings.Cut(out, "\nID ")
	if first := strings.Split(table, "\n")[1]; !strings.Contains(out, "none of these presets edits text") || !strings.HasPrefix(first, p.ID) {
		t.Fatalf("reorder: %s", out)
	}
	if _, err := os.Stat(filepath.Join(data, addrFile)); !os.IsNotExist(err) {
		t.Fatal("direct mode recorded a daemon address")
	}
}

// With every AI switch off — the writing assistant and each of its
// entries, personas and each of their components, the attributes and the
// reading assistants — the history scenario works as ever — new, save,
// checkpoint, log, show, diff, restore, history, export, publish —
// directly and through a daemon, while every assist request answers
// assistant_disabled, attrs suggest attributes_disabled and every persona
// verb persona_disabled, with their exit code (9), and no memory index is
// made.
func TestHistoryWithAssistantOff(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	cfg := writeFile(t, tmp, "folio.toml", `
[assistant]
enabled = false
document = false
block = false
selection = false
section = false
writing_presets = false
editing_presets = false

[persona]
enabled = false
style = false
learning = false
memory = false

[attributes]
enabled = false

[reading]
enabled = false
`)
	body1 := writeFile(t, tmp, "b1.json", assistBody)
	body2 := writeFile(t, tmp, "b2.json", strings.Replace(assistBody, "made a decision", "decided", 1))
	scenario := func(t *testing.T, mode []string) {
		t.Helper()
		do := func(want int, args ...string) cliResult {
			t.Helper()
			r := runCLI(append(append([]string{}, mode...), args...)...)
			if r.code != want {
				t.Fatalf("folio %s: exit %d, want %d: %+v", strings.Join(args, " "), r.code, want, r)
			}
			return r
		}
		do(0, "doc", "new", "--id", "h1", "--title", "History", "--from", body1)
		do(0, "doc", "save", "h1", "--from", body2, "--checkpoint", "-m", "second")
		if r := do(0, "log", "h1"); !strings.Contains(r.stdout, "v1.r1") || !strings.Contains(r.stdout, "v1.r0") {
			t.Fatalf("log: %+v", r)
		}
		if r := do(0, "show", "h1@v1.r1", "--format", "text"); !strings.Contains(r.stdout, "the team decided") {
			t.Fatalf("show: %+v", r)
		}
		if r := do(0, "diff", "h1", "v1.r0", "v1.r1"); !strings.Contains(r.stdout, "{+decided+}") {
			t.Fatalf("diff: %+v", r)
		}
		if r := do(0, "restore", "h1", "v1.r0"); !strings.Contains(r.stdout, "as v2.r0") {
			t.Fatalf("restore: %+v", r)
		}
		if r := do(0, "restore", "h1", "v1.r1", "--block", "p1"); !strings.Contains(r.stdout, "as v2.r1") {
			t.Fatalf("restore --block: %+v", r)
		}
		if r := do(0, "history", "h1", "p1"); strings.Count(r.stdout, "\n") != 4 {
			t.Fatalf("history: %+v", r)
		}
		if r := do(0, "export", "git", "--doc", "h1"); strings.Count(r.stdout, "commit refs/heads/main\n") != 4 {
			t.Fatalf("export git: %d commits", strings.Count(r.stdout, "commit refs/heads/main"))
		}
		do(0, "fsck")
		if r := do(0, "publish", "h1"); !strings.Contains(r.stdout, "v2.r1") {
			t.Fatalf("publish: %+v", r)
		}
		if r := do(exitLimited, "attrs", "suggest", "h1"); !strings.Contains(r.stderr, "[attributes] enabled = false") {
			t.Fatalf("attrs suggest: %+v", r)
		}
		if r := do(0, "explain", "h1"); !strings.Contains(r.stdout, "made by hand: restore") {
			t.Fatalf("explain: %+v", r)
		}
		for _, req := range [][]string{
			{"assist", "h1", "--scope", "document", "--instruction", "tighten"},
			{"assist", "h1", "--scope", "block:p1", "--editing-preset", "six-rules", "--wait"},
			{"assist", "h1", "--scope", "selection:p1:0:5", "--instruction", "tighten"},
			{"assist", "h1", "--scope", "section:p1..p2", "--instruction", "tighten"},
		} {
			r := do(exitLimited, req...)
			if !strings.Contains(r.stderr, "the writing assistant is switched off ([assistant] enabled = false)") {
				t.Fatalf("%v: %+v", req, r)
			}
		}
		if r := do(0, "suggestion", "list", "h1"); strings.Count(r.stdout, "\n") != 1 {
			t.Fatalf("suggestion list: %+v", r)
		}
		do(0, "unpublish", "h1")
		for _, req := range [][]string{
			{"persona", "create", "--name", "p", "--source", "h1"},
			{"persona", "list"},
			{"persona", "show", "pnnosuch"},
			{"index", "status"},
		} {
			if r := do(exitLimited, req...); !strings.Contains(r.stderr, "persona") {
				t.Fatalf("%v: %+v", req, r)
			}
		}
	}
	t.Run("direct", func(t *testing.T) {
		data := filepath.Join(tmp, "direct")
		runCLI("--data", data, "init")
		runCLI("--data", data, "user", "add", "admin", "--admin")
		scenario(t, []string{"--data", data, "--config", cfg})
		if _, err := os.Stat(filepath.Join(data, "index")); !os.IsNotExist(err) {
			t.Fatalf("a memory index was made with personas off: %v", err)
		}
	})
	t.Run("daemon", func(t *testing.T) {
		d := startDaemon(t, filepath.Join(tmp, "served"), "", "--config", cfg)
		scenario(t, []string{"--server", d.url, "--token", d.token})
		d.stop(t)
		if _, err := os.Stat(filepath.Join(tmp, "served", "index")); !os.IsNotExist(err) {
			t.Fatalf("a memory index was made with personas off: %v", err)
		}
	})
}

// In direct mode too, a `folio doc save` of another block leaves a block
// suggestion pending and its accept is carried over (explain says so),
// while a save of the suggestion's own block conflicts it at once.
func TestDirectSaveAndCarriedOverSuggestions(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	d := func(args ...string) string {
		t.Helper()
		out, stderr, code := run(t, append([]string{"--data", data}, args...)...)
		if code != 0 {
			t.Fatalf("folio %s: %d %s", strings.Join(args, " "), code, stderr)
		}
		return out
	}
	status := func(id string) string {
		t.Helper()
		var list []struct{ ID, Status string }
		if err := json.Unmarshal([]byte(d("suggestion", "list", "d1", "--format", "json")), &list); err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.ID == id {
				return s.Status
			}
		}
		t.Fatalf("no suggestion %s", id)
		return ""
	}
	suggest := func(scope string) string {
		t.Helper()
		var res struct{ Run struct{ ID string } }
		if err := json.Unmarshal([]byte(d("assist", "d1", "--scope", scope, "--editing-preset", "six-rules", "--format", "json")), &res); err != nil {
			t.Fatal(err)
		}
		var run struct{ Suggestion string }
		if err := json.Unmarshal([]byte(d("run", "show", res.Run.ID, "--wait", "--format", "json")), &run); err != nil || run.Suggestion == "" {
			t.Fatalf("run %s: no suggestion (%v)", res.Run.ID, err)
		}
		return run.Suggestion
	}
	d("init")
	d("user", "add", "admin", "--admin")
	d("doc", "new", "--id", "d1", "--title", "t", "--from", writeFile(t, tmp, "b0.json", assistBody))
	s1 := suggest("block:p1")
	d("doc", "save", "d1", "--from", writeFile(t, tmp, "b1.json", strings.Replace(assistBody, "The results are in the table.", "The results are in the second table.", 1)))
	if st := status(s1); st != "pending" {
		t.Fatalf("a direct save of another block left the suggestion %s", st)
	}
	s2 := suggest("block:p2")
	d("suggestion", "accept", s1)
	out := d("explain", "d1")
	if !strings.Contains(out, "carried over from v1.r0 to v1.r1") {
		t.Fatalf("explain of the carried-over accept:\n%s", out)
	}
	var e struct {
		Txn struct {
			OrigBase string `json:"origBase"`
		} `json:"txn"`
		Suggestion struct {
			Carried struct{ From, To struct{ Label string } } `json:"carried"`
		} `json:"suggestion"`
	}
	if err := json.Unmarshal([]byte(d("explain", "d1", "--format", "json")), &e); err != nil || e.Txn.OrigBase == "" ||
		e.Suggestion.Carried.From.Label != "v1.r0" || e.Suggestion.Carried.To.Label != "v1.r1" {
		t.Fatalf("explain --format json of the carried-over accept: %+v %v", e, err)
	}
	// The accept kept the edit elsewhere.
	if out := d("show", "d1", "--format", "text"); !strings.Contains(out, "second table") {
		t.Fatalf("the carried-over accept lost the edit elsewhere:\n%s", out)
	}
	body := strings.Replace(assistBody, "We basically need to cut the filler.", "We need to cut it.", 1)
	body = strings.Replace(body, "The results are in the table.", "The results are in the second table.", 1)
	d("doc", "save", "d1", "--from", writeFile(t, tmp, "b2.json", body))
	if st := status(s2); st != "conflicted" {
		t.Fatalf("a direct save of the suggestion's block left it %s", st)
	}
}
