package assistant

import (
	"context"
	"strings"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/persona/learning"
)

// LearningReader is the persona learning layer's view of the
// observations this service records (learning.Reader): the accepted,
// rejected and edited_after_accept observations of suggestions made by
// runs of one persona requested by one user, and the manual_edit
// observations attributed to such a run, each with the text it was
// about. A generation reads it; nothing here is written.
func (s *Service) LearningReader() learning.Reader { return learningReader{s} }

type learningReader struct{ s *Service }

var _ learning.Reader = learningReader{}

// Observations calls fn for user's observations of persona, in key order
// (by suggestion id, then kind and block): it reads the persona's list
// (t/aobsp) only, so its work is bounded by the persona's own
// observations. Observations of runs requested by another user are
// skipped.
func (r learningReader) Observations(ctx context.Context, user, persona string, fn func(learning.Observation) error) error {
	s := r.s
	p := obsPersonaPrefix(persona)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return err
	}
	defer it.Close()
	runs := map[string]bool{} // run id -> requested by user
	obsTable := kv.TableKey(tableObs)
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rest := it.Key()[len(p):]
		var o Observation
		ok, err := kv.GetRecord(s.db, append(append([]byte(nil), obsTable...), rest...), &o)
		if err != nil {
			return err
		}
		if !ok {
			return errs.E(errs.Corrupt, "assistant: persona %s lists observation %q, which is missing", persona, rest)
		}
		if pp := o.Personalization.Persona; pp == nil || pp.ID != persona {
			return errs.E(errs.Corrupt, "assistant: persona %s lists observation %q of another personalization", persona, rest)
		}
		mine, seen := runs[o.Run]
		if !seen {
			run, err := s.loadRun(s.db, o.Run)
			if err != nil {
				return err
			}
			mine = run.ActorID == user
			runs[o.Run] = mine
		}
		if !mine {
			continue
		}
		edits, err := r.edits(o)
		if err != nil {
			return err
		}
		lo := learning.Observation{Key: string(rest), Kind: o.Kind, User: user, Persona: persona,
			Suggestion: o.Suggestion, Doc: o.Doc, Time: o.Time, Edits: edits}
		if err := fn(lo); err != nil {
			return err
		}
	}
	return it.Error()
}

// edits are the texts an observation is about: for a decision, the text
// in the suggestion's scope at its baseline and the text its operations
// write; for edited_after_accept, the block the suggestion produced and
// what the author sealed instead ("" for a deleted block); for
// manual_edit, each block it lists before and after.
func (r learningReader) edits(o Observation) ([]learning.Edit, error) {
	if o.Kind == ObsManualEdit {
		out := make([]learning.Edit, 0, len(o.Edits))
		for _, e := range o.Edits {
			before, err := r.content(e.Before)
			if err != nil {
				return nil, err
			}
			after, err := r.content(e.After)
			if err != nil {
				return nil, err
			}
			out = append(out, learning.Edit{Before: before, After: after})
		}
		return out, nil
	}
	e, err := r.edit(o)
	if err != nil {
		return nil, err
	}
	return []learning.Edit{e}, nil
}

func (r learningReader) edit(o Observation) (learning.Edit, error) {
	if o.Kind == ObsEditedAfterAccept {
		before, err := r.content(o.Before)
		if err != nil {
			return learning.Edit{}, err
		}
		after, err := r.content(o.After)
		return learning.Edit{Before: before, After: after}, err
	}
	sg, err := r.s.loadSuggestion(r.s.db, o.Suggestion)
	if err != nil {
		return learning.Edit{}, err
	}
	var parts []string
	for _, t := range sg.Base.Targets {
		text, err := r.content(t.Content)
		if err != nil {
			return learning.Edit{}, err
		}
		parts = append(parts, text)
	}
	before := strings.Join(parts, "\n")
	if sg.Scope.Kind == ScopeSelection && len(parts) == 1 {
		rs := []rune(parts[0])
		if sg.Scope.Start >= 0 && sg.Scope.End <= len(rs) && sg.Scope.Start <= sg.Scope.End {
			before = string(rs[sg.Scope.Start:sg.Scope.End])
		}
	}
	return learning.Edit{Before: before, After: opsText(sg.Ops)}, nil
}

// content is the text of a block content object ("" for the zero id).
func (r learningReader) content(id objstore.ID) (string, error) {
	if id.IsZero() {
		return "", nil
	}
	kind, data, err := r.s.repo.Objects().Get(id)
	if err != nil {
		return "", err
	}
	if kind != objstore.KindContent {
		return "", errs.E(errs.Corrupt, "assistant: object %s is a %v, not block content", id.Short(), kind)
	}
	b, err := objstore.DecodeContent(data)
	if err != nil {
		return "", errs.E(errs.Corrupt, "assistant: decode block content %s: %w", id.Short(), err)
	}
	return blockText(b), nil
}
