package main

import (
	"log/slog"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/assistant/attrs"
	"github.com/foliodev/folio/assistant/reading"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/quota"
)

// narrowAssistants builds the daemon's attributes and reading assistants
// on the gateway's routes — each category's own settings, provider, policy
// and counters, the policies shared with the gateway's other users — both
// booking usage in ledger. A switched-off assistant is
// still built: it answers its *_disabled code.
func narrowAssistants(fc *config.Config, gw *assistant.Gateway, ledger *quota.Ledger, log *slog.Logger) (*attrs.Service, *reading.Service, error) {
	art, _ := gw.Route(quota.Attributes)
	a, err := attrs.New(attrs.Options{Route: art, Ledger: ledger, Enabled: fc.Attributes.Enabled,
		SendPrivate: fc.Privacy.SendPrivateToProvider})
	if err != nil {
		return nil, nil, err
	}
	rrt, _ := gw.Route(quota.Reading)
	rd, err := reading.New(reading.Options{Route: rrt, Ledger: ledger, Config: fc.Reading})
	if err != nil {
		return nil, nil, err
	}
	log.Info("narrow assistants", "attributes", fc.Attributes.Enabled, "attributes_provider", art.Provider.Name(),
		"attributes_settings", art.Source, "reading", fc.Reading.Enabled, "reading_provider", rrt.Provider.Name(),
		"reading_settings", rrt.Source, "send_private_to_provider", fc.Privacy.SendPrivateToProvider)
	return a, rd, nil
}
