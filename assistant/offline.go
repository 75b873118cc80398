package assistant

import (
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
)

// OfflineNote says what the offline local provider does with a choice,
// for a selector to show before a request rather than after a failed one:
// Edits is false when the local engine would answer "no change" because
// the choice needs a configured model provider (a writing preset, a
// persona, an editing preset with rules it does not implement); Reason
// says why, in the words the run would use.
type OfflineNote struct {
	Edits  bool   `json:"edits"`
	Reason string `json:"reason,omitempty"`
}

// WritingLocal reports whether the writing category runs on the offline
// local provider (the default when no model provider is configured).
func (s *Service) WritingLocal() bool {
	r, ok := s.gw.Route(quota.Writing)
	return ok && r.Settings.Provider == "local"
}

// PresetOffline is p's note when the writing category runs on the local
// provider, nil when it runs on a model provider (which honours every
// preset).
func (s *Service) PresetOffline(p Preset) (*OfflineNote, error) {
	if !s.WritingLocal() {
		return nil, nil
	}
	kind := "writing"
	var ep *llm.EditPreset
	if p.Type == EditingPreset {
		kind = "editing"
		v, err := s.loadPresetVersion(s.db, p.ID, p.Version.Number)
		if err != nil {
			return nil, err
		}
		ep = &llm.EditPreset{ID: p.ID, Name: p.Name, Rules: make([]string, len(v.Rules))}
		for i, r := range v.Rules {
			ep.Rules[i] = r.ID
		}
	}
	ok, reason := llm.LocalHonours(kind, ep)
	return &OfflineNote{Edits: ok, Reason: reason}, nil
}

// PersonaOffline is the note for any persona, nil on a model provider.
func (s *Service) PersonaOffline() *OfflineNote {
	if !s.WritingLocal() {
		return nil
	}
	ok, reason := llm.LocalHonours("persona", nil)
	return &OfflineNote{Edits: ok, Reason: reason}
}
