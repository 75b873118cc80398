package server

import (
	"net/http"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/persona"
)

// PresetView is a preset in the selector: the preset and, when the
// writing category runs on the offline local provider, what that
// provider does with it (offline.edits false: it needs a model provider).
type PresetView struct {
	assistant.Preset
	Offline *assistant.OfflineNote `json:"offline,omitempty"`
}

func presetViews(svc *assistant.Service, ps []assistant.Preset) ([]PresetView, error) {
	out := make([]PresetView, 0, len(ps))
	for _, p := range ps {
		note, err := svc.PresetOffline(p)
		if err != nil {
			return nil, err
		}
		out = append(out, PresetView{Preset: p, Offline: note})
	}
	return out, nil
}

// PersonaView is a persona in a listing, with the same offline note.
type PersonaView struct {
	persona.Persona
	Offline *assistant.OfflineNote `json:"offline,omitempty"`
}

func (s *Server) personaViews(ps []persona.Persona) []PersonaView {
	var note *assistant.OfflineNote
	if s.cfg.Assistant != nil {
		note = s.cfg.Assistant.PersonaOffline()
	}
	out := make([]PersonaView, 0, len(ps))
	for _, p := range ps {
		out = append(out, PersonaView{Persona: p, Offline: note})
	}
	return out
}

// setSessionChoice is PUT /v1/sessions/{session}/personalization: the
// session's current personalization, answered with the session.
func (s *Server) setSessionChoice(w http.ResponseWriter, r *http.Request, svc *assistant.Service, a assistant.Actor, ss assistant.Session) {
	var c assistant.Choice
	if err := decode(r, &c); err != nil {
		s.fail(w, r, err)
		return
	}
	out, err := svc.SetChoice(r.Context(), a, ss.ID, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
