package config_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/config"
)

func write(t testing.TB, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "folio.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaults(t *testing.T) {
	c, err := config.Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Listen != "127.0.0.1:7420" || c.Checkpoint.Idle != 30*time.Second || c.Checkpoint.Max != 10*time.Minute ||
		c.Limits.FrameBytes != 1<<20 {
		t.Fatalf("defaults: %+v", c)
	}
	for _, cat := range config.Categories {
		r, err := c.AICategory(cat)
		if err != nil {
			t.Fatal(err)
		}
		// Nothing configured is its own source, not the legacy fallback.
		if r.Provider != "local" || r.Source != config.BuiltIn || r.Describe() != "all defaults" || r.Legacy() || r.LegacyAdvice() != "" {
			t.Errorf("%s: %+v", cat, r)
		}
	}
	if adv := c.LegacyAdvice(); adv != nil {
		t.Errorf("advice with no configuration: %q", adv)
	}
}

func TestSources(t *testing.T) {
	p := write(t, `
[server]
listen = "0.0.0.0:8080"

[checkpoint]
idle = "10s"

[ai]
provider = "openai"
base_url = "https://api.example.com/v1"
model = "gpt-small"
api_key = "sk-generic"
daily_tokens = 1000

[ai.writing]
provider = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "llama3.2"
api_key = "sk-writing"
timeout = "45s"
response_format = false
stream_usage = false
max_output_tokens = 2048
requests_per_minute = 5
requests_per_day = 100
user_concurrency = 1
concurrency = 2
daily_tokens = 50000

[ai.reading]
model = "gpt-reader"
`)
	c, err := config.Load(p, env(map[string]string{"FOLIO_AI_ATTRIBUTES_API_KEY": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Listen != "0.0.0.0:8080" || c.Checkpoint.Idle != 10*time.Second || c.Checkpoint.Max != 10*time.Minute {
		t.Fatalf("sections: %+v %+v", c.Server, c.Checkpoint)
	}
	w, _ := c.AICategory("writing")
	if w.Source != config.Dedicated || w.Model != "llama3.2" || w.APIKey != "sk-writing" || w.Timeout != 45*time.Second ||
		w.ResponseFormat || w.StreamUsage || w.DailyTokens != 50000 || w.RequestsPerMinute != 5 {
		t.Errorf("writing: %+v", w)
	}
	r, _ := c.AICategory("reading")
	if r.Source != config.Mixed || r.Model != "gpt-reader" || r.BaseURL != "https://api.example.com/v1" ||
		r.Origins["model"] != "[ai.reading]" || r.Origins["base_url"] != "[ai]" || r.DailyTokens != 1000 || r.RequestsPerMinute != 60 {
		t.Errorf("reading: %+v", r)
	}
	a, _ := c.AICategory("attributes")
	if a.Source != config.Compat || a.Model != "gpt-small" || a.APIKey != "sk-generic" {
		t.Errorf("attributes: %+v", a)
	}
	if s := a.Describe(); !strings.Contains(s, "model=[ai]") || strings.Contains(s, "sk-") {
		t.Errorf("describe: %s", s)
	}
	// The categories on [ai] are advised to move, naming the keys; the
	// dedicated one is not.
	adv := c.LegacyAdvice()
	if len(adv) != 2 || !strings.HasPrefix(adv[0], "ai reading runs on the legacy shared [ai] section (provider=[ai] base_url=[ai]") ||
		!strings.Contains(adv[0], "move these keys to [ai.reading]") || strings.Contains(adv[0], "model=") ||
		!strings.HasPrefix(adv[1], "ai attributes runs on the legacy shared [ai] section") || !strings.Contains(adv[1], "model=[ai]") ||
		strings.Contains(strings.Join(adv, " "), "sk-") {
		t.Errorf("advice %q", adv)
	}
}

func TestEnvOverrides(t *testing.T) {
	p := write(t, "[ai.writing]\nmodel = \"from-file\"\n")
	c, err := config.Load(p, env(map[string]string{
		"FOLIO_AI_PROVIDER":         "openai",
		"FOLIO_AI_BASE_URL":         "http://generic/v1",
		"FOLIO_AI_MODEL":            "generic-model",
		"FOLIO_AI_API_KEY":          "sk-env",
		"FOLIO_AI_WRITING_MODEL":    "writing-env",
		"FOLIO_AI_READING_PROVIDER": "local",
		"FOLIO_AI_READING_TIMEOUT":  "5s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	w, _ := c.AICategory("writing")
	if w.Model != "writing-env" || w.Origins["model"] != "env FOLIO_AI_WRITING_MODEL" || w.Provider != "openai" ||
		w.APIKey != "sk-env" || w.Source != config.Mixed {
		t.Errorf("writing: %+v", w)
	}
	r, _ := c.AICategory("reading")
	if r.Provider != "local" || r.Timeout != 5*time.Second || r.Source != config.Mixed {
		t.Errorf("reading: %+v", r)
	}
	a, _ := c.AICategory("attributes")
	if a.Source != config.Compat || a.Origins["api_key"] != "env FOLIO_AI_API_KEY" {
		t.Errorf("attributes: %+v", a)
	}
	if adv := w.LegacyAdvice(); !strings.Contains(adv, "api_key=env FOLIO_AI_API_KEY") || strings.Contains(adv, "FOLIO_AI_WRITING_MODEL") {
		t.Errorf("writing advice %q", adv)
	}
}

func TestInvalid(t *testing.T) {
	tests := []struct {
		file string
		env  map[string]string
		want string
	}{
		{file: "[ai.writng]\nmodel = \"x\"\n", want: "unknown key ai.writng"},
		{file: "[ai]\nprovider = \"claude\"\n", want: `provider "claude" must be local or openai (from [ai])`},
		{env: map[string]string{"FOLIO_AI_WRITING_PROVIDER": "openai"}, want: "ai writing: base_url is required"},
		{env: map[string]string{"FOLIO_AI_PROVIDER": "openai", "FOLIO_AI_BASE_URL": "http://x/v1"}, want: "model is required"},
		{env: map[string]string{"FOLIO_AI_TIMEOUT": "soon"}, want: "FOLIO_AI_TIMEOUT"},
		{file: "[ai.reading]\ndaily_tokens = -1\n", want: "daily_tokens must not be negative"},
		{file: "[checkpoint]\nidle = \"0s\"\n", want: "checkpoint.idle"},
		{file: "[ai\n", want: "read"},
		{file: "# " + strings.Repeat("x", config.MaxFileBytes) + "\n", want: "larger than 1048576 bytes"},
	}
	for _, tt := range tests {
		path := ""
		if tt.file != "" {
			path = write(t, tt.file)
		}
		_, err := config.Load(path, env(tt.env))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q %v: err = %v, want %q", tt.file, tt.env, err, tt.want)
		}
		if tt.want != "read" && !errors.Is(err, config.ErrInvalid) {
			t.Errorf("%v does not wrap ErrInvalid", err)
		}
	}
}

func TestSecretRedacted(t *testing.T) {
	s := config.Secret("sk-123")
	if s.String() != "****" {
		t.Fatal(s.String())
	}
	b, _ := s.MarshalText()
	if string(b) != "****" {
		t.Fatal(string(b))
	}
}

func TestAssistantSwitches(t *testing.T) {
	c, err := config.Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Assistant != config.DefaultAssistant() || !c.Assistant.Enabled || !c.Assistant.Section {
		t.Fatalf("default switches %+v, want all on", c.Assistant)
	}
	c, err = config.Load(write(t, "[assistant]\nenabled = false\nselection = false\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := config.DefaultAssistant()
	want.Enabled, want.Selection = false, false
	if c.Assistant != want {
		t.Fatalf("switches %+v, want %+v", c.Assistant, want)
	}
	if _, err := config.Load(write(t, "[assistant]\npersona = true\n"), env(nil)); err == nil || !strings.Contains(err.Error(), "assistant.persona") {
		t.Fatalf("an unknown switch must be named: %v", err)
	}
}

func TestPersonaAndPrivacySwitches(t *testing.T) {
	c, err := config.Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Persona != config.DefaultPersona() || !c.Persona.Enabled || !c.Persona.Memory {
		t.Fatalf("default persona switches %+v, want all on", c.Persona)
	}
	if c.Privacy.SendPrivateToProvider || c.Privacy.PrivateMemory {
		t.Fatalf("privacy defaults %+v, want all off", c.Privacy)
	}
	c, err = config.Load(write(t, "[persona]\nmemory = false\n[privacy]\nsend_private_to_provider = true\nprivate_memory = true\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Persona.Memory || !c.Persona.Learning || !c.Privacy.PrivateMemory {
		t.Fatalf("switches %+v %+v", c.Persona, c.Privacy)
	}
	_, err = config.Load(write(t, "[privacy]\nprivate_memory = true\n"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "send_private_to_provider") {
		t.Fatalf("private_memory without send_private_to_provider: %v", err)
	}
}

// TestStorageEngine: [storage] engine and dsn from the file and from
// FOLIO_STORAGE_*, the environment winning; the DSN's password is in no
// printed form of the configuration nor in any error about it.
func TestStorageEngine(t *testing.T) {
	c, err := config.Load("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Storage.Engine != config.EnginePebble || c.Storage.MaxConns != 8 || c.Storage.StatementTimeout != 30*time.Second {
		t.Fatalf("storage defaults: %+v", c.Storage)
	}
	const dsn = "postgres://folio:hunter2@db.internal:5432/folio"
	p := write(t, "[storage]\nengine = \"postgres\"\ndsn = \""+dsn+"\"\nmax_conns = 16\nstatement_timeout = \"5s\"\n")
	c, err = config.Load(p, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Storage.Engine != "postgres" || string(c.Storage.DSN) != dsn || c.Storage.MaxConns != 16 || c.Storage.StatementTimeout != 5*time.Second {
		t.Fatalf("storage from the file: %+v", c.Storage)
	}
	for _, s := range []string{fmt.Sprint(c.Storage), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c.Storage)} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("the DSN's password is printed: %s", s)
		}
	}
	if j, _ := json.Marshal(c.Storage); strings.Contains(string(j), "hunter2") {
		t.Errorf("the DSN's password is in JSON: %s", j)
	}
	c, err = config.Load("", env(map[string]string{"FOLIO_STORAGE_ENGINE": "postgres", "FOLIO_STORAGE_DSN": "host=/tmp dbname=x"}))
	if err != nil || c.Storage.Engine != "postgres" || c.Storage.DSN != "host=/tmp dbname=x" {
		t.Fatalf("storage from the environment: %+v, %v", c.Storage, err)
	}
	for _, tt := range []struct{ file, want string }{
		{"[storage]\nengine = \"postgres\"\n", "needs dsn"},
		{"[storage]\nengine = \"mysql\"\n", `engine "mysql"`},
		{"[storage]\nmax_conns = 0\n", "max_conns"},
		{"[storage]\nstatement_timeout = \"-1s\"\n", "statement_timeout"},
	} {
		_, err := config.Load(write(t, tt.file), env(nil))
		if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.file, err, tt.want)
		}
	}
}
