package style

import (
	"errors"
	"fmt"

	"github.com/foliodev/folio/persona/source"
)

// Versions of what builds a profile. A profile records them, so a later
// learner never reinterprets an old profile.
const (
	// LearnerVersion names the deterministic feature extractor.
	LearnerVersion = "folio-style/1"
	// Format is the profile's schema version.
	Format = 1
)

// The dimensions, in profile order.
const (
	DimLanguage  = "language"
	DimSyntax    = "syntax"
	DimParagraph = "paragraph"
	DimStructure = "structure"
	DimNarrative = "narrative"
	DimFormat    = "format"
)

// Dimensions lists the dimension names in order.
var Dimensions = []string{DimLanguage, DimSyntax, DimParagraph, DimStructure, DimNarrative, DimFormat}

// Profile is one style profile version: what the deterministic learner
// measured in the pinned sources, every claim with its evidence, and
// optionally prose a model added later. The measured part is never
// changed by prose: Prose is a separate field whose type has no place
// for evidence, and WithProse refuses prose about rules that do not
// exist.
type Profile struct {
	Format  int          `json:"format" msgpack:"format"`
	Learner string       `json:"learner" msgpack:"learner"`
	Sources []source.Pin `json:"sources" msgpack:"sources"`

	// Summary is the learner's own one-paragraph description, built from
	// the rules (deterministic).
	Summary       string        `json:"summary" msgpack:"summary"`
	Dimensions    []Dimension   `json:"dimensions" msgpack:"dims"`
	Rules         []Rule        `json:"rules" msgpack:"rules"`
	Patterns      []Pattern     `json:"patterns" msgpack:"patterns"`
	Uncertainties []Uncertainty `json:"uncertainties" msgpack:"unc"`
	// FunctionWords is the author's function-word statistics, the
	// reference of Delta.
	FunctionWords FunctionWordStats `json:"functionWords" msgpack:"fw"`

	// Prose is what a model provider added: optional, never evidence.
	Prose *Prose `json:"prose,omitempty" msgpack:"prose,omitempty"`
}

// Dimension groups measured features.
type Dimension struct {
	Name     string    `json:"name" msgpack:"name"`
	Features []Feature `json:"features" msgpack:"features"`
}

// Feature is one measurement over the sources.
type Feature struct {
	Name string `json:"name" msgpack:"name"`
	// Value is the corpus value (a rate over all sources together, or
	// the median for length features).
	Value float64 `json:"value" msgpack:"value"`
	Unit  string  `json:"unit" msgpack:"unit"`
	// Label is a categorical value (the primary language).
	Label string `json:"label,omitempty" msgpack:"label,omitempty"`
	// Percentiles of a length distribution (p10, p25, p50, p75, p90).
	Percentiles []float64 `json:"percentiles,omitempty" msgpack:"pct,omitempty"`
	// PerSource is the value in each source, in Sources order.
	PerSource []float64         `json:"perSource,omitempty" msgpack:"per,omitempty"`
	Evidence  []source.Evidence `json:"evidence" msgpack:"ev"`
}

// Rule is a weighted statement about the author's style, derived from
// features. Weight is the share of sources in which it holds (0..1).
type Rule struct {
	ID        string            `json:"id" msgpack:"id"`
	Dimension string            `json:"dimension" msgpack:"dim"`
	Statement string            `json:"statement" msgpack:"stmt"`
	Weight    float64           `json:"weight" msgpack:"weight"`
	Features  []string          `json:"features" msgpack:"features"`
	Evidence  []source.Evidence `json:"evidence" msgpack:"ev"`
}

// Pattern is a representative expression: a characteristic n-gram or a
// sentence opening found in at least two sources.
type Pattern struct {
	Kind     string            `json:"kind" msgpack:"kind"` // ngram | opening
	Text     string            `json:"text" msgpack:"text"`
	Count    int               `json:"count" msgpack:"count"`
	Sources  int               `json:"sources" msgpack:"sources"`
	Evidence []source.Evidence `json:"evidence" msgpack:"ev"`
}

// Uncertainty says what the profile cannot be sure of, and why.
type Uncertainty struct {
	Topic    string            `json:"topic" msgpack:"topic"`
	Reason   string            `json:"reason" msgpack:"reason"`
	Evidence []source.Evidence `json:"evidence" msgpack:"ev"`
}

// Prose is a model's description of the profile. It may rephrase the
// summary and explain rules (by rule id); it cannot remove, replace or
// add evidence, rules or features.
type Prose struct {
	Provider string            `json:"provider" msgpack:"provider"`
	Model    string            `json:"model" msgpack:"model"`
	Prompt   string            `json:"prompt" msgpack:"prompt"` // prompt name and version
	Summary  string            `json:"summary" msgpack:"summary"`
	Rules    map[string]string `json:"rules,omitempty" msgpack:"rules,omitempty"`
}

// Errors.
var (
	// ErrNoEvidence is returned by Validate for a claim without evidence.
	ErrNoEvidence = errors.New("style: a claim has no evidence")
	// ErrProse is returned by WithProse for prose about unknown rules.
	ErrProse = errors.New("style: prose names a rule the profile does not have")
	// ErrNoSources is returned by Build without any source.
	ErrNoSources = errors.New("style: a profile needs at least one source with text")
)

// Validate checks the profile's invariants: every feature, rule, pattern
// and uncertainty has evidence, every piece of evidence names a pinned
// source, and prose names only existing rules.
func (p *Profile) Validate() error {
	pinned := map[source.VersionID]bool{}
	for _, s := range p.Sources {
		pinned[s.Version] = true
	}
	check := func(what string, ev []source.Evidence) error {
		if len(ev) == 0 {
			return fmt.Errorf("%w: %s", ErrNoEvidence, what)
		}
		for _, e := range ev {
			if !pinned[e.Version] {
				return fmt.Errorf("style: %s cites %s, which is not a pinned source", what, e.Version.Short())
			}
		}
		return nil
	}
	for _, d := range p.Dimensions {
		for _, f := range d.Features {
			if err := check("feature "+d.Name+"."+f.Name, f.Evidence); err != nil {
				return err
			}
		}
	}
	for _, r := range p.Rules {
		if err := check("rule "+r.ID, r.Evidence); err != nil {
			return err
		}
	}
	for _, pt := range p.Patterns {
		if err := check("pattern "+pt.Text, pt.Evidence); err != nil {
			return err
		}
	}
	for _, u := range p.Uncertainties {
		if err := check("uncertainty "+u.Topic, u.Evidence); err != nil {
			return err
		}
	}
	if p.Prose != nil {
		return p.checkProse(*p.Prose)
	}
	return nil
}

func (p *Profile) checkProse(pr Prose) error {
	for id := range pr.Rules {
		if p.Rule(id) == nil {
			return fmt.Errorf("%w: %q", ErrProse, id)
		}
	}
	return nil
}

// Rule returns the rule with id, or nil.
func (p *Profile) Rule(id string) *Rule {
	for i := range p.Rules {
		if p.Rules[i].ID == id {
			return &p.Rules[i]
		}
	}
	return nil
}

// Feature returns dimension dim's feature name, or nil.
func (p *Profile) Feature(dim, name string) *Feature {
	for i := range p.Dimensions {
		if p.Dimensions[i].Name != dim {
			continue
		}
		for j := range p.Dimensions[i].Features {
			if p.Dimensions[i].Features[j].Name == name {
				return &p.Dimensions[i].Features[j]
			}
		}
	}
	return nil
}

// WithProse returns a copy of p with prose attached. The measured part
// (features, rules, patterns, uncertainties and all their evidence) is
// shared unchanged: prose can only add words.
func (p Profile) WithProse(pr Prose) (Profile, error) {
	if err := p.checkProse(pr); err != nil {
		return Profile{}, err
	}
	p.Prose = &pr
	return p, nil
}
