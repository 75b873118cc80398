package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/reference"
	"github.com/foliodev/folio/persona/source"
	"github.com/foliodev/folio/persona/style"
)

// ReferenceSource lists the reference candidates of a persona run: user's
// other published articles (package persona/content implements it).
type ReferenceSource interface {
	// Candidates returns user's published articles other than exclude;
	// private and password ones only when allowPrivate.
	Candidates(ctx context.Context, user, exclude string, allowPrivate bool) ([]reference.Candidate, error)
}

// Bounds of what a persona run gives the model.
const (
	maxPersonaRules     = 12
	maxPersonaPatterns  = 10
	maxLearningRules    = 20
	maxMemoryStatement  = 300
	maxReferenceExcerpt = 600
	maxNeighbourChars   = 1000
)

// PersonaPin is what a persona run pinned, recorded in the run: the
// version and each component's id (empty when its switch was off or the
// version has none), the memory retrieved (keys in rank order: what was
// provided, and the source article versions they came from) and the
// reference articles, each by version.
type PersonaPin struct {
	ID      string `json:"id" msgpack:"id"`
	Name    string `json:"name" msgpack:"name"`
	Version string `json:"version" msgpack:"version"`
	Seq     int    `json:"seq" msgpack:"seq"`
	// Style is the style profile id; "" with [persona] style off.
	Style string `json:"style,omitempty" msgpack:"style,omitempty"`
	// Learning is the learning snapshot id, LearningRules the ids of its
	// active rules given to the model.
	Learning      string   `json:"learning,omitempty" msgpack:"learning,omitempty"`
	LearningRules []string `json:"learningRules,omitempty" msgpack:"lrules,omitempty"`
	// Memory is the memory snapshot id; MemoryKeys the items provided,
	// in rank order; MemoryMatched how many items matched the query.
	Memory        string   `json:"memory,omitempty" msgpack:"memory,omitempty"`
	MemoryKeys    []string `json:"memoryKeys,omitempty" msgpack:"mkeys,omitempty"`
	MemoryMatched uint64   `json:"memoryMatched,omitempty" msgpack:"mmatched,omitempty"`
	// MemoryWithheld counts retrieved items left out because their
	// evidence is a private source and [privacy] private_memory is off.
	MemoryWithheld int `json:"memoryWithheld,omitempty" msgpack:"mwithheld,omitempty"`
	// MemorySources are the source article versions the provided items
	// came from (their evidence), in order of first use, each with the
	// keys of the items it backs.
	MemorySources []MemorySourcePin `json:"memorySources,omitempty" msgpack:"msources,omitempty"`
	References    []ReferencePin    `json:"references,omitempty" msgpack:"refs,omitempty"`
}

// MemorySourcePin is a source article version that memory given to a
// run came from: the document, its version (content id and label) and
// the keys of the provided items whose evidence it holds.
type MemorySourcePin struct {
	Doc     string           `json:"doc" msgpack:"doc"`
	Version source.VersionID `json:"version" msgpack:"version"`
	Label   string           `json:"label" msgpack:"label"`
	Items   []string         `json:"items" msgpack:"items"`
}

// addMemorySource records that item key came from evidence e.
func (p *PersonaPin) addMemorySource(key string, e source.Evidence) {
	for i := range p.MemorySources {
		ms := &p.MemorySources[i]
		if ms.Doc == e.Doc && ms.Version == e.Version {
			if n := len(ms.Items); n == 0 || ms.Items[n-1] != key {
				ms.Items = append(ms.Items, key)
			}
			return
		}
	}
	p.MemorySources = append(p.MemorySources, MemorySourcePin{Doc: e.Doc, Version: e.Version, Label: e.Label, Items: []string{key}})
}

// ReferencePin is a reference article as a run pinned it.
type ReferencePin struct {
	Doc     string           `json:"doc" msgpack:"doc"`
	Version source.VersionID `json:"version" msgpack:"version"`
	Label   string           `json:"label" msgpack:"label"`
	Title   string           `json:"title" msgpack:"title"`
	Score   float64          `json:"score" msgpack:"score"`
	Reasons []string         `json:"reasons,omitempty" msgpack:"reasons,omitempty"`
}

// personaInput is the frozen persona context in a run's task payload:
// exactly what the model is given, and what grounding and closeness are
// computed against.
type personaInput struct {
	Name          string                   `msgpack:"name"`
	Seq           int                      `msgpack:"seq"`
	Style         *styleInput              `msgpack:"style,omitempty"`
	Learning      []string                 `msgpack:"learn,omitempty"`
	Memory        []GroundingMemory        `msgpack:"mem,omitempty"`
	References    []referenceInput         `msgpack:"refs,omitempty"`
	Neighbours    string                   `msgpack:"nb,omitempty"`
	FunctionWords *style.FunctionWordStats `msgpack:"fw,omitempty"`
	// Private are the private and password sources of the version: the
	// run checks the switch again before anything reaches the provider
	// (the configuration may have changed since the request).
	Private []string `msgpack:"private,omitempty"`
}

type styleInput struct {
	Profile  string   `msgpack:"id"`
	Summary  string   `msgpack:"summary"`
	Rules    []string `msgpack:"rules"`
	Patterns []string `msgpack:"patterns"`
}

type referenceInput struct {
	Doc     string `msgpack:"doc"`
	Label   string `msgpack:"label"`
	Title   string `msgpack:"title"`
	Excerpt string `msgpack:"excerpt"`
}

// RunGrounding is a persona run's grounding record: the verdict on the
// answer that was kept (or on the last one, when the run failed), whether
// a retry was needed, and the memory provided and used.
type RunGrounding struct {
	Pass    bool `json:"pass" msgpack:"pass"`
	Retried bool `json:"retried,omitempty" msgpack:"retried,omitempty"`
	Checked int  `json:"checked" msgpack:"checked"`
	// Claims are the unsupported claims of the last answer checked
	// (also the first answer's, named in the retry, when Retried).
	Claims      []GroundingClaim `json:"claims,omitempty" msgpack:"claims,omitempty"`
	RetryClaims []GroundingClaim `json:"retryClaims,omitempty" msgpack:"rclaims,omitempty"`
	// MemoryProvided counts the items given to the model; UsedMemory
	// are the keys of those that support a claim the input alone does
	// not.
	MemoryProvided int      `json:"memoryProvided" msgpack:"mprov"`
	UsedMemory     []string `json:"usedMemory,omitempty" msgpack:"mused,omitempty"`
	References     int      `json:"references" msgpack:"refs"`
}

// Line is the assistant message's summary of a persona run.
func (g RunGrounding) Line() string {
	return fmt.Sprintf("自动参考 %d 篇 · 使用 Memory %d 条", g.References, len(g.UsedMemory))
}

// CodeGroundingFailed (kind invalid): a persona run's answer, after one
// retry, still states first-person facts nothing supports.
const CodeGroundingFailed = "grounding_failed"

// personaFor pins what a persona run of a on doc may use: the persona's
// active version and, each only with its switch on, the style profile,
// the active learning rules and the memory retrieved for the request,
// and up to 3 reference articles. The privacy rule is checked here, at
// the request, against the visibility the version pinned: a private or
// password source refuses the run unless the writing provider is the
// local one or send_private_to_provider is on (llm.PrivateAllowed);
// memory whose evidence is such a source is left out without
// private_memory.
func (s *Service) personaFor(ctx context.Context, a Actor, id, instr string, snap repo.Snapshot, r resolved, anchorIDs []string) (*PersonaPin, *personaInput, error) {
	if s.personas == nil {
		return nil, nil, errs.C(errs.Disabled, CodePersonaUnavailable, "this server runs the writing assistant without personas")
	}
	neighbours := neighbourText(snap.Body, anchorIDs)
	query := instr + "\n" + r.text + "\n" + neighbours
	rc, err := s.personas.Context(ctx, a.UserID, id, query, snap.Info.Doc)
	if err != nil {
		return nil, nil, err
	}
	sw := s.personas.Switches()
	allowPrivate := s.privateAllowed(sw)
	private := map[string]bool{}
	for _, sp := range rc.Version.Sources {
		if sp.Visibility == persona.VisibilityPrivate || sp.Visibility == persona.VisibilityPassword {
			if !allowPrivate {
				return nil, nil, errs.C(errs.Forbidden, persona.CodePrivateSource,
					"persona %s version %d was built from %s source %s and the writing provider is external; using it needs [privacy] send_private_to_provider = true",
					rc.Persona.ID, rc.Version.Seq, sp.Visibility, sp.Pin.Doc)
			}
			private[sp.Pin.Doc] = true
		}
	}
	pin := &PersonaPin{ID: rc.Persona.ID, Name: rc.Persona.Name, Version: rc.Version.ID, Seq: rc.Version.Seq}
	in := &personaInput{Name: rc.Persona.Name, Seq: rc.Version.Seq, Neighbours: neighbours}
	for d := range private {
		in.Private = append(in.Private, d)
	}
	sort.Strings(in.Private)
	if p := rc.Style; p != nil {
		pin.Style = rc.Version.Style
		st := &styleInput{Profile: rc.Version.Style, Summary: p.Summary}
		rules := append([]style.Rule(nil), p.Rules...)
		sort.SliceStable(rules, func(i, j int) bool { return rules[i].Weight > rules[j].Weight })
		for i, rule := range rules {
			if i == maxPersonaRules {
				break
			}
			st.Rules = append(st.Rules, rule.Statement)
		}
		for i, pt := range p.Patterns {
			if i == maxPersonaPatterns {
				break
			}
			st.Patterns = append(st.Patterns, pt.Text)
		}
		in.Style = st
		fw := p.FunctionWords
		in.FunctionWords = &fw
	}
	if sw.Learning && rc.Version.Learning != "" {
		// The snapshot in force is pinned whether or not it has active
		// rules: "none active" is what explains a run of a young persona.
		pin.Learning = rc.Version.Learning
		for i, rule := range rc.Learning {
			if i == maxLearningRules {
				break
			}
			pin.LearningRules = append(pin.LearningRules, rule.ID)
			in.Learning = append(in.Learning, rule.Statement)
		}
	}
	if sw.Memory {
		pin.Memory, pin.MemoryMatched = rc.Memory.Snapshot, rc.Memory.Matched
	}
	for _, it := range rc.Memory.Items {
		if withheld(it.Docs(), private, allowPrivate && sw.PrivateMemory) {
			pin.MemoryWithheld++
			continue
		}
		st, _ := clipRunes(it.Statement, maxMemoryStatement)
		pin.MemoryKeys = append(pin.MemoryKeys, it.Key)
		for _, e := range it.Evidence {
			pin.addMemorySource(it.Key, e)
		}
		in.Memory = append(in.Memory, GroundingMemory{Key: it.Key, Statement: st})
	}
	if s.refs != nil {
		cands, err := s.refs.Candidates(ctx, a.UserID, snap.Info.Doc, allowPrivate)
		if err != nil {
			return nil, nil, err
		}
		at := snap.Attrs
		ranked := reference.Rank(reference.Request{Doc: snap.Info.Doc, Title: at.Title, Summary: at.Summary, Category: at.Category,
			Tags: at.Tags, Instruction: instr, Target: r.text, Context: neighbours}, cands, reference.DefaultLimit)
		for _, rk := range ranked {
			pin.References = append(pin.References, ReferencePin{Doc: rk.Doc, Version: rk.Pin.Version, Label: rk.Pin.Label,
				Title: rk.Title, Score: rk.Score, Reasons: rk.Reasons})
			ex, _ := clipRunes(rk.Text, maxReferenceExcerpt)
			in.References = append(in.References, referenceInput{Doc: rk.Doc, Label: rk.Pin.Label, Title: rk.Title, Excerpt: ex})
		}
	}
	return pin, in, nil
}

// privateAllowed is the privacy rule (llm.PrivateAllowed) for the
// writing provider: private and password sources may reach it when it is
// the local one or [privacy] send_private_to_provider is on.
func (s *Service) privateAllowed(sw persona.Switches) bool {
	var p llm.Provider
	if rt, ok := s.gw.Route(quota.Writing); ok {
		p = rt.Provider
	}
	return llm.PrivateAllowed(p, sw.SendPrivate)
}

// checkPrivate refuses, when a run starts, a frozen persona context
// built from private or password sources that the privacy rule no longer
// allows.
func (s *Service) checkPrivate(in *personaInput) error {
	if in == nil || len(in.Private) == 0 {
		return nil
	}
	if s.personas == nil || !s.privateAllowed(s.personas.Switches()) {
		return errs.C(errs.Forbidden, persona.CodePrivateSource,
			"the persona version of this run was built from private or password sources (%s), which [privacy] send_private_to_provider no longer allows",
			strings.Join(in.Private, ", "))
	}
	return nil
}

// withheld reports whether a memory item must not reach the provider: one
// of its evidence documents is a private source and private memory is
// not allowed now (the privacy rule and [privacy] private_memory).
func withheld(docs []string, private map[string]bool, allowed bool) bool {
	if allowed {
		return false
	}
	for _, d := range docs {
		if private[d] {
			return true
		}
	}
	return false
}

// neighbourText is the text of the top-level blocks just before and after
// the anchors, at most maxNeighbourChars.
func neighbourText(body flowdoc.Document, anchorIDs []string) string {
	if len(anchorIDs) == 0 {
		return ""
	}
	first, last := -1, -1
	in := map[string]bool{}
	for _, id := range anchorIDs {
		in[id] = true
	}
	for i, b := range body.Blocks {
		if in[b.ID] {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return ""
	}
	var parts []string
	if first > 0 {
		parts = append(parts, blockText(body.Blocks[first-1]))
	}
	if last+1 < len(body.Blocks) {
		parts = append(parts, blockText(body.Blocks[last+1]))
	}
	out, _ := clipRunes(strings.TrimSpace(strings.Join(parts, "\n")), maxNeighbourChars)
	return out
}

// opsText is the text an answer's operations write.
func opsText(ops []flowdoc.Op) string {
	var parts []string
	for _, op := range ops {
		if len(op.RichText) > 0 {
			parts = append(parts, flowdoc.PlainText(op.RichText))
		}
		if op.Block != nil {
			parts = append(parts, blockText(*op.Block))
		}
		for _, b := range op.Blocks {
			parts = append(parts, blockText(b))
		}
		if op.Document != nil {
			for _, b := range op.Document.Blocks {
				parts = append(parts, blockText(b))
			}
		}
	}
	return strings.Join(parts, "\n")
}

// groundingInput is what the model was given about the article: the
// instruction, the text in scope and its neighbours.
func groundInput(pl payload, r resolved) []string {
	in := []string{pl.Instruction, r.text}
	if pl.Persona != nil {
		in = append(in, pl.Persona.Neighbours)
	}
	return in
}

// personaMessage is the system message of a persona run.
func personaMessage(in *personaInput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Persona «%s» (version %d). Write as this author would, and never invent anything about them.\n", in.Name, in.Seq)
	if st := in.Style; st != nil {
		fmt.Fprintf(&b, "\n## Style profile %s\n%s\n", st.Profile, st.Summary)
		for _, r := range st.Rules {
			fmt.Fprintf(&b, "- %s\n", r)
		}
		if len(st.Patterns) > 0 {
			fmt.Fprintf(&b, "Characteristic expressions: %s\n", strings.Join(st.Patterns, "、"))
		}
	}
	if len(in.Learning) > 0 {
		b.WriteString("\n## What the author accepted and rejected before\n")
		for _, r := range in.Learning {
			fmt.Fprintf(&b, "- %s\n", r)
		}
	}
	if len(in.Memory) > 0 {
		b.WriteString("\n## The author's memory: facts about them you may use\n")
		for _, m := range in.Memory {
			fmt.Fprintf(&b, "- [%s] %s\n", m.Key, m.Statement)
		}
	}
	if len(in.References) > 0 {
		b.WriteString("\n## Reference articles by the author (for voice and consistency; do not copy)\n")
		for _, r := range in.References {
			fmt.Fprintf(&b, "### %s (%s@%s)\n%s\n", r.Title, r.Doc, r.Label, r.Excerpt)
		}
	}
	if in.Neighbours != "" {
		fmt.Fprintf(&b, "\n## Text around the scope\n%s\n", in.Neighbours)
	}
	b.WriteString("\nEvery first-person claim — identity, experience, time, place, number, outcome — must come from the article, the instruction or the memory above, exactly as given. State nothing else about the author.")
	return b.String()
}

// closeness scores the text an answer writes against the persona's
// style profile (Burrows' Delta over its function words).
func closeness(in *personaInput, ops []flowdoc.Op) *style.Closeness {
	if in == nil || in.FunctionWords == nil {
		return nil
	}
	p := style.Profile{FunctionWords: *in.FunctionWords}
	c := p.Close(opsText(ops))
	return &c
}

// ground checks a persona run's answer (Ground over the text its
// operations write, against the input and the memory provided). An
// answer with unsupported first-person claims is asked again once, with
// the claims named; if the second answer still has some, the run fails
// with grounding_failed and no suggestion. Both calls' usage is kept:
// deferred to the success batch when the run succeeds, booked at once
// when it fails.
func (s *Service) ground(ctx context.Context, req Request, validate func(json.RawMessage) error, out *StructuredResult,
	cand *candidate, pl payload, r resolved) (*StructuredResult, *RunGrounding, error) {
	in := pl.Persona
	input := groundInput(pl, r)
	rg := &RunGrounding{MemoryProvided: len(in.Memory), References: len(in.References)}
	gr := Ground(opsText(cand.ops), input, in.Memory)
	rg.Checked = gr.Checked
	if gr.Pass {
		rg.Pass, rg.UsedMemory = true, gr.UsedMemory
		return out, rg, nil
	}
	rg.Retried, rg.RetryClaims = true, gr.Claims
	retry := req
	retry.Messages = append(append([]llm.Message(nil), req.Messages...),
		llm.Message{Role: llm.Assistant, Content: clip(out.Text, 8000)},
		llm.Message{Role: llm.User, Content: gr.RetryNote()})
	// Its own usage event ids: the retry's calls are not the first ones.
	retry.Trace.TaskID += "/grounding"
	second, err := s.gw.Structured(ctx, retry, validate)
	if second == nil {
		second = &StructuredResult{}
	}
	second.Events = append(append([]quota.Event(nil), out.Events...), second.Events...)
	second.Usage.Input += out.Usage.Input
	second.Usage.Output += out.Usage.Output
	second.Usage.Total += out.Usage.Total
	if err != nil {
		s.bookNow(out.Events) // the failed call booked its own
		rg.Claims = gr.Claims
		return second, rg, err
	}
	gr = Ground(opsText(cand.ops), input, in.Memory)
	rg.Checked = gr.Checked
	if gr.Pass {
		rg.Pass, rg.UsedMemory = true, gr.UsedMemory
		return second, rg, nil
	}
	rg.Claims = gr.Claims
	s.bookNow(second.Events)
	return second, rg, task.Permanent(errs.C(errs.Invalid, CodeGroundingFailed,
		"the answer states first-person facts that neither the article nor the persona's memory supports, also after a retry: %s",
		claimList(gr.Claims)))
}

func claimList(cs []GroundingClaim) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%q (%s)", c.Text, strings.Join(c.Unsupported, "; ")))
	}
	return strings.Join(parts, ", ")
}

// bookNow books deferred usage events of a run that will not succeed.
func (s *Service) bookNow(evs []quota.Event) {
	for _, ev := range evs {
		s.ledger.BookSafe(ev)
	}
}

// keepGrounding remembers a failed grounding for the transition that
// fails the run.
func (s *Service) keepGrounding(t task.ID, g RunGrounding) {
	s.errMu.Lock()
	s.grounding[t] = g
	s.errMu.Unlock()
}

func (s *Service) takeGrounding(t task.ID) *RunGrounding {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	g, ok := s.grounding[t]
	if !ok {
		return nil
	}
	delete(s.grounding, t)
	return &g
}
