package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/objstore"
)

// personaIDRE finds the ids personas make up: persona ids, component ids
// (style profile, learning and memory snapshots: content ids over data
// that names each store's own versions) and memory item keys.
var personaIDRE = regexp.MustCompile(`\bpn[a-z2-7]{16}\b|\b(?:sp|ls|ms)[0-9a-f]{24}\b`)

const personaSource = `{"schemaVersion":1,"blocks":[
	{"id":"s1","type":"paragraph","richText":[{"text":"我在2019年加入了星火公司，负责搜索。"}]},
	{"id":"s2","type":"paragraph","richText":[{"text":"后来我在杭州住了五年，每天早上写作。"}]}]}`

// TestPersonaRemoteMatchesDirect runs the persona verbs through a daemon
// and directly on a data directory and compares what they print and
// their exit codes, with the ids and times each store makes up numbered
// in order; then, directly, it deletes the memory index directory and
// checks that retrieval after the rebuild prints exactly what it printed
// before.
func TestPersonaRemoteMatchesDirect(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	src := writeFile(t, tmp, "src.json", personaSource)
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
	norm := func(r cliResult) cliResult {
		r.stdout = strings.NewReplacer(dirA, "<data>", dirB, "<data>").Replace(r.stdout)
		r.stdout = personaIDRE.ReplaceAllString(r.stdout, "<pid>")
		r.stderr = personaIDRE.ReplaceAllString(r.stderr, "<pid>")
		return normalized(r)
	}
	each := func(argsA, argsB []string) (cliResult, cliResult) {
		t.Helper()
		a := runCLI(append(direct, argsA...)...)
		b := runCLI(append(remote, argsB...)...)
		if norm(a) != norm(b) {
			t.Errorf("folio %s:\ndirect: %+v\nremote: %+v", strings.Join(argsA, " "), a, b)
			if dump := os.Getenv("FOLIO_TEST_DUMP"); dump != "" {
				os.WriteFile(dump+".a", []byte(norm(a).stdout), 0o644)
				os.WriteFile(dump+".b", []byte(norm(b).stdout), 0o644)
			}
		}
		return a, b
	}
	both := func(args ...string) (cliResult, cliResult) { t.Helper(); return each(args, args) }

	both("doc", "new", "--id", "s1", "--title", "加入星火", "--from", src)
	both("doc", "new", "--id", "draft", "--title", "没有发布", "--from", src)
	both("doc", "new", "--id", "d1", "--title", "Assist", "--from", body)
	both("publish", "s1")

	a, b := both("persona", "create", "--name", "博客", "--source", "s1", "--source", "draft", "--format", "json")
	if a.code != 0 {
		t.Fatalf("persona create: %+v", a)
	}
	pa, pb := jsonID(t, a, "id"), jsonID(t, b, "id")
	on := func(args ...string) (cliResult, cliResult) {
		t.Helper()
		withA := strings.Split(strings.ReplaceAll(strings.Join(args, "\x00"), "ID", pa), "\x00")
		withB := strings.Split(strings.ReplaceAll(strings.Join(args, "\x00"), "ID", pb), "\x00")
		return each(withA, withB)
	}
	if a, _ := both("persona", "list"); !strings.Contains(a.stdout, pa) || !strings.Contains(a.stdout, "none") {
		t.Errorf("persona list: %+v", a)
	}
	// A source that is not published fails the job; nothing is active.
	if a, _ := on("persona", "generate", "ID", "--wait"); a.code != exitInvalid || !strings.Contains(a.stdout, "source_unpublished") {
		t.Errorf("generate with an unpublished source: %+v", a)
	}
	both("publish", "draft")
	if a, _ := on("persona", "generate", "ID", "--wait"); a.code != 0 || !strings.Contains(a.stdout, "version 1 of persona") {
		t.Fatalf("generate: %+v", a)
	}
	on("persona", "show", "ID")
	if a, _ := on("persona", "sources", "ID"); !strings.Contains(a.stdout, "s1") || !strings.Contains(a.stdout, "v1.r0") {
		t.Errorf("persona sources: %+v", a)
	}
	on("persona", "versions", "ID")
	on("persona", "versions", "ID", "--format", "json")
	// A second version, then back to the first: the same answer both ways.
	if a, _ := on("persona", "generate", "ID", "--wait"); a.code != 0 || !strings.Contains(a.stdout, "version 2 of persona") {
		t.Fatalf("generate again: %+v", a)
	}
	if a, _ := on("persona", "activate", "ID", "--version", "1"); a.code != 0 || !strings.Contains(a.stdout, "version 1 of persona") || !strings.Contains(a.stdout, "is active") {
		t.Errorf("persona activate: %+v", a)
	}
	if a, _ := on("persona", "show", "ID", "--format", "json"); !strings.Contains(a.stdout, `"active": 1`) && !strings.Contains(a.stdout, `"active":1`) {
		t.Errorf("persona show after activate: %+v", a)
	}
	if a, _ := on("persona", "activate", "ID", "--version", "7"); a.code != exitNotFound {
		t.Errorf("activate a missing version: %+v", a)
	}
	if a, _ := on("persona", "style", "ID"); a.code != 0 || !strings.Contains(a.stdout, "evidence:") {
		t.Errorf("persona style: %+v", a)
	}
	if a, _ := on("persona", "memory", "ID"); a.code != 0 || !strings.Contains(a.stdout, "星火公司") || !strings.Contains(a.stdout, "evidence s1@") {
		t.Errorf("persona memory: %+v", a)
	}
	query, _ := on("persona", "memory", "ID", "--query", "星火")
	if query.code != 0 || !strings.Contains(query.stdout, "match \"星火\"") {
		t.Errorf("persona memory --query: %+v", query)
	}
	// The local provider says it cannot write as a persona: an honest
	// no-change, with the persona pinned, and an exit that says the
	// offline assistant could not do it (disabled, needs_model_provider).
	if a, _ := on("assist", "d1", "--scope", "block:p1", "--instruction", "用我的口吻", "--persona", "ID", "--wait"); a.code != exitLimited || !strings.Contains(a.stdout, "cannot write as a persona") || !strings.Contains(a.stderr, CodeNeedsModel) && !strings.Contains(a.stderr, "offline assistant") {
		t.Errorf("assist --persona: %+v", a)
	}
	if a, _ := both("persona", "show", "pnnosuch"); a.code != exitNotFound {
		t.Errorf("a missing persona: %+v", a)
	}
	both("index", "status")

	// Retrieval after the memory index directory is deleted (direct mode
	// rebuilds it on open) prints what it printed before.
	if err := os.RemoveAll(filepath.Join(dirA, "index")); err != nil {
		t.Fatal(err)
	}
	again := runCLI(append(direct, "persona", "memory", pa, "--query", "星火")...)
	if again != query {
		t.Errorf("after deleting the index:\n%+v\nbefore:\n%+v", again, query)
	}
	if st := runCLI(append(direct, "index", "status")...); !strings.Contains(st.stdout, "last rebuild: missing") {
		t.Errorf("index status after the rebuild: %+v", st)
	}
	if r := runCLI(append(direct, "index", "rebuild")...); r.code != 0 || !strings.Contains(r.stdout, "generation 2") || !strings.Contains(r.stdout, "last rebuild: requested") {
		t.Errorf("index rebuild: %+v", r)
	}
}

// explain and run show print what a persona run pinned and its
// grounding: the component ids, the memory keys provided and used, the
// references by version and the verdict with the claims named.
func TestExplainPrintsPersonaRuns(t *testing.T) {
	var ver [32]byte
	ver[0] = 0xab
	run := assistant.Run{ID: "rrun", State: assistant.RunFailed, Personalization: assistant.Personalization{Kind: assistant.PersonalizePersona,
		Persona: &assistant.PersonaPin{ID: "pnx", Name: "博客", Version: "pnx-v2", Seq: 2, Style: "sp1", Memory: "ms1",
			MemoryKeys: []string{"mi1", "mi2"}, MemoryMatched: 7,
			MemorySources: []assistant.MemorySourcePin{{Doc: "d7", Version: ver, Label: "v1.r2", Items: []string{"mi1", "mi2"}}},
			References:    []assistant.ReferencePin{{Doc: "d9", Version: ver, Label: "v3.r0", Title: "旧文", Score: 2.5, Reasons: []string{"same category"}}}}},
		Grounding: &assistant.RunGrounding{Retried: true, Checked: 1, References: 1, MemoryProvided: 2,
			Claims:      []assistant.GroundingClaim{{Text: "2020年我加入了星火公司。", Unsupported: []string{"time 2020"}}},
			RetryClaims: []assistant.GroundingClaim{{Text: "2021年我加入了星火公司。", Unsupported: []string{"time 2021"}}}},
		Error: &assistant.RunError{Code: assistant.CodeGroundingFailed, Message: "unsupported"}}
	var out strings.Builder
	printExplanation(&out, assistant.Explanation{Doc: "d1", Run: &run})
	text := out.String()
	for _, want := range []string{
		`persona pnx "博客" version 2 (pnx-v2)`,
		"style profile sp1, learning none (0 active rules), memory ms1",
		"memory provided: 2 of 7 matched: mi1 mi2",
		"memory source d7@v1.r2 (ab0000000000): mi1 mi2",
		`reference d9@v3.r0 (ab0000000000) "旧文" score 2.50: same category`,
		"grounding failed after one retry: 1 claim checked; 自动参考 1 篇 · 使用 Memory 0 条",
		`retried for "2021年我加入了星火公司。": time 2021`,
		`unsupported "2020年我加入了星火公司。": time 2020`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("explain lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	printRun(&out, run)
	if !strings.Contains(out.String(), "memory provided: 2 of 7 matched") || !strings.Contains(out.String(), "memory source d7@v1.r2") {
		t.Errorf("run show:\n%s", out.String())
	}
}

// The text form of explain prints the learning observations the JSON
// form has: a suggestion's decisions and edits after the accept, and a
// hand checkpoint's manual_edit with its blocks.
func TestExplainPrintsObservations(t *testing.T) {
	var a, b objstore.ID
	a[0], b[0] = 0xaa, 0xbb
	pers := assistant.Personalization{Kind: assistant.PersonalizePersona, Persona: &assistant.PersonaPin{ID: "pnx"}}
	run := assistant.Run{ID: "rrun", State: assistant.RunSucceeded}
	var out strings.Builder
	printExplanation(&out, assistant.Explanation{Doc: "d1", Run: &run, Observations: []assistant.Observation{
		{Kind: assistant.ObsAccepted, Version: "v1.r2", Actor: "ana", Personalization: pers},
		{Kind: assistant.ObsEditedAfterAccept, Version: "v1.r3", Actor: "ana", Block: "p1", Before: a, After: b},
	}})
	for _, want := range []string{"learning observations: 2", "accepted at v1.r2 by ana, persona pnx",
		"edited_after_accept at v1.r3 by ana: block p1 aa0000000000 -> bb0000000000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explain lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	printExplanation(&out, assistant.Explanation{Doc: "d1", ByHand: true, Note: "made by hand: checkpoint (idle) by ana",
		Observations: []assistant.Observation{{Kind: assistant.ObsManualEdit, Version: "v1.r4", Actor: "ana", Omitted: 1,
			Edits: []assistant.ObservedEdit{{Block: "p2", Before: a, After: b}, {Block: "p9", After: b}}}}})
	for _, want := range []string{"learning observations: 1", "manual_edit at v1.r4 by ana: 3 blocks (1 not listed)",
		"    p2 aa0000000000 -> bb0000000000", "    p9 (added) -> bb0000000000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explain of a hand checkpoint lacks %q:\n%s", want, out.String())
		}
	}
}
