package persona

import (
	"context"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/persona/index"
	"github.com/foliodev/folio/persona/learning"
	"github.com/foliodev/folio/persona/memory"
	"github.com/foliodev/folio/persona/style"
)

// Style returns the style profile of version seq (0: active).
func (s *Service) Style(ctx context.Context, user, id string, seq int) (style.Profile, Version, error) {
	v, err := s.Version(ctx, user, id, seq)
	if err != nil {
		return style.Profile{}, Version{}, err
	}
	var p style.Profile
	ok, err := kv.GetRecord(s.db, styleKey(v.Style), &p)
	if err != nil {
		return style.Profile{}, v, err
	}
	if !ok {
		return style.Profile{}, v, errs.E(errs.Corrupt, "persona: version %s pins style profile %s, which is missing", v.ID, v.Style)
	}
	return p, v, nil
}

// Learning returns the learning snapshot of version seq (0: active);
// ok is false when the version has none.
func (s *Service) Learning(ctx context.Context, user, id string, seq int) (learning.Snapshot, bool, error) {
	v, err := s.Version(ctx, user, id, seq)
	if err != nil || v.Learning == "" {
		return learning.Snapshot{}, false, err
	}
	var l learning.Snapshot
	ok, err := kv.GetRecord(s.db, learningKey(v.Learning), &l)
	if err == nil && (!ok || l.Persona != v.Persona) {
		err = errs.E(errs.Corrupt, "persona: version %s pins learning snapshot %s, which is missing or another persona's", v.ID, v.Learning)
	}
	return l, err == nil, err
}

// MemoryItems returns up to limit items of the memory snapshot of version
// seq (0: active), in key order, and the snapshot's head.
func (s *Service) MemoryItems(ctx context.Context, user, id string, seq, limit int) (MemoryHead, []memory.Item, error) {
	v, err := s.Version(ctx, user, id, seq)
	if err != nil {
		return MemoryHead{}, nil, err
	}
	if v.Memory == "" {
		return MemoryHead{}, nil, nil
	}
	head, err := s.memoryHead(v)
	if err != nil {
		return MemoryHead{}, nil, err
	}
	keys, err := kv.Keys(s.db, memItemPrefix(v.Memory), limit)
	if err != nil {
		return head, nil, err
	}
	out := make([]memory.Item, 0, len(keys))
	for _, k := range keys {
		var it memory.Item
		if _, err := kv.GetRecord(s.db, k, &it); err != nil {
			return head, nil, err
		}
		out = append(out, it)
	}
	return head, out, nil
}

func (s *Service) memoryHead(v Version) (MemoryHead, error) {
	var head MemoryHead
	ok, err := kv.GetRecord(s.db, memoryKey(v.Memory), &head)
	if err == nil && (!ok || head.Persona != v.Persona || head.User != v.User) {
		err = errs.E(errs.Corrupt, "persona: version %s pins memory snapshot %s, which is missing or another persona's", v.ID, v.Memory)
	}
	return head, err
}

// RetrieveRequest asks for the memory a persona run may use.
type RetrieveRequest struct {
	User, Persona string
	// Version is the pinned version's seq (0: the active one).
	Version int
	// Text is the request's instruction, target text and context.
	Text string
	// ExcludeDoc is the article being written.
	ExcludeDoc string
	// Statuses allowed (default supported only); budgets as in
	// index.Query.
	Statuses           []string
	MaxItems, MaxChars int
}

// Retrieved is the memory given to a run.
type Retrieved struct {
	Version  string        `json:"version"`
	Snapshot string        `json:"snapshot"`
	Items    []memory.Item `json:"items"`
	Hits     []index.Hit   `json:"hits"`
	Matched  uint64        `json:"matched"`
}

// Keys are the retrieved items' keys, in rank order.
func (r Retrieved) Keys() []string {
	out := make([]string, len(r.Items))
	for i, it := range r.Items {
		out[i] = it.Key
	}
	return out
}

// Retrieve searches the memory snapshot pinned by the persona's version:
// the index query filters by exactly this user, persona and snapshot. A
// version without memory (the switch was off) retrieves nothing; with
// [persona] memory off now, nothing is retrieved either. Pending outbox
// entries are applied first, so a version generated a moment ago is
// searchable.
func (s *Service) Retrieve(ctx context.Context, req RetrieveRequest) (Retrieved, error) {
	v, err := s.Version(ctx, req.User, req.Persona, req.Version)
	if err != nil {
		return Retrieved{}, err
	}
	out := Retrieved{Version: v.ID, Snapshot: v.Memory}
	if v.Memory == "" || !s.sw.Memory {
		return out, nil
	}
	if s.idx == nil {
		return out, errs.E(errs.Unavailable, "persona: the memory index is not open")
	}
	if err := s.idx.Drain(ctx); err != nil {
		return out, err
	}
	res, err := s.idx.Search(ctx, index.Query{User: v.User, Persona: v.Persona, Snapshot: v.Memory, Text: req.Text,
		Statuses: req.Statuses, ExcludeDoc: req.ExcludeDoc, MaxItems: req.MaxItems, MaxChars: req.MaxChars})
	if err != nil {
		return out, err
	}
	out.Hits, out.Matched = res.Hits, res.Matched
	for _, h := range res.Hits {
		var it memory.Item
		ok, err := kv.GetRecord(s.db, memItemKey(v.Memory, h.Key), &it)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, errs.E(errs.Corrupt, "persona: the index returned item %s of %s, which the store lacks", h.Key, v.Memory)
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// RunContext is what a persona run pins and gives the provider: the
// version, and each component only when its switch is on and the version
// has it. No persona means none of this is loaded: the assistant calls
// RunContext only for requests that chose a persona.
type RunContext struct {
	Persona  Persona             `json:"persona"`
	Version  Version             `json:"version"`
	Style    *style.Profile      `json:"style,omitempty"`
	Learning []learning.RuleStat `json:"learning,omitempty"` // active rules only
	Memory   Retrieved           `json:"memory"`
}

// Context loads the active version's components for a run of persona id
// by user; text and doc drive memory retrieval (see Retrieve).
func (s *Service) Context(ctx context.Context, user, id, text, doc string) (RunContext, error) {
	if err := s.enabled(); err != nil {
		return RunContext{}, err
	}
	p, err := s.load(user, id)
	if err != nil {
		return RunContext{}, err
	}
	v, err := s.version(p, 0)
	if err != nil {
		return RunContext{}, err
	}
	rc := RunContext{Persona: p, Version: v}
	if s.sw.Style {
		prof, _, err := s.Style(ctx, user, id, v.Seq)
		if err != nil {
			return rc, err
		}
		rc.Style = &prof
	}
	if s.sw.Learning {
		l, ok, err := s.Learning(ctx, user, id, v.Seq)
		if err != nil {
			return rc, err
		}
		if ok {
			rc.Learning = l.Active()
		}
	}
	if rc.Memory, err = s.Retrieve(ctx, RetrieveRequest{User: user, Persona: id, Version: v.Seq, Text: text, ExcludeDoc: doc}); err != nil {
		return rc, err
	}
	return rc, nil
}
