package attrs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
)

// Specific error codes (stable, append-only).
const (
	// CodeDisabled (kind disabled): [attributes] enabled is off.
	CodeDisabled = "attributes_disabled"
	// CodePrivateBlocked (kind forbidden): the article is private or
	// password-protected, the provider is external and [privacy]
	// send_private_to_provider is off.
	CodePrivateBlocked = "private_content_blocked"
)

// Input is everything the assistant may read: the article's current
// title and body and the site's categories and tags. Private says whether
// the article is private or password-protected (its visibility), which
// decides whether an external provider may see it.
type Input struct {
	Title      string
	Body       flowdoc.Document
	Categories []string
	Tags       []string
	Private    bool
}

// Suggestion is a suggested set of attributes. The author adopts any of
// them by saving them into the draft (SaveDraft), like any edit.
type Suggestion struct {
	// Title is a proposed title; "" when it proposes none (the local
	// engine proposes one only for an article without a real title).
	Title    string   `json:"title,omitempty"`
	Summary  string   `json:"summary"`
	Slug     string   `json:"slug"`
	Category string   `json:"category,omitempty"`
	Tags     []string `json:"tags"`
	// Provider and Model answered; Source is the settings source of the
	// attributes category (dedicated, compat or mixed).
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Source   string    `json:"source"`
	Usage    llm.Usage `json:"usage"`
}

// Limits of what is sent and accepted.
const (
	MaxTextBlocks = 400      // blocks of the body sent
	MaxText       = 24 << 10 // bytes of body text sent
	MaxTitle      = 120      // runes of a title
	MaxSummary    = 300      // runes of a summary
	MaxSlug       = 80       // bytes of a slug
	MaxTags       = 8        // tags of a suggestion
	maxNames      = 500      // categories or tags sent
	maxAnswer     = 1024     // answer tokens
)

// Options configure a Service.
type Options struct {
	// Route is the attributes category's route (gateway.Route(
	// quota.Attributes)): its policy is the category's own counters. A
	// local provider in it is replaced by this package's Local engine.
	Route assistant.Route
	// Ledger books usage (BookSafe).
	Ledger *quota.Ledger
	// Enabled is [attributes] enabled; SendPrivate is [privacy]
	// send_private_to_provider.
	Enabled     bool
	SendPrivate bool
	Now         func() time.Time
}

// Service suggests article attributes. It is safe for concurrent use.
type Service struct {
	gw          *assistant.Gateway
	route       assistant.Route
	enabled     bool
	sendPrivate bool
}

// New returns the service.
func New(o Options) (*Service, error) {
	if o.Route.Provider == nil || o.Route.Policy == nil {
		return nil, fmt.Errorf("attrs: the route needs a provider and a policy")
	}
	if o.Route.Policy.Category() != quota.Attributes {
		return nil, fmt.Errorf("attrs: the route's policy is %s's, want attributes", o.Route.Policy.Category())
	}
	rt := o.Route
	if rt.Provider.Name() == "local" {
		rt.Provider = NewLocal(rt.Provider.Model())
	}
	return &Service{gw: assistant.New(map[quota.Category]assistant.Route{quota.Attributes: rt}, o.Ledger, o.Now),
		route: rt, enabled: o.Enabled, sendPrivate: o.SendPrivate}, nil
}

// External reports whether the provider sends content off this machine.
func (s *Service) External() bool { return llm.External(s.route.Provider) }

// request is the JSON the model reads: the user message.
type request struct {
	Title      string      `json:"title"`
	Document   []textBlock `json:"document"`
	Categories []string    `json:"categories"`
	Tags       []string    `json:"tags"`
}

// textBlock is one block of the body as the model sees it.
type textBlock struct {
	Type  string `json:"type"`
	Level int    `json:"level,omitempty"`
	Text  string `json:"text"`
}

// answer is the JSON the model answers.
type answer struct {
	Title    string   `json:"title,omitempty"`
	Summary  string   `json:"summary"`
	Slug     string   `json:"slug"`
	Category string   `json:"category"`
	Tags     []string `json:"tags"`
}

const systemPrompt = `You fill in the attributes of a blog article. The user message is a JSON object with the article's title, its document (blocks of text in order), and the site's existing categories and tags.
Answer with one JSON object and nothing else: {"title": string, "summary": string, "slug": string, "category": string, "tags": [string]}.
- title: a short title for the article in its language, at most 120 characters; "" when the current title already says what the article is about.
- summary: one to three sentences that say what the article is about, in the article's language, at most 300 characters, only from what the article says.
- slug: the title as a URL slug: lowercase ASCII letters, digits and hyphens, at most 80 characters (Chinese as pinyin without tones).
- category: exactly one of the existing categories, or "" when none fits.
- tags: up to 8 tags; prefer existing tags; each at most 64 characters.`

// Prompt returns the messages sent to the provider for in: a fixed system
// prompt and one user message holding the JSON of the title, the body's
// text blocks and the category and tag names — nothing else.
func Prompt(in Input) []llm.Message {
	req := request{Title: in.Title, Document: textBlocks(in.Body), Categories: clipNames(in.Categories), Tags: clipNames(in.Tags)}
	b, _ := json.Marshal(req) // plain data: cannot fail
	return []llm.Message{{Role: llm.System, Content: systemPrompt}, {Role: llm.User, Content: string(b)}}
}

func clipNames(ns []string) []string {
	if ns == nil {
		return []string{}
	}
	if len(ns) > maxNames {
		ns = ns[:maxNames]
	}
	return ns
}

func textBlocks(d flowdoc.Document) []textBlock {
	out := []textBlock{}
	size := 0
	var walk func(bs []flowdoc.Block)
	walk = func(bs []flowdoc.Block) {
		for _, b := range bs {
			if len(out) >= MaxTextBlocks || size >= MaxText {
				return
			}
			tb := textBlock{Type: string(b.Type)}
			switch b.Type {
			case flowdoc.Heading:
				if b.Attrs != nil {
					tb.Level = b.Attrs.Level
				}
				tb.Text = flowdoc.PlainText(b.RichText)
			case flowdoc.List:
				var items []string
				var walkItems func([]flowdoc.ListItem)
				walkItems = func(its []flowdoc.ListItem) {
					for _, it := range its {
						items = append(items, flowdoc.PlainText(it.RichText))
						walkItems(it.Items)
					}
				}
				walkItems(b.Items)
				tb.Text = strings.Join(items, "\n")
			case flowdoc.Code, flowdoc.Equation, flowdoc.Media, flowdoc.Table, flowdoc.Bookmark, flowdoc.File, flowdoc.Embed:
				continue // not prose: nothing a summary or a tag is made from
			default:
				tb.Text = flowdoc.PlainText(b.RichText)
			}
			if strings.TrimSpace(tb.Text) != "" {
				if size+len(tb.Text) > MaxText {
					tb.Text = clipBytes(tb.Text, MaxText-size)
				}
				size += len(tb.Text)
				out = append(out, tb)
			}
			walk(b.Children)
			for _, c := range b.Cols {
				walk(c.Blocks)
			}
		}
	}
	walk(d.Blocks)
	return out
}

func clipBytes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Suggest suggests attributes for in, as user. It creates no run, task or
// suggestion record and writes nothing but the attributes category's
// counters and one usage event (booked with BookSafe: a failed booking
// keeps the answer and marks the statistics incomplete).
//
// It refuses with attributes_disabled when switched off, and with
// private_content_blocked — before anything is sent — when the article is
// private or password-protected, the provider is external and the
// deployment does not allow sending private content.
func (s *Service) Suggest(ctx context.Context, user string, in Input) (Suggestion, error) {
	if !s.enabled {
		return Suggestion{}, errs.C(errs.Disabled, CodeDisabled, "the attributes assistant is switched off ([attributes] enabled = false)")
	}
	if in.Private && !llm.PrivateAllowed(s.route.Provider, s.sendPrivate) {
		return Suggestion{}, errs.C(errs.Forbidden, CodePrivateBlocked,
			"this article is private or password-protected and the attributes provider (%s) is external; the deployment allows sending private content only with [privacy] send_private_to_provider = true", s.route.Provider.Name())
	}
	cats := map[string]string{}
	for _, c := range in.Categories {
		cats[strings.ToLower(strings.TrimSpace(c))] = c
	}
	var out answer
	res, err := s.gw.Structured(ctx, assistant.Request{Category: quota.Attributes, User: user, Messages: Prompt(in), MaxTokens: maxAnswer},
		func(obj json.RawMessage) error {
			var a answer
			if err := json.Unmarshal(obj, &a); err != nil {
				return fmt.Errorf("answer is not {summary, slug, category, tags}: %w", err)
			}
			a, err := clean(a, cats)
			if err != nil {
				return err
			}
			out = a
			return nil
		})
	if err != nil {
		return Suggestion{}, err
	}
	return Suggestion{Title: out.Title, Summary: out.Summary, Slug: out.Slug, Category: out.Category, Tags: out.Tags,
		Provider: res.Provider, Model: res.Model, Source: s.route.Source, Usage: res.Usage}, nil
}

// clean checks and normalizes an answer: the title on one line and
// bounded, the slug made valid, the
// category one of the existing ones (or dropped), tags bounded.
func clean(a answer, cats map[string]string) (answer, error) {
	// A title is one line; an unusable one is no proposal, not a failure.
	a.Title = strings.Join(strings.Fields(a.Title), " ")
	if utf8.RuneCountInString(a.Title) > MaxTitle {
		a.Title = string([]rune(a.Title)[:MaxTitle-1]) + "…"
	}
	a.Summary = strings.TrimSpace(a.Summary)
	if a.Summary == "" {
		return a, fmt.Errorf("the summary is empty")
	}
	if utf8.RuneCountInString(a.Summary) > MaxSummary {
		a.Summary = string([]rune(a.Summary)[:MaxSummary-1]) + "…"
	}
	a.Slug = Slugify(a.Slug)
	if a.Slug == "" {
		return a, fmt.Errorf("the slug is empty once made of a-z, 0-9 and '-'")
	}
	if a.Category != "" {
		a.Category = cats[strings.ToLower(strings.TrimSpace(a.Category))] // "" when not an existing one
	}
	var tags []string
	seen := map[string]bool{}
	for _, t := range a.Tags {
		t = strings.TrimSpace(t)
		k := strings.ToLower(t)
		if t == "" || len(t) > 64 || seen[k] || strings.ContainsAny(t, "\x00\n\r\t") {
			continue
		}
		seen[k] = true
		tags = append(tags, t)
		if len(tags) == MaxTags {
			break
		}
	}
	if tags == nil {
		tags = []string{}
	}
	a.Tags = tags
	return a, nil
}
