package llm_test

import (
	"testing"

	"github.com/foliodev/folio/internal/llm"
)

// The privacy rule: private content may reach the local provider always,
// an external one (or one not known) only with the deployment's switch.
func TestPrivateAllowed(t *testing.T) {
	local, remote := llm.NewLocal(""), externalProvider{}
	for _, tc := range []struct {
		p       llm.Provider
		send    bool
		allowed bool
	}{
		{local, false, true}, {local, true, true},
		{remote, false, false}, {remote, true, true},
		{nil, false, false}, {nil, true, true},
	} {
		if got := llm.PrivateAllowed(tc.p, tc.send); got != tc.allowed {
			t.Errorf("PrivateAllowed(%v, %v) = %v, want %v", tc.p, tc.send, got, tc.allowed)
		}
	}
}

type externalProvider struct{ llm.Provider }

func (externalProvider) Name() string { return "openai" }
