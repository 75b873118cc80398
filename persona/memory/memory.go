package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/foliodev/folio/persona/source"
)

// Statuses of an item.
const (
	StatusSupported  = "supported"
	StatusConflicted = "conflicted"
	StatusRestricted = "restricted"
)

// Sensitivities of an item.
const (
	SensitivityLow    = "low"
	SensitivityMedium = "medium"
	SensitivityHigh   = "high"
)

// Relation kinds.
const (
	RelSupports   = "supports"
	RelConflicts  = "conflicts"
	RelSupersedes = "supersedes"
)

// ErrNoPersona is returned by Project for a snapshot without a persona:
// memory is always persona-scoped.
var ErrNoPersona = errors.New("memory: a memory snapshot must belong to a persona")

// Observation is one fact extracted from one pinned source version, with
// its evidence. Observations are per user and reusable by every persona
// of the user that chooses the source.
type Observation struct {
	Key      string          `json:"key" msgpack:"key"`
	Fact     Fact            `json:"fact" msgpack:"fact"`
	Evidence source.Evidence `json:"evidence" msgpack:"ev"`
	// SourceTime is when the source version was made (Unix ms).
	SourceTime int64 `json:"sourceTime,omitempty" msgpack:"st,omitempty"`
}

// Observe extracts the observations of a pinned source document: every
// fact Extract keeps, in block order, with its evidence (the sentence's
// span in its block).
func Observe(d source.Document) []Observation {
	var out []Observation
	for _, b := range d.Prose() {
		for _, f := range Extract(b.Text) {
			ev := source.NewEvidence(d.Pin, b, f.Span)
			h := sha256.Sum256([]byte(ExtractorVersion + "\x00" + d.Pin.Version.String() + "\x00" + b.ID + "\x00" +
				itoa(b.Item) + "\x00" + itoa(f.Span.Start) + "\x00" + f.Statement))
			out = append(out, Observation{Key: "mo" + hex.EncodeToString(h[:10]), Fact: f, Evidence: ev, SourceTime: d.Pin.Time})
		}
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

// Item is one fact of a persona's memory snapshot.
type Item struct {
	// Key is stable across snapshots for the same fact: "mi" + 20 hex
	// digits over its type and anchors (or its statement when it has
	// none that identify it).
	Key         string            `json:"key" msgpack:"key"`
	Type        string            `json:"type" msgpack:"type"`
	Statement   string            `json:"statement" msgpack:"stmt"`
	Time        *Time             `json:"time,omitempty" msgpack:"time,omitempty"`
	Places      []string          `json:"places,omitempty" msgpack:"places,omitempty"`
	Orgs        []string          `json:"orgs,omitempty" msgpack:"orgs,omitempty"`
	Numbers     []Number          `json:"numbers,omitempty" msgpack:"nums,omitempty"`
	Role        string            `json:"role,omitempty" msgpack:"role,omitempty"`
	Confidence  float64           `json:"confidence" msgpack:"conf"`
	Sensitivity string            `json:"sensitivity" msgpack:"sens"`
	Status      string            `json:"status" msgpack:"status"`
	Evidence    []source.Evidence `json:"evidence" msgpack:"ev"`
	// Observations are the keys of the observations merged into the item.
	Observations []string   `json:"observations" msgpack:"obs"`
	Relations    []Relation `json:"relations,omitempty" msgpack:"rel,omitempty"`
}

// Relation links an item to another item of the same snapshot.
type Relation struct {
	Kind string `json:"kind" msgpack:"kind"`
	Item string `json:"item" msgpack:"item"`
}

// Text is what retrieval indexes: the statement and its anchors.
func (it Item) Text() string {
	parts := []string{it.Statement}
	parts = append(parts, it.Places...)
	parts = append(parts, it.Orgs...)
	if it.Role != "" {
		parts = append(parts, it.Role)
	}
	if it.Time != nil {
		parts = append(parts, it.Time.Value)
	}
	return strings.Join(parts, " ")
}

// Docs returns the distinct documents of the item's evidence, sorted.
func (it Item) Docs() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range it.Evidence {
		if !seen[e.Doc] {
			seen[e.Doc] = true
			out = append(out, e.Doc)
		}
	}
	sort.Strings(out)
	return out
}

// Snapshot is a persona's memory: the items projected from the
// observations of the persona's sources.
type Snapshot struct {
	User      string       `json:"user" msgpack:"user"`
	Persona   string       `json:"persona" msgpack:"persona"`
	Extractor string       `json:"extractor" msgpack:"extractor"`
	Sources   []source.Pin `json:"sources" msgpack:"sources"`
	Items     []Item       `json:"items" msgpack:"items"`
}

// Input is one source's observations for Project.
type Input struct {
	Pin source.Pin
	// Private is true for a private or password-protected source: its
	// facts are at least of medium sensitivity.
	Private      bool
	Observations []Observation
}

// Project builds a persona's snapshot from the observations of its
// sources. It refuses a snapshot without user or persona (ErrNoPersona).
// It is deterministic: the same inputs in the same order give the same
// snapshot.
//
// Observations stating the same fact (same type and anchors, or the same
// statement) merge into one item with all their evidence. Confidence is
// a noisy-or over the distinct source documents: 1 - Π(1 - base), with
// base 0.7 for facts of a typed frame (birth, education, work,
// residence) and 0.6 otherwise, at most 0.99; a conflicted item's is
// halved. Relations: two birth items that disagree, or two start events
// (加入, 入职, 毕业, joined, graduated…) at the same organisation in
// different years, conflict; a residence fact supersedes an earlier one
// (by its time, else its source's); items sharing an organisation or a
// place support each other. Status: restricted for high sensitivity
// (health, money, contact details), conflicted when an item conflicts
// with another, supported otherwise.
func Project(user, persona string, in []Input) (Snapshot, error) {
	return ProjectContext(context.Background(), user, persona, in)
}

// ProjectContext is Project that gives up with ctx's error when ctx ends.
func ProjectContext(ctx context.Context, user, persona string, in []Input) (Snapshot, error) {
	if user == "" || persona == "" {
		return Snapshot{}, ErrNoPersona
	}
	snap := Snapshot{User: user, Persona: persona, Extractor: ExtractorVersion}
	type acc struct {
		item    Item
		docs    map[string]bool
		base    float64
		private bool // every evidence is private
		when    int64
	}
	var order []string
	byKey := map[string]*acc{}
	for _, src := range in {
		snap.Sources = append(snap.Sources, src.Pin)
		for _, o := range src.Observations {
			k := itemKey(o.Fact)
			a := byKey[k]
			if a == nil {
				f := o.Fact
				a = &acc{item: Item{Key: k, Type: f.Type, Statement: f.Statement, Time: f.Time, Places: f.Places, Orgs: f.Orgs,
					Numbers: f.Numbers, Role: f.Role}, docs: map[string]bool{}, base: baseConfidence(f), private: true, when: o.SourceTime}
				byKey[k] = a
				order = append(order, k)
			}
			a.item.Evidence = append(a.item.Evidence, o.Evidence)
			a.item.Observations = append(a.item.Observations, o.Key)
			a.docs[o.Evidence.Doc] = true
			a.private = a.private && src.Private
			a.when = max(a.when, o.SourceTime)
		}
	}
	items := make([]*acc, len(order))
	for i, k := range order {
		items[i] = byKey[k]
		a := items[i]
		a.item.Confidence = round3(1 - math.Pow(1-a.base, float64(len(a.docs))))
		a.item.Confidence = math.Min(a.item.Confidence, 0.99)
		a.item.Sensitivity = sensitivity(a.item, a.private)
	}
	rel := func(a *acc, kind, key string) {
		for _, r := range a.item.Relations {
			if r.Kind == kind && r.Item == key {
				return
			}
		}
		if len(a.item.Relations) < maxRelations {
			a.item.Relations = append(a.item.Relations, Relation{Kind: kind, Item: key})
		}
	}
	for n, pr := range candidatePairs(items, func(a *acc) Item { return a.item }) {
		if n%4096 == 0 && ctx.Err() != nil {
			return Snapshot{}, ctx.Err()
		}
		a, b := items[pr[0]], items[pr[1]]
		switch {
		case conflicts(a.item, b.item):
			rel(a, RelConflicts, b.item.Key)
			rel(b, RelConflicts, a.item.Key)
		case a.item.Type == TypeResidence && b.item.Type == TypeResidence && !equalStrings(a.item.Places, b.item.Places):
			newer, older := a, b
			if later(older, newer, func(x *acc) (*Time, int64) { return x.item.Time, x.when }) {
				newer, older = b, a
			}
			rel(newer, RelSupersedes, older.item.Key)
		case shares(a.item.Orgs, b.item.Orgs) || shares(a.item.Places, b.item.Places):
			rel(a, RelSupports, b.item.Key)
			rel(b, RelSupports, a.item.Key)
		}
	}
	for _, a := range items {
		it := a.item
		it.Status = StatusSupported
		for _, r := range it.Relations {
			if r.Kind == RelConflicts {
				it.Status = StatusConflicted
				it.Confidence = round3(it.Confidence / 2)
			}
		}
		if it.Sensitivity == SensitivityHigh {
			it.Status = StatusRestricted
		}
		snap.Items = append(snap.Items, it)
	}
	return snap, nil
}

// maxRelations bounds an item's relations.
const maxRelations = 16

// candidatePairs returns the pairs (i < j, in ascending order) of items
// that may relate: both births, both residences, or sharing an
// organisation or a place; no other pair can (see conflicts and
// Project). Within each such group an item is paired with the
// maxRelations items before and after it only: an item keeps at most
// maxRelations relations, so a group of any size costs a bounded number
// of pairs per item, and the projection stays linear in its input
// (groups of at most maxRelations+1 items, the usual case, are paired
// whole, as every pair was compared before).
func candidatePairs[T any](items []T, item func(T) Item) [][2]int {
	groups := map[string][]int{}
	for i, x := range items {
		it := item(x)
		if it.Type == TypeBirth || it.Type == TypeResidence {
			groups["t\x00"+it.Type] = append(groups["t\x00"+it.Type], i)
		}
		for _, o := range uniq(it.Orgs) {
			groups["o\x00"+o] = append(groups["o\x00"+o], i)
		}
		for _, p := range uniq(it.Places) {
			groups["p\x00"+p] = append(groups["p\x00"+p], i)
		}
	}
	seen := map[[2]int]bool{}
	var pairs [][2]int
	for _, g := range groups {
		for x := range g {
			for y := x + 1; y < len(g) && y <= x+maxRelations; y++ {
				pr := [2]int{g[x], g[y]}
				if !seen[pr] {
					seen[pr] = true
					pairs = append(pairs, pr)
				}
			}
		}
	}
	slices.SortFunc(pairs, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return pairs
}

// uniq returns the distinct strings of ss, in their first order.
func uniq(ss []string) []string {
	if len(ss) < 2 {
		return ss
	}
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func later[T any](a, b T, when func(T) (*Time, int64)) bool {
	ta, sa := when(a)
	tb, sb := when(b)
	if ta != nil && tb != nil && ta.Precision != PrecisionRelative && tb.Precision != PrecisionRelative && ta.Value != tb.Value {
		return ta.Value > tb.Value
	}
	return sa > sb
}

func baseConfidence(f Fact) float64 {
	switch f.Type {
	case TypeBirth, TypeEducation, TypeWork, TypeResidence:
		return 0.7
	}
	return 0.6
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// itemKey identifies a fact: its type and anchors when it has a time,
// place, organisation or role, else its normalized statement.
func itemKey(f Fact) string {
	var sig string
	if f.Time != nil || len(f.Places) > 0 || len(f.Orgs) > 0 || f.Role != "" {
		var nums []string
		for _, n := range f.Numbers {
			nums = append(nums, n.Value+n.Unit)
		}
		t := ""
		if f.Time != nil {
			t = f.Time.Value
		}
		sig = strings.Join([]string{f.Type, t, strings.Join(sorted(f.Places), ","), strings.Join(sorted(f.Orgs), ","),
			f.Role, strings.Join(sorted(nums), ",")}, "\x00")
	} else {
		sig = f.Type + "\x00" + normalize(f.Statement)
	}
	h := sha256.Sum256([]byte(sig))
	return "mi" + hex.EncodeToString(h[:10])
}

func normalize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func sorted(ss []string) []string {
	out := append([]string(nil), ss...)
	sort.Strings(out)
	return out
}

func equalStrings(a, b []string) bool {
	return strings.Join(sorted(a), "\x00") == strings.Join(sorted(b), "\x00")
}

func shares(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

var startVerbs = []string{"加入", "入职", "毕业", "考入", "joined", "graduated", "started"}

func startVerb(s string) string {
	for _, v := range startVerbs {
		if strings.Contains(strings.ToLower(s), v) {
			return v
		}
	}
	return ""
}

// conflicts reports whether two items cannot both be true.
func conflicts(a, b Item) bool {
	if a.Type == TypeBirth && b.Type == TypeBirth {
		if a.Time != nil && b.Time != nil && a.Time.Precision != PrecisionRelative && b.Time.Precision != PrecisionRelative &&
			!strings.HasPrefix(a.Time.Value, b.Time.Value) && !strings.HasPrefix(b.Time.Value, a.Time.Value) {
			return true
		}
		return len(a.Places) > 0 && len(b.Places) > 0 && !shares(a.Places, b.Places)
	}
	if a.Type == b.Type && (a.Type == TypeWork || a.Type == TypeEducation) && shares(a.Orgs, b.Orgs) &&
		a.Time != nil && b.Time != nil && a.Time.Precision != PrecisionRelative && b.Time.Precision != PrecisionRelative {
		va, vb := startVerb(a.Statement), startVerb(b.Statement)
		return va != "" && va == vb && a.Time.Value[:4] != b.Time.Value[:4]
	}
	return false
}

var (
	sensitiveHigh = []string{"病", "诊断", "抑郁", "焦虑症", "手术", "住院", "药", "工资", "收入", "存款", "负债", "欠债", "身份证",
		"电话", "手机号", "住址", "门牌", "diagnos", "illness", "disease", "surgery", "depression", "salary", "income", "debt",
		"phone number", "home address", "passport"}
)

// sensitivity is high for health, money and contact details, medium for
// birth and residence facts and for facts only private sources state,
// low otherwise.
func sensitivity(it Item, private bool) string {
	s := strings.ToLower(it.Statement)
	for _, w := range sensitiveHigh {
		if strings.Contains(s, w) {
			return SensitivityHigh
		}
	}
	if private || it.Type == TypeBirth || it.Type == TypeResidence {
		return SensitivityMedium
	}
	return SensitivityLow
}
