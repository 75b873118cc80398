package persona

import (
	"context"
	"fmt"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/persona/style"
)

// Describer asks a model provider for prose about a style profile: a
// short summary of what was measured. It returns nil prose when its
// provider is the local one, which adds nothing to the deterministic
// profile. The writing assistant implements it over its gateway.
type Describer interface {
	Describe(ctx context.Context, req DescribeRequest, p style.Profile) (*style.Prose, error)
}

// DescribeRequest says whose profile is described and by which
// generation (for usage accounting: the task and its attempt).
type DescribeRequest struct {
	User, Persona string
	Key           string
	Attempt       int
}

// UseDescriber makes generation ask d for the style profile's prose.
// Call it before the task runner starts; without it no prose is added.
func (s *Service) UseDescriber(d Describer) { s.describer = d }

// UseProvider names the model provider a persona's sources reach (the
// writing assistant's: its runs and the style prose). Generation allows a
// private or password source when llm.PrivateAllowed does: always with
// the local provider, else with [privacy] send_private_to_provider.
// Without it the provider counts as external. Call it before the task
// runner starts.
func (s *Service) UseProvider(p llm.Provider) { s.provider = p }

// PrivateAllowed reports whether a private or password source may be
// used by the persona's provider (llm.PrivateAllowed).
func (s *Service) PrivateAllowed() bool { return llm.PrivateAllowed(s.provider, s.sw.SendPrivate) }

// describe adds d's prose to profile beside, never instead of, the
// measured features, rules and evidence. Prose is optional: a provider
// that fails or answers prose the profile refuses leaves it out, with a
// note in the version; only the generation's own end (ctx) fails it.
func (s *Service) describe(ctx context.Context, req DescribeRequest, profile style.Profile) (style.Profile, string, error) {
	if s.describer == nil {
		return profile, "", nil
	}
	pr, err := s.describer.Describe(ctx, req, profile)
	if err != nil {
		if ctx.Err() != nil {
			return profile, "", ctx.Err()
		}
		return profile, fmt.Sprintf("style prose left out: %s: %s", errs.CodeOf(err), err), nil
	}
	if pr == nil {
		return profile, "", nil
	}
	with, err := profile.WithProse(*pr)
	if err != nil {
		return profile, fmt.Sprintf("style prose left out: %s", err), nil
	}
	return with, "", nil
}
