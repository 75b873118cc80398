package assistant

import (
	"context"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
)

// Choice is a session's current personalization: one of none, a writing
// preset, an editing preset or a persona, named by id. It is what the
// editor's selector remembers for the article's session, so that every
// entry point, tab and reload shows the same choice. It pins nothing: a
// request still names its personalization and pins the preset or
// persona version when it is queued.
type Choice struct {
	Kind PersonalizationKind `json:"kind" msgpack:"kind"`
	// ID is the preset's or persona's id ("" for none).
	ID string `json:"id,omitempty" msgpack:"id,omitempty"`
}

// request returns c as the fields of an assist request.
func (c Choice) request() AssistRequest {
	switch c.Kind {
	case PersonalizeWriting:
		return AssistRequest{WritingPreset: c.ID}
	case PersonalizeEditing:
		return AssistRequest{EditingPreset: c.ID}
	case PersonalizePersona:
		return AssistRequest{Persona: c.ID}
	}
	return AssistRequest{}
}

// checkChoice checks c as a request would (switches, the preset's type
// and archive state, the persona being a's), so that a session never
// remembers a choice its next request would refuse for what it chose.
func (s *Service) checkChoice(ctx context.Context, a Actor, c Choice) error {
	switch c.Kind {
	case PersonalizeNone:
		if c.ID != "" {
			return errs.E(errs.Invalid, "personalization none names no id (got %q)", c.ID)
		}
		return nil
	case PersonalizeWriting, PersonalizeEditing, PersonalizePersona:
		if c.ID == "" {
			return errs.E(errs.Invalid, "personalization %s needs the id of the %s", c.Kind, choiceNoun(c.Kind))
		}
	default:
		return errs.E(errs.Invalid, "personalization kind %q is not one of none, writing_preset, editing_preset, persona", c.Kind)
	}
	if _, err := s.personalization(c.request()); err != nil {
		return err
	}
	if c.Kind == PersonalizePersona {
		if _, err := s.personas.Get(ctx, a.UserID, c.ID); err != nil {
			return err
		}
	}
	return nil
}

func choiceNoun(k PersonalizationKind) string {
	switch k {
	case PersonalizeWriting:
		return "writing preset"
	case PersonalizeEditing:
		return "editing preset"
	}
	return "persona"
}

// SetChoice makes c the current personalization of a's session id and
// answers the session. The session's recency does not change (choosing is
// not using it). Errors: not_found (another user's session, in the words
// of a missing one), invalid (a bad kind, a missing id, a preset of the
// other type), preset_archived, the switches' assistant_disabled, and the
// persona codes.
func (s *Service) SetChoice(ctx context.Context, a Actor, id string, c Choice) (Session, error) {
	if err := a.identified(); err != nil {
		return Session{}, err
	}
	ss, err := s.ownSession(s.db, a, id)
	if err != nil {
		return Session{}, err
	}
	if err := s.checkChoice(ctx, a, c); err != nil {
		return Session{}, err
	}
	var out Session
	err = s.repo.Locked(ctx, ss.Doc, func(*repo.DocTx) error {
		cur, err := s.ownSession(s.db, a, id) // as it is now, under the lock
		if err != nil {
			return err
		}
		cur.Choice = &c
		b := s.db.NewBatch()
		defer b.Close()
		if err := kv.SetRecord(b, sessionKey(cur.ID), cur); err != nil {
			return err
		}
		out = cur
		return s.db.Apply(b, kv.Sync)
	})
	return out, repoErr(err)
}
