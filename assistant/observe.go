package assistant

import (
	"context"

	"github.com/cockroachdb/pebble"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
)

// Observation kinds: the learning layer's immutable facts about decisions.
const (
	ObsAccepted          = "accepted"
	ObsRejected          = "rejected"
	ObsEditedAfterAccept = "edited_after_accept"
)

// Observation is an immutable fact about what an author did with a
// suggestion. edited_after_accept names a block the accepted suggestion
// produced and the author changed before the next checkpoint: Before is
// the content the suggestion produced, After the content the author
// sealed (zero when the author deleted the block).
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
	Time    int64       `json:"time" msgpack:"time"`
}

// observe adds o to b unless an observation with its key is already
// stored: observations are written once and never change.
//
// An observation of a persona run is also listed under its persona
// (t/aobsp), so that a generation reads only its persona's.
func (s *Service) observe(b *pebble.Batch, o Observation) error {
	k := obsKey(o.Suggestion, o.Kind, o.Block)
	if ok, err := kv.Has(s.db, k); err != nil || ok {
		return err
	}
	if pp := o.Personalization.Persona; pp != nil && pp.ID != "" {
		rest := k[len(kv.TableKey(tableObs)):]
		if err := b.Set(append(obsPersonaPrefix(pp.ID), rest...), nil, nil); err != nil {
			return err
		}
	}
	return kv.SetRecord(b, k, o)
}

// Observations returns the observations of suggestion id, in key order
// (accepted, edited_after_accept per block, rejected).
func (s *Service) Observations(ctx context.Context, id string) ([]Observation, error) {
	p := obsPrefix(id)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
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
func (s *Service) rememberProduced(b *pebble.Batch, c *repo.Change) error {
	sg, err := s.loadSuggestion(s.db, c.SuggestionID)
	if err != nil {
		return err
	}
	content := make(map[string]objstore.ID, len(c.Blocks))
	for _, e := range c.Blocks {
		content[e.ID] = e.Content
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
// records edited_after_accept; every marker is then dropped.
func (s *Service) closeWindow(b *pebble.Batch, c *repo.Change) error {
	p := producedPrefix(c.Doc)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return err
	}
	defer it.Close()
	var content map[string]objstore.ID
	sealsEdits := c.Kind == objstore.KindCheckpoint || c.Kind == objstore.KindRecovery
	for it.First(); it.Valid(); it.Next() {
		block := lastAfterZero(it.Key())
		if sealsEdits {
			var pr produced
			if err := kv.Unmarshal(it.Value(), &pr); err != nil {
				return err
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
					return err
				}
			}
		}
		if err := b.Delete(append([]byte(nil), it.Key()...), nil); err != nil {
			return err
		}
	}
	return it.Error()
}
