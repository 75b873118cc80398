package assistant

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/style"
)

// ProsePrompt names the prompt that asks for a style profile's prose, and
// its version.
const ProsePrompt = "style-prose/1"

// maxProseRunes bounds the prose kept from an answer.
const maxProseRunes = 600

// proseSystem asks for a summary of the measured profile only.
const proseSystem = `You describe an author's writing style for the author. You are given a style profile that was measured in the author's published articles: a summary, weighted rules and measured features. Write one short paragraph (at most 3 sentences) that summarizes the style in the language of the summary. Use only what the profile states; never add facts about the author, guesses or advice. Answer with the paragraph only.`

// StyleProse is the persona service's Describer: the writing category's
// provider writes a short prose summary of a generated style profile.
// The local provider adds nothing (nil prose): the deterministic
// profile is already its own description.
func (s *Service) StyleProse() persona.Describer { return styleProse{gw: s.gw} }

type styleProse struct{ gw *Gateway }

func (d styleProse) Describe(ctx context.Context, req persona.DescribeRequest, p style.Profile) (*style.Prose, error) {
	route, ok := d.gw.Route(quota.Writing)
	if !ok || route.Provider == nil || route.Provider.Name() == "local" {
		return nil, nil
	}
	res, err := d.gw.Text(ctx, Request{Category: quota.Writing, User: req.User, MaxTokens: 400,
		Messages: []llm.Message{{Role: llm.System, Content: proseSystem}, {Role: llm.User, Content: profileText(&p)}},
		Trace:    Trace{TaskID: req.Key, Attempt: req.Attempt}})
	if err != nil {
		return nil, err
	}
	text := strings.TrimSpace(res.Text)
	if text == "" {
		return nil, errs.E(errs.Invalid, "the provider answered no prose for the style profile")
	}
	if utf8.RuneCountInString(text) > maxProseRunes {
		text = string([]rune(text)[:maxProseRunes])
	}
	return &style.Prose{Provider: res.Provider, Model: res.Model, Prompt: ProsePrompt, Summary: text}, nil
}

// profileText is what the provider is shown of a profile: its summary,
// rules and measured features, never the sources' text.
func profileText(p *style.Profile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Summary: %s\n\nRules:\n", p.Summary)
	for _, r := range p.Rules {
		fmt.Fprintf(&b, "- [%s, weight %.2f] %s\n", r.Dimension, r.Weight, r.Statement)
	}
	b.WriteString("\nMeasured features:\n")
	for _, dim := range p.Dimensions {
		for _, f := range dim.Features {
			if f.Label != "" {
				fmt.Fprintf(&b, "- %s / %s: %s\n", dim.Name, f.Name, f.Label)
			} else {
				fmt.Fprintf(&b, "- %s / %s: %g %s\n", dim.Name, f.Name, f.Value, f.Unit)
			}
		}
	}
	return b.String()
}
