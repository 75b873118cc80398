package server

import (
	"context"
	"net/http"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/persona"
)

// The persona sources say beforehand what a generation would do with
// each one, in the words and with the switch a generation would answer:
// an unpublished source is refused; a private one is refused while the
// writing provider is external, and with the local provider is used for
// style but left out of memory while [privacy] private_memory is off. A
// public one has neither. The learning endpoint answers the version's
// rules with their counts.
func TestPersonaSourcesSayWhatGenerationWouldDo(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{personas: true})
	ae.personas.UseProvider(localNamed{}) // as the daemon on its default provider
	mk := func(title, visibility string) string {
		var v repo.VersionInfo
		ae.ok("POST", "/v1/docs", ae.a, CreateRequest{Attrs: flowdoc.Attributes{Title: title},
			Body: doc(para("s1", "我在2019年加入了星火公司，负责搜索。"), para("s2", "后来我在杭州住了五年。"))}, &v)
		if visibility != "" {
			ae.ok("POST", "/v1/docs/"+v.Doc+"/publish", ae.a, PublishRequest{Visibility: visibility}, nil)
		}
		return v.Doc
	}
	public, private, draft := mk("公开", "public"), mk("私密", "private"), mk("草稿", "")
	var p persona.Persona
	ae.ok("POST", "/v1/personas", ae.a, PersonaRequest{Name: "博客", Sources: []string{public, private, draft}}, &p)
	sources := func() map[string]PersonaSource {
		var out []PersonaSource
		ae.ok("GET", "/v1/personas/"+p.ID+"/sources", ae.a, nil, &out)
		m := map[string]PersonaSource{}
		for _, s := range out {
			m[s.Doc] = s
		}
		return m
	}
	s := sources()
	if s[public].Refused != nil || s[public].NoMemory != nil {
		t.Errorf("a public source has problems: %+v", s[public])
	}
	if r := s[draft].Refused; r == nil || r.Code != persona.CodeSourceUnpublished || r.Switch != "" {
		t.Errorf("an unpublished source: %+v", s[draft].Refused)
	}
	// The local provider: a private source is used, not for memory.
	if s[private].Refused != nil {
		t.Errorf("with the local provider a private source is refused: %+v", s[private].Refused)
	}
	if m := s[private].NoMemory; m == nil || m.Switch != "[privacy] private_memory" {
		t.Errorf("a private source's memory note: %+v", s[private].NoMemory)
	}
	// The prediction matches a generation: refused for the draft.
	var job persona.Job
	ae.ok("POST", "/v1/personas/"+p.ID+"/generate", ae.a, nil, &job)
	job, err := ae.personas.WaitJob(context.Background(), job.User, job.Task)
	if err != nil || job.Error == nil || job.Error.Code != persona.CodeSourceUnpublished {
		t.Fatalf("generation with an unpublished source: %+v %v", job, err)
	}
	ae.ok("PUT", "/v1/personas/"+p.ID+"/sources", ae.a, PersonaSourcesRequest{Sources: []string{public, private}}, nil)
	ae.ok("POST", "/v1/personas/"+p.ID+"/generate", ae.a, nil, &job)
	if job, err = ae.personas.WaitJob(context.Background(), job.User, job.Task); err != nil || job.Version != 1 {
		t.Fatalf("generation: %+v %v", job, err)
	}
	var l PersonaLearning
	ae.ok("GET", "/v1/personas/"+p.ID+"/learning", ae.a, nil, &l)
	if l.Version.Seq != 1 || l.Snapshot == nil || l.Snapshot.Persona != p.ID || l.Snapshot.Evaluator == "" {
		t.Fatalf("learning of version 1: %+v", l)
	}
	if code, body := ae.call("GET", "/v1/personas/"+p.ID+"/learning?version=x", ae.a, nil); code != http.StatusBadRequest {
		t.Errorf("learning?version=x: %d %s", code, body)
	}
	if code, _ := ae.call("GET", "/v1/personas/"+p.ID+"/learning", ae.b, nil); code != http.StatusNotFound {
		t.Errorf("another author's persona's learning: %d, want 404", code)
	}

	// An external writing provider: the private source is refused, naming
	// the switch that would allow it.
	ae.personas.UseProvider(fixedModel{})
	s = sources()
	r := s[private].Refused
	if r == nil || r.Code != persona.CodePrivateSource || r.Switch != "[privacy] send_private_to_provider" {
		t.Fatalf("a private source with an external provider: %+v", r)
	}
	ae.ok("POST", "/v1/personas/"+p.ID+"/generate", ae.a, nil, &job)
	job, err = ae.personas.WaitJob(context.Background(), job.User, job.Task)
	if err != nil || job.Error == nil || job.Error.Code != r.Code || job.Error.Message != r.Message {
		t.Fatalf("the generation answers %+v %v, the sources said %+v", job.Error, err, r)
	}
}

// localNamed is a provider named like the local one: it keeps private
// text in the process.
type localNamed struct{ fixedModel }

func (localNamed) Name() string { return llm.LocalName }

// POST …/activate makes an older version active again over HTTP; the move
// is listed, the versions are unchanged, and bad input is refused clearly.
func TestPersonaActivateOverHTTP(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{personas: true})
	ae.personas.UseProvider(localNamed{})
	var v repo.VersionInfo
	ae.ok("POST", "/v1/docs", ae.a, CreateRequest{Attrs: flowdoc.Attributes{Title: "公开"},
		Body: doc(para("s1", "我在2019年加入了星火公司，负责搜索。"))}, &v)
	ae.ok("POST", "/v1/docs/"+v.Doc+"/publish", ae.a, PublishRequest{Visibility: "public"}, nil)
	var p persona.Persona
	ae.ok("POST", "/v1/personas", ae.a, PersonaRequest{Name: "博客", Sources: []string{v.Doc}}, &p)
	for i := 1; i <= 2; i++ {
		var job persona.Job
		ae.ok("POST", "/v1/personas/"+p.ID+"/generate", ae.a, nil, &job)
		if job, err := ae.personas.WaitJob(context.Background(), job.User, job.Task); err != nil || job.Version != i {
			t.Fatalf("generation %d: %+v %v", i, job, err)
		}
	}
	ae.ok("POST", "/v1/personas/"+p.ID+"/activate", ae.a, PersonaActivateRequest{Version: 1}, &p)
	if p.Active != 1 || p.Versions != 2 {
		t.Fatalf("after activate: %+v", p)
	}
	var st struct {
		Version persona.Version `json:"version"`
	}
	ae.ok("GET", "/v1/personas/"+p.ID+"/style", ae.a, nil, &st)
	if st.Version.Seq != 1 {
		t.Fatalf("the style endpoint's default version is %d, want 1", st.Version.Seq)
	}
	var acts []persona.Activation
	ae.ok("GET", "/v1/personas/"+p.ID+"/activations", ae.a, nil, &acts)
	if len(acts) != 1 || acts[0].From != 2 || acts[0].To != 1 {
		t.Fatalf("activations %+v", acts)
	}
	if code, body := ae.call("POST", "/v1/personas/"+p.ID+"/activate", ae.a, PersonaActivateRequest{Version: 9}); code != http.StatusNotFound {
		t.Errorf("activate a missing version: %d %s", code, body)
	}
	if code, body := ae.call("POST", "/v1/personas/"+p.ID+"/activate", ae.a, PersonaActivateRequest{}); code != http.StatusBadRequest {
		t.Errorf("activate without a version: %d %s", code, body)
	}
	if code, _ := ae.call("POST", "/v1/personas/"+p.ID+"/activate", ae.b, PersonaActivateRequest{Version: 2}); code != http.StatusNotFound {
		t.Errorf("activate another author's persona: %d, want 404", code)
	}
}
