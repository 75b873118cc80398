package assistant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/assistant/presets"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
)

// PresetType is what a preset decides: how to write, or how to edit.
type PresetType string

// The preset types. Both share one store; their meaning differs.
const (
	WritingPreset PresetType = "writing" // decides what the text becomes ("写成什么样")
	EditingPreset PresetType = "editing" // decides how existing text is edited ("怎样修改")
)

func (t PresetType) valid() bool { return t == WritingPreset || t == EditingPreset }

// Source is where a preset's guidance comes from.
type Source struct {
	Title  string `json:"title" msgpack:"title"`
	Author string `json:"author,omitempty" msgpack:"author,omitempty"`
	Year   string `json:"year,omitempty" msgpack:"year,omitempty"`
	// Note says what the preset takes from the source.
	Note string `json:"note,omitempty" msgpack:"note,omitempty"`
}

// Rule is one rule of an editing preset. ID, when set, names the local
// provider's rule of that name (package localedit) so it can run it.
type Rule struct {
	ID          string `json:"id,omitempty" msgpack:"id,omitempty"`
	Name        string `json:"name" msgpack:"name"`
	Instruction string `json:"instruction" msgpack:"instr"`
}

// Preset is a preset's current state: what the selector lists. It never
// holds prompt text (see PresetVersion).
type Preset struct {
	ID          string     `json:"id" msgpack:"id"`
	Type        PresetType `json:"type" msgpack:"type"`
	Name        string     `json:"name" msgpack:"name"`
	Description string     `json:"description,omitempty" msgpack:"desc,omitempty"`
	Order       int        `json:"order" msgpack:"order"`
	Archived    bool       `json:"archived,omitempty" msgpack:"archived,omitempty"`
	Builtin     bool       `json:"builtin,omitempty" msgpack:"builtin,omitempty"`
	// Version is the current version's metadata.
	Version VersionMeta `json:"version" msgpack:"version"`
	Created int64       `json:"created" msgpack:"created"` // Unix ms
	Updated int64       `json:"updated" msgpack:"updated"`
}

// VersionMeta identifies one version of a preset.
type VersionMeta struct {
	ID     string `json:"id" msgpack:"id"` // content-derived: "pv" + 16 hex digits
	Number int    `json:"number" msgpack:"n"`
	Author string `json:"author,omitempty" msgpack:"author,omitempty"`
	Time   int64  `json:"time" msgpack:"time"` // Unix ms
}

// PresetVersion is one immutable version of a preset, prompt included.
type PresetVersion struct {
	Preset      string      `json:"preset" msgpack:"preset"`
	Type        PresetType  `json:"type" msgpack:"type"`
	Meta        VersionMeta `json:"meta" msgpack:"meta"`
	Name        string      `json:"name" msgpack:"name"`
	Description string      `json:"description,omitempty" msgpack:"desc,omitempty"`
	Prompt      string      `json:"prompt" msgpack:"prompt"`
	Rules       []Rule      `json:"rules,omitempty" msgpack:"rules,omitempty"`
	Sources     []Source    `json:"sources,omitempty" msgpack:"sources,omitempty"`
	// CopiedFrom names the preset version a copy started from.
	CopiedFrom string `json:"copiedFrom,omitempty" msgpack:"from,omitempty"`
}

// PresetPin is what a run pins of the preset it uses: the type, the
// preset, and the exact version (its id and number).
type PresetPin struct {
	Type      PresetType `json:"type" msgpack:"type"`
	ID        string     `json:"id" msgpack:"id"`
	VersionID string     `json:"versionId" msgpack:"vid"`
	Number    int        `json:"number" msgpack:"n"`
	Name      string     `json:"name" msgpack:"name"`
}

// PresetInput is what an admin writes: a new preset, or a new version.
// Empty fields of an edit keep the current version's value.
type PresetInput struct {
	Type        PresetType `json:"type,omitempty"`
	Name        string     `json:"name,omitempty"`
	Description string     `json:"description,omitempty"`
	Prompt      string     `json:"prompt,omitempty"`
	Rules       []Rule     `json:"rules,omitempty"`
	Sources     []Source   `json:"sources,omitempty"`
}

// PresetDetail is a preset with its current version and the metadata of
// every version (admins only).
type PresetDetail struct {
	Preset   Preset        `json:"preset"`
	Current  PresetVersion `json:"current"`
	Versions []VersionMeta `json:"versions"`
}

// Bounds of preset fields.
const (
	maxPresetName   = 64    // code points
	maxPresetDesc   = 500   // code points
	maxPresetPrompt = 8000  // code points
	maxPresetRules  = 20    // rules
	maxPresetRule   = 500   // code points per rule
	maxPresetSource = 10    // sources
	maxPresets      = 500   // presets in the store
	maxPresetVers   = 10000 // versions per preset
)

// builtins reads the built-in presets (package presets), in their order.
func builtins() ([]PresetVersion, error) {
	ps, err := presets.Builtin()
	if err != nil {
		return nil, err
	}
	out := make([]PresetVersion, len(ps))
	for i, p := range ps {
		v := PresetVersion{Preset: p.ID, Type: PresetType(p.Kind), Name: p.Name, Description: p.Description, Prompt: p.Prompt}
		for _, r := range p.Rules {
			v.Rules = append(v.Rules, Rule{ID: r.ID, Name: r.Name, Instruction: r.Instruction})
		}
		for _, src := range p.Sources {
			v.Sources = append(v.Sources, Source{Title: src.Title, Author: src.Author, Year: src.Year, Note: src.Note})
		}
		out[i] = v
	}
	return out, nil
}

// versionID derives a version's id from its content, so that the pin in
// a run names exactly the text it used.
func versionID(v PresetVersion) string {
	v.Meta.ID = ""
	data, _ := kv.Marshal(v) // plain data: cannot fail
	h := sha256.Sum256(append([]byte("folio/preset-version\x00"), data...))
	return "pv" + hex.EncodeToString(h[:8])
}

// seedPresets creates every built-in preset that does not exist yet, in
// one batch. Existing presets, edited or archived ones included, are left
// as they are, so seeding is idempotent.
func (s *Service) seedPresets(ctx context.Context) error {
	bs, err := builtins()
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	now := s.now().UnixMilli()
	order := map[PresetType]int{}
	for _, v := range bs {
		if err := ctx.Err(); err != nil {
			return err
		}
		order[v.Type]++
		if err := v.check(); err != nil {
			return fmt.Errorf("assistant: built-in preset %s: %w", v.Preset, err)
		}
		if ok, err := kv.Has(s.db, presetKey(v.Preset)); err != nil {
			return err
		} else if ok {
			continue
		}
		v.Meta = VersionMeta{Number: 1, Author: "folio", Time: now}
		v.Meta.ID = versionID(v)
		p := Preset{ID: v.Preset, Type: v.Type, Name: v.Name, Description: v.Description, Order: order[v.Type] * 10,
			Builtin: true, Version: v.Meta, Created: now, Updated: now}
		if err := kv.SetRecord(b, presetKey(p.ID), p); err != nil {
			return err
		}
		if err := kv.SetRecord(b, presetVerKey(p.ID, 1), v); err != nil {
			return err
		}
	}
	if b.Empty() {
		return nil
	}
	// The built-in presets are a few KiB compiled into the binary, written
	// once per preset: a daemon starting on a disk below its reserve
	// writes them within it (kv.DB.ApplyReserved).
	return s.db.ApplyReserved(b, kv.Sync)
}

// check validates a version's fields.
func (v *PresetVersion) check() error {
	bad := func(format string, args ...any) error { return errs.E(errs.Invalid, "preset: "+format, args...) }
	if !v.Type.valid() {
		return bad("type %q (want writing or editing)", v.Type)
	}
	v.Name = strings.TrimSpace(v.Name)
	if v.Name == "" || utf8.RuneCountInString(v.Name) > maxPresetName {
		return bad("name must be 1..%d characters", maxPresetName)
	}
	if utf8.RuneCountInString(v.Description) > maxPresetDesc {
		return bad("description must be at most %d characters", maxPresetDesc)
	}
	if strings.TrimSpace(v.Prompt) == "" && len(v.Rules) == 0 {
		return bad("a preset needs a prompt or rules")
	}
	if utf8.RuneCountInString(v.Prompt) > maxPresetPrompt {
		return bad("prompt must be at most %d characters", maxPresetPrompt)
	}
	if len(v.Rules) > maxPresetRules {
		return bad("at most %d rules", maxPresetRules)
	}
	for i, r := range v.Rules {
		if strings.TrimSpace(r.Instruction) == "" || utf8.RuneCountInString(r.Name)+utf8.RuneCountInString(r.Instruction) > maxPresetRule {
			return bad("rules[%d] needs an instruction, and name and instruction at most %d characters", i, maxPresetRule)
		}
		if r.ID != "" && !validID(r.ID) {
			return bad("rules[%d].id %q must be 1-64 of a-z 0-9 _ -", i, r.ID)
		}
	}
	if len(v.Sources) > maxPresetSource {
		return bad("at most %d sources", maxPresetSource)
	}
	texts := []string{v.Name, v.Description, v.Prompt}
	for i, src := range v.Sources {
		if strings.TrimSpace(src.Title) == "" || utf8.RuneCountInString(src.Title+src.Author+src.Year+src.Note) > maxPresetDesc {
			return bad("sources[%d] needs a title, and all its fields at most %d characters", i, maxPresetDesc)
		}
		texts = append(texts, src.Title, src.Author, src.Year, src.Note)
	}
	for _, r := range v.Rules {
		texts = append(texts, r.ID, r.Name, r.Instruction)
	}
	for _, s := range texts {
		if !utf8.ValidString(s) {
			return bad("text must be valid UTF-8")
		}
	}
	return nil
}

func (s *Service) loadPreset(r kv.Reader, id string) (Preset, error) {
	var p Preset
	if !validID(id) {
		return p, errs.E(errs.NotFound, "preset %q not found", id)
	}
	ok, err := kv.GetRecord(r, presetKey(id), &p)
	if err != nil {
		return p, err
	}
	if !ok {
		return p, errs.E(errs.NotFound, "preset %q not found", id)
	}
	return p, nil
}

func (s *Service) loadPresetVersion(r kv.Reader, id string, n int) (PresetVersion, error) {
	var v PresetVersion
	ok, err := kv.GetRecord(r, presetVerKey(id, n), &v)
	if err != nil {
		return v, err
	}
	if !ok {
		return v, errs.E(errs.NotFound, "preset %q has no version %d", id, n)
	}
	return v, nil
}

// Presets lists the presets of type t ("" for both) for a selector: id,
// name, description, type, order and version metadata, never prompt text.
// Archived presets are listed only with archived set. Order: by type,
// then Order, then id.
func (s *Service) Presets(ctx context.Context, t PresetType, archived bool) ([]Preset, error) {
	if t != "" && !t.valid() {
		return nil, errs.E(errs.Invalid, "preset type %q (want writing or editing)", t)
	}
	p := kv.TableKey(tablePreset, "")
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Preset
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var pr Preset
		if err := kv.Unmarshal(it.Value(), &pr); err != nil {
			return nil, errs.E(errs.Corrupt, "assistant: decode preset %q: %w", it.Key(), err)
		}
		if (t != "" && pr.Type != t) || (pr.Archived && !archived) {
			continue
		}
		pr.Name, pr.Description = presets.Localize(pr.ID, pr.Name, pr.Description, s.lang)
		out = append(out, pr)
	}
	slices.SortFunc(out, func(a, b Preset) int {
		if a.Type != b.Type {
			return strings.Compare(string(a.Type), string(b.Type))
		}
		if a.Order != b.Order {
			return a.Order - b.Order
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, it.Error()
}

func requireAdmin(a Actor, what string) error {
	if !a.Admin {
		return errs.E(errs.Forbidden, "%s needs an admin", what)
	}
	return nil
}

// PresetAdmin returns preset id with its current prompt and every
// version's metadata. Admins only.
func (s *Service) PresetAdmin(ctx context.Context, a Actor, id string) (PresetDetail, error) {
	if err := requireAdmin(a, "reading a preset's prompt"); err != nil {
		return PresetDetail{}, err
	}
	p, err := s.loadPreset(s.db, id)
	if err != nil {
		return PresetDetail{}, err
	}
	cur, err := s.loadPresetVersion(s.db, id, p.Version.Number)
	if err != nil {
		return PresetDetail{}, err
	}
	keys, err := kv.Keys(s.db, presetVerPrefix(id), maxPresetVers)
	if err != nil {
		return PresetDetail{}, err
	}
	d := PresetDetail{Preset: p, Current: cur}
	for _, k := range keys {
		v, err := s.loadPresetVersion(s.db, id, int(kv.ParseUint64(k)))
		if err != nil {
			return PresetDetail{}, err
		}
		d.Versions = append(d.Versions, v.Meta)
	}
	return d, ctx.Err()
}

// PresetVersionAdmin returns version n of preset id, archived presets and
// old versions included. Admins only.
func (s *Service) PresetVersionAdmin(ctx context.Context, a Actor, id string, n int) (PresetVersion, error) {
	if err := requireAdmin(a, "reading a preset's prompt"); err != nil {
		return PresetVersion{}, err
	}
	if _, err := s.loadPreset(s.db, id); err != nil {
		return PresetVersion{}, err
	}
	return s.loadPresetVersion(s.db, id, n)
}

// CreatePreset creates a preset with its version 1, placed last in its
// type's order. Admins only.
func (s *Service) CreatePreset(ctx context.Context, a Actor, in PresetInput) (Preset, error) {
	if err := requireAdmin(a, "creating a preset"); err != nil {
		return Preset{}, err
	}
	v := PresetVersion{Type: in.Type, Name: in.Name, Description: in.Description, Prompt: in.Prompt,
		Rules: in.Rules, Sources: in.Sources}
	return s.newPreset(ctx, a, v)
}

func (s *Service) newPreset(ctx context.Context, a Actor, v PresetVersion) (Preset, error) {
	if err := v.check(); err != nil {
		return Preset{}, err
	}
	s.presetMu.Lock()
	defer s.presetMu.Unlock()
	all, err := s.Presets(ctx, "", true)
	if err != nil {
		return Preset{}, err
	}
	if len(all) >= maxPresets {
		return Preset{}, errs.E(errs.TooLarge, "the store holds %d presets, the limit; archive is not delete, so reuse one", len(all))
	}
	last := 0
	for _, p := range all {
		if p.Type == v.Type {
			last = max(last, p.Order)
		}
	}
	now := s.now().UnixMilli()
	v.Preset = newID("p")
	v.Meta = VersionMeta{Number: 1, Author: a.User, Time: now}
	v.Meta.ID = versionID(v)
	p := Preset{ID: v.Preset, Type: v.Type, Name: v.Name, Description: v.Description, Order: last + 10,
		Version: v.Meta, Created: now, Updated: now}
	b := s.db.NewBatch()
	defer b.Close()
	if err := kv.SetRecord(b, presetKey(p.ID), p); err != nil {
		return Preset{}, err
	}
	if err := kv.SetRecord(b, presetVerKey(p.ID, 1), v); err != nil {
		return Preset{}, err
	}
	return p, s.db.Apply(b, kv.Sync)
}

// EditPreset appends a new version to preset id (empty input fields keep
// the current version's values; the type never changes). Runs that pinned
// an earlier version keep reading it. Admins only.
func (s *Service) EditPreset(ctx context.Context, a Actor, id string, in PresetInput) (Preset, error) {
	if err := requireAdmin(a, "editing a preset"); err != nil {
		return Preset{}, err
	}
	s.presetMu.Lock()
	defer s.presetMu.Unlock()
	p, err := s.loadPreset(s.db, id)
	if err != nil {
		return Preset{}, err
	}
	if in.Type != "" && in.Type != p.Type {
		return Preset{}, errs.E(errs.Invalid, "preset %s is a %s preset; a preset's type never changes (copy it instead)", id, p.Type)
	}
	if p.Version.Number >= maxPresetVers {
		return Preset{}, errs.E(errs.TooLarge, "preset %s has %d versions, the limit", id, p.Version.Number)
	}
	cur, err := s.loadPresetVersion(s.db, id, p.Version.Number)
	if err != nil {
		return Preset{}, err
	}
	next := cur
	next.CopiedFrom = ""
	if in.Name != "" {
		next.Name = in.Name
	}
	if in.Description != "" {
		next.Description = in.Description
	}
	if in.Prompt != "" {
		next.Prompt = in.Prompt
	}
	if in.Rules != nil {
		next.Rules = in.Rules
	}
	if in.Sources != nil {
		next.Sources = in.Sources
	}
	if err := next.check(); err != nil {
		return Preset{}, err
	}
	now := s.now().UnixMilli()
	next.Meta = VersionMeta{Number: p.Version.Number + 1, Author: a.User, Time: now}
	next.Meta.ID = versionID(next)
	p.Name, p.Description, p.Version, p.Updated = next.Name, next.Description, next.Meta, now
	b := s.db.NewBatch()
	defer b.Close()
	if err := kv.SetRecord(b, presetKey(id), p); err != nil {
		return Preset{}, err
	}
	if err := kv.SetRecord(b, presetVerKey(id, next.Meta.Number), next); err != nil {
		return Preset{}, err
	}
	return p, s.db.Apply(b, kv.Sync)
}

// CopyPreset makes a new preset of the same type whose version 1 is a copy
// of preset id's current version, named name (or "<name> (copy)").
// Admins only.
func (s *Service) CopyPreset(ctx context.Context, a Actor, id, name string) (Preset, error) {
	if err := requireAdmin(a, "copying a preset"); err != nil {
		return Preset{}, err
	}
	p, err := s.loadPreset(s.db, id)
	if err != nil {
		return Preset{}, err
	}
	cur, err := s.loadPresetVersion(s.db, id, p.Version.Number)
	if err != nil {
		return Preset{}, err
	}
	if name == "" {
		name = cur.Name + "（副本）"
	}
	cur.Name, cur.CopiedFrom = name, fmt.Sprintf("%s@%d", id, cur.Meta.Number)
	return s.newPreset(ctx, a, cur)
}

// ReorderPresets puts the presets of type t named by ids first, in that
// order; the others follow in their old order. Admins only.
func (s *Service) ReorderPresets(ctx context.Context, a Actor, t PresetType, ids []string) ([]Preset, error) {
	if err := requireAdmin(a, "reordering presets"); err != nil {
		return nil, err
	}
	if !t.valid() {
		return nil, errs.E(errs.Invalid, "preset type %q (want writing or editing)", t)
	}
	s.presetMu.Lock()
	defer s.presetMu.Unlock()
	all, err := s.Presets(ctx, t, true)
	if err != nil {
		return nil, err
	}
	byID := map[string]Preset{}
	for _, p := range all {
		byID[p.ID] = p
	}
	var order []Preset
	seen := map[string]bool{}
	for _, id := range ids {
		p, ok := byID[id]
		if !ok {
			return nil, errs.E(errs.NotFound, "no %s preset %q", t, id)
		}
		if seen[id] {
			return nil, errs.E(errs.Invalid, "preset %q is listed twice", id)
		}
		seen[id] = true
		order = append(order, p)
	}
	for _, p := range all {
		if !seen[p.ID] {
			order = append(order, p)
		}
	}
	b := s.db.NewBatch()
	defer b.Close()
	now := s.now().UnixMilli()
	for i := range order {
		if order[i].Order == (i+1)*10 {
			continue
		}
		order[i].Order, order[i].Updated = (i+1)*10, now
		if err := kv.SetRecord(b, presetKey(order[i].ID), order[i]); err != nil {
			return nil, err
		}
	}
	if err := s.db.Apply(b, kv.Sync); err != nil {
		return nil, err
	}
	return order, nil
}

// ArchivePreset hides preset id from selectors and new requests. Its
// versions stay readable and runs that pinned one keep using it. Admins
// only.
func (s *Service) ArchivePreset(ctx context.Context, a Actor, id string) (Preset, error) {
	return s.setArchived(ctx, a, id, true)
}

// RestorePreset brings an archived preset back. Admins only.
func (s *Service) RestorePreset(ctx context.Context, a Actor, id string) (Preset, error) {
	return s.setArchived(ctx, a, id, false)
}

func (s *Service) setArchived(ctx context.Context, a Actor, id string, archived bool) (Preset, error) {
	if err := requireAdmin(a, "archiving or restoring a preset"); err != nil {
		return Preset{}, err
	}
	if err := ctx.Err(); err != nil {
		return Preset{}, err
	}
	s.presetMu.Lock()
	defer s.presetMu.Unlock()
	p, err := s.loadPreset(s.db, id)
	if err != nil {
		return Preset{}, err
	}
	if p.Archived == archived {
		return p, nil
	}
	p.Archived, p.Updated = archived, s.now().UnixMilli()
	b := s.db.NewBatch()
	defer b.Close()
	if err := kv.SetRecord(b, presetKey(id), p); err != nil {
		return Preset{}, err
	}
	return p, s.db.Apply(b, kv.Sync)
}

// pinPreset resolves the preset a request chose to its current version.
func (s *Service) pinPreset(id string, t PresetType) (PresetPin, error) {
	p, err := s.loadPreset(s.db, id)
	if err != nil {
		return PresetPin{}, err
	}
	if p.Type != t {
		return PresetPin{}, errs.E(errs.Invalid, "preset %s is a %s preset, not a %s preset", id, p.Type, t)
	}
	if p.Archived {
		return PresetPin{}, errs.C(errs.Invalid, CodePresetArchived, "preset %s (%s) is archived; choose another or ask an admin to restore it", id, p.Name)
	}
	return PresetPin{Type: t, ID: id, VersionID: p.Version.ID, Number: p.Version.Number, Name: p.Name}, nil
}

// pinned loads the version a run pinned and checks it is the one pinned.
func (s *Service) pinned(pin PresetPin) (PresetVersion, error) {
	v, err := s.loadPresetVersion(s.db, pin.ID, pin.Number)
	if err != nil {
		return v, err
	}
	if v.Meta.ID != pin.VersionID || versionID(v) != pin.VersionID {
		return v, errs.E(errs.Corrupt, "preset %s version %d is not the version %s the run pinned", pin.ID, pin.Number, pin.VersionID)
	}
	return v, nil
}
