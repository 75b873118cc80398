package learning

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodev/folio/persona/source"
)

// EvaluatorVersion names the rule detectors and the activation rule.
const EvaluatorVersion = "folio-learning/1"

// Observation kinds. Accepted and rejected are an author's decisions on
// a suggestion; edited_after_accept is the author changing, before the
// next checkpoint, a block an accepted suggestion produced; manual_edit
// is any other edit by hand.
const (
	KindAccepted          = "accepted"
	KindRejected          = "rejected"
	KindEditedAfterAccept = "edited_after_accept"
	KindManualEdit        = "manual_edit"
)

// Activation thresholds (DESIGN.md §7).
const (
	MinPositive      = 3
	MinObservations  = 4
	MinConfidence    = 0.7
	maxEvidenceKeys  = 10
	changeThreshold  = 0.10 // a length change counts from 10%
	sentenceShrinkBy = 0.15 // a sentence-length change counts from 15%
)

// Errors.
var (
	// ErrNoPersona: learning is always persona-scoped; a snapshot without
	// a persona is refused.
	ErrNoPersona = errors.New("learning: a learning snapshot must belong to a persona")
	// ErrForeign: an observation of another persona (or of none) was
	// given to a persona's snapshot.
	ErrForeign = errors.New("learning: observation does not belong to this persona")
)

// Edit is one before/after pair of text: what a suggestion changed
// (accepted, rejected) or what the author changed by hand
// (edited_after_accept: the produced text, then the sealed text).
type Edit struct {
	Before string `json:"before" msgpack:"b"`
	After  string `json:"after" msgpack:"a"`
}

// Observation is an immutable fact about an author's decision, as the
// writing assistant recorded it, with the text it was about.
type Observation struct {
	// Key identifies the observation (the assistant's record key).
	Key        string `json:"key" msgpack:"key"`
	Kind       string `json:"kind" msgpack:"kind"`
	User       string `json:"user" msgpack:"user"`
	Persona    string `json:"persona" msgpack:"persona"`
	Suggestion string `json:"suggestion,omitempty" msgpack:"sugg,omitempty"`
	Doc        string `json:"doc" msgpack:"doc"`
	Time       int64  `json:"time" msgpack:"time"`
	Edits      []Edit `json:"edits" msgpack:"edits"`
}

// Reader reads the observations the writing assistant recorded. The
// integration adapts the assistant's observation table to it (persona
// does not import assistant: they are siblings).
type Reader interface {
	// Observations calls fn for each observation of runs made with
	// persona by user, in a stable order (the same every call on the same
	// data). It returns fn's first error, or the reader's.
	Observations(ctx context.Context, user, persona string, fn func(Observation) error) error
}

// RuleStat is one learned rule's evaluation.
type RuleStat struct {
	ID        string `json:"id" msgpack:"id"`
	Statement string `json:"statement" msgpack:"stmt"`
	Positive  int    `json:"positive" msgpack:"pos"`
	Negative  int    `json:"negative" msgpack:"neg"`
	// Manual counts hand edits in the rule's direction: recorded, never
	// counted as positive.
	Manual     int     `json:"manual" msgpack:"manual"`
	Confidence float64 `json:"confidence" msgpack:"conf"`
	Active     bool    `json:"active" msgpack:"active"`
	// Evidence are the keys of the observations counted (at most 10).
	Evidence []string `json:"evidence" msgpack:"ev"`
}

// Snapshot is a persona's learning: rebuilt only when a persona version
// is generated, from all its observations.
type Snapshot struct {
	User         string     `json:"user" msgpack:"user"`
	Persona      string     `json:"persona" msgpack:"persona"`
	Evaluator    string     `json:"evaluator" msgpack:"evaluator"`
	Observations int        `json:"observations" msgpack:"obs"`
	ManualEdits  int        `json:"manualEdits" msgpack:"manual"`
	Rules        []RuleStat `json:"rules" msgpack:"rules"`
}

// Active returns the active rules.
func (s Snapshot) Active() []RuleStat {
	var out []RuleStat
	for _, r := range s.Rules {
		if r.Active {
			out = append(out, r)
		}
	}
	return out
}

// Confidence is the posterior mean of a Beta(1, 1) prior updated with the
// observations (Laplace's rule of succession): (positive + 1) / (n + 2).
//
// It is chosen over a Wilson lower bound because the thresholds are
// small by design: with n = 4, Wilson's 95% lower bound is at most 0.51
// even for 4 of 4, so "confidence >= 0.7" would need about a dozen
// unanimous observations and the other two thresholds would never
// matter. The posterior mean with the uniform prior makes all three
// meaningful together: 4 of 4 (0.83), 4 of 5 (0.71) and 6 of 8 (0.70)
// activate; 3 of 4 (0.67) and 5 of 7 (0.67) do not.
func Confidence(positive, n int) float64 {
	return float64(positive+1) / float64(n+2)
}

// activates applies the thresholds in integers, so that 6 of 8 (exactly
// 0.7) is not lost to rounding.
func activates(pos, n int) bool {
	return pos >= MinPositive && n >= MinObservations && (pos+1)*10 >= 7*(n+2)
}

// Build evaluates the persona's observations into a snapshot. It is
// deterministic. It refuses a snapshot without user or persona
// (ErrNoPersona) and any observation of another user or persona
// (ErrForeign): nothing learned for one persona is ever used by another,
// and nothing global is ever written.
//
// Counting, per rule (detectors): an accepted suggestion whose edits
// move in the rule's direction is positive, one that moves against it
// negative; a rejected suggestion that moves in the rule's direction is
// negative (a rejection says nothing about the opposite); an
// edited_after_accept that moves against the rule (the author undid it)
// is negative, and one that moves in its direction — like every
// manual_edit — is only recorded (Manual): "what the author changed by
// hand" does not say why, so it never becomes a preference on its own.
func Build(user, persona string, obs []Observation) (Snapshot, error) {
	if user == "" || persona == "" {
		return Snapshot{}, ErrNoPersona
	}
	snap := Snapshot{User: user, Persona: persona, Evaluator: EvaluatorVersion}
	stats := make([]RuleStat, len(detectors))
	for i, d := range detectors {
		stats[i] = RuleStat{ID: d.id, Statement: d.statement}
	}
	for _, o := range obs {
		if o.User != user || o.Persona != persona {
			return Snapshot{}, fmt.Errorf("%w: %s is of persona %q of %q", ErrForeign, o.Key, o.Persona, o.User)
		}
		snap.Observations++
		if o.Kind == KindManualEdit {
			snap.ManualEdits++
		}
		for i, d := range detectors {
			dir := direction(d, o.Edits)
			if dir == 0 {
				continue
			}
			st := &stats[i]
			counted := true
			switch {
			case o.Kind == KindAccepted && dir > 0:
				st.Positive++
			case o.Kind == KindAccepted && dir < 0:
				st.Negative++
			case o.Kind == KindRejected && dir > 0:
				st.Negative++
			case o.Kind == KindEditedAfterAccept && dir < 0:
				st.Negative++
			case (o.Kind == KindEditedAfterAccept || o.Kind == KindManualEdit) && dir > 0:
				st.Manual++
				counted = false
			default:
				counted = false
			}
			if counted && len(st.Evidence) < maxEvidenceKeys {
				st.Evidence = append(st.Evidence, o.Key)
			}
		}
	}
	for _, st := range stats {
		n := st.Positive + st.Negative
		if n == 0 && st.Manual == 0 {
			continue
		}
		st.Confidence = math.Round(Confidence(st.Positive, n)*1000) / 1000
		st.Active = activates(st.Positive, n)
		snap.Rules = append(snap.Rules, st)
	}
	sort.SliceStable(snap.Rules, func(i, j int) bool { return snap.Rules[i].ID < snap.Rules[j].ID })
	return snap, nil
}

// Collect reads every observation of the persona through r.
func Collect(ctx context.Context, r Reader, user, persona string, limit int) ([]Observation, error) {
	if user == "" || persona == "" {
		return nil, ErrNoPersona
	}
	var out []Observation
	err := r.Observations(ctx, user, persona, func(o Observation) error {
		if limit > 0 && len(out) >= limit {
			return errLimit
		}
		out = append(out, o)
		return nil
	})
	if errors.Is(err, errLimit) {
		err = nil
	}
	return out, err
}

var errLimit = errors.New("learning: limit reached")

// --- detectors ---

// detector measures one property of a text; a rule prefers it to go
// down (sign -1) or up (sign +1).
type detector struct {
	id, statement string
	measure       func(string) float64
	// relative changes below threshold are noise
	threshold float64
	up        bool
}

var detectors = []detector{
	{id: "concise", statement: "Prefers shorter wording (drops at least 10% of the characters).", measure: chars, threshold: changeThreshold},
	{id: "shorter_sentences", statement: "Prefers shorter sentences.", measure: meanSentence, threshold: sentenceShrinkBy},
	{id: "fewer_fillers", statement: "Removes filler words (其实, 基本上, 非常, 进行, very, really, actually…).", measure: fillers},
	{id: "active_voice", statement: "Prefers the active voice (fewer 被 / was … by).", measure: passives},
	{id: "fullwidth_punctuation", statement: "Uses full-width punctuation in Chinese text.", measure: halfWidthAfterCJK},
	{id: "cjk_latin_space", statement: "Puts a space between Chinese and Latin letters or digits.", measure: spacedShare, up: true},
	{id: "fewer_exclamations", statement: "Avoids exclamation marks.", measure: exclamations},
}

// direction is +1 when the edits move the measure the rule's way, -1
// when they move it the other way, 0 when they do not change it or
// disagree among themselves.
func direction(d detector, edits []Edit) int {
	up, down := false, false
	for _, e := range edits {
		b, a := d.measure(e.Before), d.measure(e.After)
		if d.threshold > 0 {
			if b == 0 {
				continue
			}
			rel := (a - b) / b
			switch {
			case rel <= -d.threshold:
				down = true
			case rel >= d.threshold:
				up = true
			}
			continue
		}
		switch {
		case a < b:
			down = true
		case a > b:
			up = true
		}
	}
	if up == down {
		return 0
	}
	if up == d.up {
		return 1
	}
	return -1
}

func chars(s string) float64 {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return float64(n)
}

func meanSentence(s string) float64 {
	ss := source.Sentences(s)
	if len(ss) == 0 {
		return 0
	}
	return chars(s) / float64(len(ss))
}

var (
	fillersZH = []string{"其实", "基本上", "非常", "真的", "总的来说", "可以说", "某种程度上", "就是说", "进行", "的话"}
	fillersEN = map[string]bool{"very": true, "really": true, "actually": true, "basically": true, "just": true, "quite": true, "literally": true}
)

func fillers(s string) float64 {
	n := 0
	for _, w := range fillersZH {
		n += strings.Count(s, w)
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if fillersEN[w] {
			n++
		}
	}
	return float64(n)
}

func passives(s string) float64 {
	n := strings.Count(s, "被")
	ws := strings.Fields(strings.ToLower(s))
	for i := 0; i+2 < len(ws); i++ {
		if (ws[i] == "was" || ws[i] == "were" || ws[i] == "is" || ws[i] == "are") && strings.HasSuffix(ws[i+1], "ed") {
			for _, w := range ws[i+2 : min(len(ws), i+6)] {
				if w == "by" {
					n++
					break
				}
			}
		}
	}
	return float64(n)
}

func halfWidthAfterCJK(s string) float64 {
	rs := []rune(s)
	n := 0
	for i := 1; i < len(rs); i++ {
		if strings.ContainsRune(",.!?;:", rs[i]) && source.IsCJK(rs[i-1]) {
			n++
		}
	}
	return float64(n)
}

func spacedShare(s string) float64 {
	rs := []rune(s)
	kind := func(r rune) int {
		switch {
		case source.IsCJK(r):
			return 1
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			return 2
		}
		return 0
	}
	spaced := 0
	for i := 0; i+2 < len(rs); i++ {
		if a, c := kind(rs[i]), kind(rs[i+2]); a != 0 && c != 0 && a != c && rs[i+1] == ' ' {
			spaced++
		}
	}
	return float64(spaced)
}

func exclamations(s string) float64 {
	return float64(strings.Count(s, "!") + strings.Count(s, "！"))
}
