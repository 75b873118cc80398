package assistant

import (
	"context"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
)

// Observation kinds: the learning layer's immutable facts about decisions.
const (
	ObsAccepted          = "accepted"
	ObsRejected          = "rejected"
	ObsEditedAfterAccept = "edited_after_accept"
	ObsManualEdit        = "manual_edit"
)

// maxManualBlocks bounds the blocks one manual_edit observation lists;
// Omitted counts the rest.
const maxManualBlocks = 32

// Observation is an immutable fact about what an author did with a
// suggestion. edited_after_accept names a block the accepted suggestion
// produced and the author changed before the next checkpoint: Before is
// the content the suggestion produced, After the content the author
// sealed (zero when the author deleted the block).
//
// manual_edit is what the author changed by hand: one per checkpoint (or
// recovery) of a document whose changes came from draft saves, listing in
// Edits the blocks it changed against the previous version (at most
// maxManualBlocks; Omitted counts the rest), blocks an edited_after_accept
// of the same checkpoint names left out. It names no suggestion; it is
// attributed to the persona of the document's most recent suggestion
// (Suggestion, Run and Personalization are that suggestion's), or to none
// when that suggestion was made without a persona or there is none. The
// learning layer counts it and never turns it into a preference.
type Observation struct {
	Kind            string          `json:"kind" msgpack:"kind"`
	Suggestion      string          `json:"suggestion" msgpack:"sugg"`
	Run             string          `json:"run" msgpack:"run"`
	Doc             string          `json:"doc" msgpack:"doc"`
	Actor           string          `json:"actor" msgpack:"actor"`
	Personalization Personalization `json:"personalization" msgpack:"pers"`
	// Version is the label current when the observation was made (the
	// accepted version; the checkpoint that sealed the author's edit).
	Version string      `json:"version" msgpack:"version"`
	Block   string      `json:"block,omitempty" msgpack:"block,omitempty"`
	Before  objstore.ID `json:"before,omitzero" msgpack:"before,omitempty"`
	After   objstore.ID `json:"after,omitzero" msgpack:"after,omitempty"`
	Reason  string      `json:"reason,omitempty" msgpack:"reason,omitempty"`
	// Edits and Omitted: a manual_edit's blocks.
	Edits   []ObservedEdit `json:"edits,omitempty" msgpack:"edits,omitempty"`
	Omitted int            `json:"omitted,omitempty" msgpack:"omitted,omitempty"`
	Time    int64          `json:"time" msgpack:"time"`
}

// ObservedEdit is one block a manual edit changed: its content before and
// after (zero when added, zero when deleted).
type ObservedEdit struct {
	Block  string      `json:"block" msgpack:"block"`
	Before objstore.ID `json:"before,omitzero" msgpack:"before,omitempty"`
	After  objstore.ID `json:"after,omitzero" msgpack:"after,omitempty"`
}

// manualObsID is the key part that stands for the suggestion in a
// manual_edit's key: doc@label (suggestion ids have no '@').
func manualObsID(doc, label string) string { return doc + "@" + label }

// obsKeyOf is the key of o.
func obsKeyOf(o Observation) []byte {
	if o.Kind == ObsManualEdit {
		return obsKey(manualObsID(o.Doc, o.Version), o.Kind, "")
	}
	return obsKey(o.Suggestion, o.Kind, o.Block)
}

// observe adds o to b unless an observation with its key is already
// stored: observations are written once and never change.
//
// An observation of a persona run is also listed under its persona
// (t/aobsp), so that a generation reads only its persona's.
func (s *Service) observe(b *kv.Batch, o Observation) error {
	k := obsKeyOf(o)
	if ok, err := kv.Has(s.db, k); err != nil || ok {
		return err
	}
	if pp := o.Personalization.Persona; pp != nil && pp.ID != "" {
		rest := k[len(kv.TableKey(tableObs)):]
		if err := b.Set(append(obsPersonaPrefix(pp.ID), rest...), nil); err != nil {
			return err
		}
	}
	return kv.SetRecord(b, k, o)
}

// Observations returns the observations of suggestion id, in key order
// (accepted, edited_after_accept per block, rejected).
func (s *Service) Observations(ctx context.Context, id string) ([]Observation, error) {
	p := obsPrefix(id)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Observation
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var o Observation
		if err := kv.Unmarshal(it.Value(), &o); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, it.Error()
}

// produced remembers, until the next version, a block an accepted
// suggestion produced.
type produced struct {
	Suggestion      string          `msgpack:"sugg"`
	Run             string          `msgpack:"run"`
	Content         objstore.ID     `msgpack:"c"`
	Personalization Personalization `msgpack:"pers"`
}

// rememberProduced records the blocks an accept added or changed.
func (s *Service) rememberProduced(b *kv.Batch, c *repo.Change) error {
	var sg Suggestion
	if st, ok := c.Value.(*acceptState); ok && st.done {
		sg = st.sg // read by acceptIn in this batch
	} else {
		var err error
		if sg, err = s.loadSuggestion(s.db, c.SuggestionID); err != nil {
			return err
		}
	}
	content := make(map[string]objstore.ID, len(c.Changed)) // the changed blocks' content, in one pass without a map of the body
	want := make(map[string]bool, len(c.Changed))
	for _, id := range c.Changed {
		want[id] = true
	}
	for _, e := range c.Blocks {
		if want[e.ID] {
			content[e.ID] = e.Content
		}
	}
	for _, id := range c.Changed {
		if ct, ok := content[id]; ok {
			if err := kv.SetRecord(b, producedKey(c.Doc, id), produced{Suggestion: sg.ID, Run: sg.Run, Content: ct,
				Personalization: sg.Personalization}); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeWindow ends the window of produced blocks at a new version: a
// checkpoint (or recovery) that seals a produced block with other content
// records edited_after_accept; every marker is then dropped. It returns
// the blocks it recorded.
func (s *Service) closeWindow(b *kv.Batch, c *repo.Change) (map[string]bool, error) {
	p := producedPrefix(c.Doc)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	var edited map[string]bool
	defer it.Close()
	var content map[string]objstore.ID
	sealsEdits := c.Kind == objstore.KindCheckpoint || c.Kind == objstore.KindRecovery
	for it.First(); it.Valid(); it.Next() {
		block := lastAfterZero(it.Key())
		if sealsEdits {
			var pr produced
			if err := kv.Unmarshal(it.Value(), &pr); err != nil {
				return nil, err
			}
			if content == nil {
				content = make(map[string]objstore.ID, len(c.Blocks))
				for _, e := range c.Blocks {
					content[e.ID] = e.Content
				}
			}
			if now := content[block]; now != pr.Content {
				if err := s.observe(b, Observation{Kind: ObsEditedAfterAccept, Suggestion: pr.Suggestion, Run: pr.Run,
					Doc: c.Doc, Actor: c.Actor, Personalization: pr.Personalization, Version: c.Version.Label,
					Block: block, Before: pr.Content, After: now, Time: c.Time}); err != nil {
					return nil, err
				}
				if edited == nil {
					edited = map[string]bool{}
				}
				edited[block] = true
			}
		}
		if err := b.Delete(append([]byte(nil), it.Key()...)); err != nil {
			return nil, err
		}
	}
	return edited, it.Error()
}

// observeManual records the manual_edit of a checkpoint or recovery c:
// the blocks its transaction changed, except those in skip (an
// edited_after_accept names them), attributed to the persona of the
// document's most recent suggestion. A version that changed no block
// (attributes only) records nothing.
func (s *Service) observeManual(b *kv.Batch, c *repo.Change, skip map[string]bool) error {
	o := Observation{Kind: ObsManualEdit, Doc: c.Doc, Actor: c.Actor, Version: c.Version.Label, Time: c.Time}
	for _, ev := range c.Events {
		if skip[ev.BlockID] || ev.Before == ev.After {
			continue
		}
		if len(o.Edits) == maxManualBlocks {
			o.Omitted++
			continue
		}
		o.Edits = append(o.Edits, ObservedEdit{Block: ev.BlockID, Before: ev.Before, After: ev.After})
	}
	if len(o.Edits) == 0 {
		return nil
	}
	sg, ok, err := s.latestSuggestion(c.Doc)
	if err != nil {
		return err
	}
	if ok && sg.Personalization.Persona != nil {
		o.Suggestion, o.Run, o.Personalization = sg.ID, sg.Run, sg.Personalization
	}
	return s.observe(b, o)
}

// latestSuggestion is the document's most recently created suggestion.
func (s *Service) latestSuggestion(doc string) (Suggestion, bool, error) {
	p := suggDocPrefix(doc)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return Suggestion{}, false, err
	}
	defer it.Close()
	if !it.Last() {
		return Suggestion{}, false, it.Error()
	}
	sg, err := s.loadSuggestion(s.db, lastAfterZero(it.Key()))
	if err != nil {
		return Suggestion{}, false, err
	}
	return sg, true, nil
}

// ManualObservation returns the manual_edit observation of version label
// of doc, if one was recorded.
func (s *Service) ManualObservation(ctx context.Context, doc, label string) (Observation, bool, error) {
	var o Observation
	ok, err := kv.GetRecord(s.db, obsKey(manualObsID(doc, label), ObsManualEdit, ""), &o)
	return o, ok, err
}
