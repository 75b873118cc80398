package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/llm/llmtest"
)

// TestConnectAModelDocs runs docs/ai.md's "Connect a model" blocks
// (Ollama, vLLM, llama.cpp) against the fake OpenAI-compatible server:
// the environment of each block's second line, with the fake's address
// in place of the local port, makes its third line (`folio ai check
// --category writing`) reach the model the block names; and with no
// provider `preset list` says which presets need one.
func TestConnectAModelDocs(t *testing.T) {
	raw, err := os.ReadFile("../../docs/ai.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "\n## Connect a model\n")
	if start < 0 {
		t.Fatal(`docs/ai.md has no "## Connect a model" section`)
	}
	section := doc[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	blocks := regexp.MustCompile("(?s)\n([A-Za-z.]+):\n\n```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	names := []string{}
	for _, b := range blocks {
		names = append(names, b[1])
	}
	if strings.Join(names, ",") != "Ollama,vLLM,llama.cpp" {
		t.Fatalf("blocks %v, want Ollama, vLLM and llama.cpp", names)
	}
	assign := regexp.MustCompile(`^(FOLIO_AI_[A-Z_]+)=(\S+)$`)
	for _, b := range blocks {
		t.Run(b[1], func(t *testing.T) {
			lines := strings.Split(strings.TrimSpace(b[2]), "\n")
			if len(lines) != 3 {
				t.Fatalf("%d lines, want 3 (start the server, point folio at it, check)", len(lines))
			}
			srv := llmtest.NewServer(llmtest.OK)
			defer srv.Close()
			e := newAITestEnv(t, "")
			env := map[string]string{}
			for _, w := range strings.Fields(lines[1]) {
				if m := assign.FindStringSubmatch(w); m != nil {
					env[m[1]] = m[2]
				}
			}
			base := env["FOLIO_AI_WRITING_BASE_URL"]
			if env["FOLIO_AI_WRITING_PROVIDER"] != "openai" || !regexp.MustCompile(`^http://localhost:\d+/v1$`).MatchString(base) || env["FOLIO_AI_WRITING_MODEL"] == "" {
				t.Fatalf("line 2 sets %v; want provider openai, a local /v1 base URL and a model", env)
			}
			env["FOLIO_AI_WRITING_BASE_URL"] = srv.BaseURL()
			for k, v := range env {
				t.Setenv(k, v)
			}
			args := strings.Fields(lines[2])
			if args[0] != "folio" {
				t.Fatalf("line 3 %q is not a folio command", lines[2])
			}
			out, cerr := e.run(args[1:]...)
			if cerr != nil {
				t.Fatalf("%s: %v (exit %d)", lines[2], cerr, cerr.code)
			}
			if !strings.Contains(out, llmtest.Reply) || !strings.Contains(out, "model "+env["FOLIO_AI_WRITING_MODEL"]) {
				t.Fatalf("%s printed:\n%s", lines[2], out)
			}
			reqs := srv.Requests()
			if len(reqs) == 0 || reqs[len(reqs)-1].Body["model"] != env["FOLIO_AI_WRITING_MODEL"] {
				t.Fatalf("the fake server was not asked for model %q: %+v", env["FOLIO_AI_WRITING_MODEL"], reqs)
			}
			// With a provider, presets carry no offline marks.
			if out, cerr := e.run("preset", "list"); cerr != nil || strings.Contains(out, "needs a model") {
				t.Fatalf("preset list with a provider: %v\n%s", cerr, out)
			}
		})
	}
	e := newAITestEnv(t, "")
	out, cerr := e.run("preset", "list")
	if cerr != nil {
		t.Fatal(cerr)
	}
	if !strings.Contains(out, "only six-rules edits text") || !strings.Contains(out, "clear-concise") {
		t.Fatalf("offline preset list:\n%s", out)
	}
	_, table, _ := strings.Cut(out, "\nID ")
	rows := 0
	for _, l := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(l)
		if len(f) > 3 {
			rows++
		}
		if len(f) > 3 && f[1] == "writing" && f[3] != "needs" {
			t.Fatalf("writing preset %s not marked as needing a model:\n%s", f[0], out)
		}
		if len(f) > 3 && f[0] == "six-rules" && f[3] != "edits" {
			t.Fatalf("six-rules not marked as editing offline:\n%s", out)
		}
	}
	if rows != 11 {
		t.Fatalf("%d presets listed, want the 11 built-in ones:\n%s", rows, out)
	}
}

// Preset names follow [site] language; the default instruction of an
// editing-preset request follows the document's language.
func TestPresetLanguage(t *testing.T) {
	e := newAITestEnv(t, "[site]\nlanguage = \"en\"\n")
	out, cerr := e.run("preset", "list")
	if cerr != nil || !strings.Contains(out, "Clear and concise") || !strings.Contains(out, "Six rules for stronger prose") || strings.Contains(out, "清晰简洁") {
		t.Fatalf("preset list in English: %v\n%s", cerr, out)
	}
	if _, cerr := newAITestEnv(t, "[site]\nlanguage = \"fr\"\n").run("preset", "list"); cerr == nil || cerr.code != exitInvalid || !strings.Contains(cerr.msg, "[site] language") {
		t.Fatalf("an unknown language: %v", cerr)
	}
	zh := newAITestEnv(t, "")
	out, _ = zh.run("preset", "list")
	if !strings.Contains(out, "清晰简洁") {
		t.Fatalf("preset list without a language:\n%s", out)
	}
	t.Setenv("FOLIO_USER", "ana")
	if _, cerr := zh.run("user", "add", "ana"); cerr != nil {
		t.Fatal(cerr)
	}
	for _, c := range []struct{ name, text, want string }{
		{"zh", "# 标题\n\n由于我们迟到了，会议被推迟了。我们对计划进行了调整。\n", assistant.DefaultEditingInstruction},
		{"en", "# Title\n\nDue to the fact that we were late, the meeting was postponed.\n", assistant.DefaultEditingInstructionEN},
	} {
		f := t.TempDir() + "/" + c.name + ".md"
		if err := os.WriteFile(f, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, cerr := zh.run("doc", "new", "--from", f, "--id", "d-"+c.name); cerr != nil {
			t.Fatal(cerr)
		}
		out, cerr := zh.run("assist", "d-"+c.name, "--scope", "document", "--editing-preset", "six-rules", "--wait", "--format", "json")
		if cerr != nil {
			t.Fatalf("%s: %v", c.name, cerr)
		}
		var res struct {
			Run assistant.Run `json:"run"`
		}
		if err := unmarshalCLI([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res.Run.Instruction != c.want || !res.Run.DefaultInstruction {
			t.Errorf("%s document: default instruction %q, want %q", c.name, res.Run.Instruction, c.want)
		}
	}
}
