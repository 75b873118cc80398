package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm/llmtest"
	"github.com/foliodev/folio/internal/quota"
)

// aiTestEnv is an initialized data directory and a config file.
type aiTestEnv struct {
	data, config string
}

func newAITestEnv(t *testing.T, configText string) *aiTestEnv {
	t.Helper()
	for _, k := range []string{"FOLIO_AI_PROVIDER", "FOLIO_AI_BASE_URL", "FOLIO_AI_MODEL", "FOLIO_AI_API_KEY", "FOLIO_AI_TIMEOUT"} {
		t.Setenv(k, "")
		for _, c := range quota.Categories {
			t.Setenv(strings.Replace(k, "FOLIO_AI_", "FOLIO_AI_"+strings.ToUpper(string(c))+"_", 1), "")
		}
	}
	dir := t.TempDir()
	e := &aiTestEnv{data: filepath.Join(dir, "data"), config: filepath.Join(dir, "folio.toml")}
	db, err := kv.Open(e.data, kv.Options{Create: true, CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.WriteFile(e.config, []byte(configText), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// cliErr is a failed run: its error line (without "folio: ") and exit code.
type cliErr struct {
	msg  string
	code int
}

func (e *cliErr) Error() string { return e.msg }

// run runs `folio --data D --config C args…` and returns stdout and the
// error line, nil on success.
func (e *aiTestEnv) run(args ...string) (string, *cliErr) {
	r := runCLI(append([]string{"--data", e.data, "--config", e.config}, args...)...)
	if r.code == 0 {
		return r.stdout, nil
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	return r.stdout, &cliErr{msg: strings.TrimPrefix(lines[len(lines)-1], "folio: "), code: r.code}
}

func (e *aiTestEnv) usage(t *testing.T) quota.Report {
	t.Helper()
	out, err := e.run("usage", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep quota.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return rep
}

func writingConfig(baseURL string) string {
	return fmt.Sprintf(`
[ai.writing]
provider = "openai"
base_url = %q
model = "fake-model"
api_key = "sk-test-writing"
timeout = "5s"
`, baseURL)
}

func TestAICheckSuccess(t *testing.T) {
	srv := llmtest.NewServer(llmtest.OK)
	defer srv.Close()
	e := newAITestEnv(t, writingConfig(srv.BaseURL()))

	out, err := e.run("ai", "check", "--category", "writing", "--prompt", "ping")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{llmtest.Reply + "\n", "category: writing", "provider: openai (model fake-model at " + srv.BaseURL(),
		"config:   dedicated", "latency:", "booked under writing"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sk-test") {
		t.Errorf("output leaks the key:\n%s", out)
	}
	rep := e.usage(t)
	if w := rep.Totals[quota.Writing]; w.Events != 1 || w.Total == 0 || w.Estimated != 0 {
		t.Errorf("writing usage %+v", w)
	}
	if rep.Totals[quota.Reading].Events != 0 || rep.Sources[quota.Writing] != "dedicated" || rep.Sources[quota.Reading] != "default" || rep.Health != "ok" ||
		len(rep.Warnings) != 0 {
		t.Errorf("report %+v", rep)
	}

	// JSON output, and the local default (the rule-based editor) for
	// another category.
	out, err = e.run("ai", "check", "--category", "reading", "--prompt", "In order to win, utilize the data.", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var cr assistant.CheckReport
	if err := json.Unmarshal([]byte(out), &cr); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if cr.Provider != "local" || cr.Source != "default" || cr.Text != "To win, use the data." || !cr.UsageKnown || !cr.Booked || cr.Usage.Total == 0 ||
		!strings.Contains(cr.About, "offline local provider") {
		t.Errorf("json check %+v", cr)
	}
	out, err = e.run("usage")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "health: ok") || !strings.Contains(out, "reading") || !strings.Contains(out, "settings: dedicated") {
		t.Errorf("usage text:\n%s", out)
	}
}

func TestAICheckErrors(t *testing.T) {
	srv := llmtest.NewServer(llmtest.OK)
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()

	tests := []struct {
		name     string
		baseURL  string
		sc       llmtest.Scenario
		extra    string
		want     []string
		charged  bool
		partText string
		exit     int
	}{
		{name: "unreachable", baseURL: closed, exit: exitUnavailable, want: []string{"provider_unreachable", "base_url (set in [ai.writing]; or override with FOLIO_AI_WRITING_BASE_URL)"}},
		{name: "401", sc: llmtest.Unauthorized, exit: exitDenied, want: []string{"provider_unauthorized", "401", "api_key (set in [ai.writing]", "FOLIO_AI_WRITING_API_KEY"}},
		{name: "429", sc: llmtest.RateLimited, exit: exitUnavailable, want: []string{"provider_rate_limited", "429", "retry in 7s"}},
		{name: "stream cut", sc: llmtest.CutMidStream, exit: exitUnavailable, want: []string{"provider_stream_cut", "reservation", "charged"}, charged: true, partText: "Hello \n"},
		{name: "budget", sc: llmtest.OK, extra: "daily_tokens = 10\n", exit: exitLimited, want: []string{"writing_token_budget_exhausted", "daily budget of 10 tokens", "[ai.writing]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.baseURL
			if base == "" {
				base = srv.BaseURL()
				srv.SetScenario(tt.sc)
			}
			e := newAITestEnv(t, writingConfig(base)+tt.extra)
			out, err := e.run("ai", "check", "--category", "writing")
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			if err.code != tt.exit {
				t.Errorf("exit code %d, want %d", err.code, tt.exit)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "ai check writing: provider openai at "+base) {
				t.Errorf("not a one-line error naming category and provider: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q: %s", w, msg)
				}
			}
			if strings.Contains(msg, "sk-test") {
				t.Errorf("error leaks the key: %s", msg)
			}
			if out != tt.partText {
				t.Errorf("stdout = %q, want %q", out, tt.partText)
			}
			rep := e.usage(t)
			if w := rep.Totals[quota.Writing]; (w.Events == 1) != tt.charged || (tt.charged && w.Estimated != 1) {
				t.Errorf("booked %+v, charged=%v", w, tt.charged)
			}
		})
	}
}

func TestUsageFlags(t *testing.T) {
	e := newAITestEnv(t, "")
	if _, err := e.run("usage", "--days", "0"); err == nil || !strings.Contains(err.Error(), "--days") || err.code != exitUsage {
		t.Errorf("days 0: %v", err)
	}
	if _, err := e.run("usage", "--format", "yaml"); err == nil || !strings.Contains(err.Error(), "--format") {
		t.Errorf("format yaml: %v", err)
	}
	if _, err := e.run("ai", "check", "--category", "poetry"); err == nil || !strings.Contains(err.Error(), "poetry") {
		t.Errorf("bad category: %v", err)
	}
	if _, err := e.run("ai", "check", "--prompt", " "); err == nil || err.code != exitUsage {
		t.Errorf("empty prompt: %v", err)
	}
	out, err := e.run("usage", "--days", "2")
	if err != nil || !strings.Contains(out, "(no model calls)") {
		t.Errorf("empty usage: %v\n%s", err, out)
	}
}

// A category that runs on the legacy shared [ai] section is reported as
// such and advised to move, in `folio usage` and in one line of the
// daemon's log at start-up; with no configuration every category reports
// the built-in default and nothing is advised.
func TestLegacyAISectionIsAdvised(t *testing.T) {
	e := newAITestEnv(t, "[ai]\nprovider = \"local\"\nmodel = \"shared\"\n\n[ai.writing]\nmodel = \"own\"\n")
	rep := e.usage(t)
	if rep.Sources[quota.Writing] != "mixed" || rep.Sources[quota.Reading] != "compat" || len(rep.Warnings) != 3 ||
		!strings.Contains(rep.Warnings[0], "ai writing runs on the legacy shared [ai] section (provider=[ai])") ||
		!strings.Contains(rep.Warnings[1], "move these keys to [ai.reading]") {
		t.Fatalf("report sources %v warnings %q", rep.Sources, rep.Warnings)
	}
	out, err := e.run("usage")
	if err != nil || !strings.Contains(out, "settings: compat") ||
		!strings.Contains(out, "warning: ai attributes runs on the legacy shared [ai] section (provider=[ai] model=[ai]): move these keys to [ai.attributes]") {
		t.Fatalf("usage text (%v):\n%s", err, out)
	}
	d := startDaemon(t, e.data, "", "--config", e.config)
	d.stop(t)
	if logs := d.stderr.String(); !strings.Contains(logs, "move these keys to [ai.writing]") {
		t.Fatalf("start-up log:\n%s", logs)
	}
	lines := 0
	for _, l := range strings.Split(d.stderr.String(), "\n") {
		if strings.Contains(l, "legacy shared [ai] section") {
			lines++
		}
	}
	if lines != 1 {
		t.Errorf("%d log lines about the legacy section, want 1:\n%s", lines, d.stderr)
	}

	none := newAITestEnv(t, "")
	rep = none.usage(t)
	for _, cat := range quota.Categories {
		if rep.Sources[cat] != "default" {
			t.Errorf("no configuration: %s reports %q", cat, rep.Sources[cat])
		}
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("no configuration, warnings %q", rep.Warnings)
	}
	d = startDaemon(t, none.data, "", "--config", none.config)
	d.stop(t)
	if strings.Contains(d.stderr.String(), "legacy") {
		t.Errorf("no configuration, the log warns:\n%s", d.stderr)
	}
}
