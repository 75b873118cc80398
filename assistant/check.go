package assistant

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
)

// CheckReport is the outcome of Check (`folio ai check`), in the same
// form whether the CLI ran the check itself or a daemon ran it with its
// configuration.
type CheckReport struct {
	Category string `json:"category"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	BaseURL  string `json:"base_url,omitempty"`
	// About says what the provider is when that is not obvious: the
	// local provider is offline and only tidies the prompt.
	About        string            `json:"about,omitempty"`
	Source       string            `json:"source"`
	Describe     string            `json:"settings"` // config.Resolved.Describe
	Origins      map[string]string `json:"origins"`
	LatencyMS    int64             `json:"latency_ms"`
	FirstTextMS  int64             `json:"first_text_ms"`
	Text         string            `json:"text"`
	FinishReason string            `json:"finish_reason,omitempty"`
	Usage        llm.Usage         `json:"usage"`
	UsageKnown   bool              `json:"usage_reported"`
	Booked       bool              `json:"booked"`
	Error        *CheckError       `json:"error,omitempty"`
}

// CheckError is a failed check's error in the report.
type CheckError struct {
	Code    string `json:"code"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// aboutLocal explains the default provider in one sentence.
const aboutLocal = "the offline local provider (the default): no model is called; a rule-based Chinese and English " +
	"editor answers (it returns the prompt edited by fixed rules), so that Folio works without a model server; " +
	"set provider = \"openai\" in [ai] (docs/ai.md) to use a real model"

// Check sends prompt as one small streamed request through category cat's
// provider and policy, as the assistant would, calling onText (may be nil)
// with each piece of text as it arrives. It returns the report and, when
// the call failed, an error in one line naming the category, the provider,
// the code and what to change (with the kind of the gateway's error); the
// report then carries the same error.
func (g *Gateway) Check(ctx context.Context, cat quota.Category, prompt string, onText func(string)) (*CheckReport, error) {
	route, ok := g.Route(cat)
	if !ok {
		return nil, errs.C(errs.Disabled, CodeNotConfigured, "ai check %s: no provider configured for the category", cat)
	}
	rs := route.Settings
	start := time.Now()
	var first time.Duration
	res, err := g.Text(ctx, Request{
		Category:  cat,
		Messages:  []llm.Message{{Role: llm.User, Content: prompt}},
		MaxTokens: 64,
		OnText: func(s string) {
			if first == 0 {
				first = time.Since(start)
			}
			if onText != nil {
				onText(s)
			}
		},
	})
	rep := &CheckReport{
		Category: string(cat), Provider: route.Provider.Name(), Model: route.Provider.Model(), Source: string(rs.Source),
		Describe: rs.Describe(), Origins: rs.Origins, LatencyMS: time.Since(start).Milliseconds(), FirstTextMS: first.Milliseconds(),
	}
	if res != nil {
		rep.Text, rep.FinishReason, rep.Usage, rep.UsageKnown, rep.Booked = res.Text, res.FinishReason, res.Usage, res.UsageKnown, res.Booked
	}
	switch rs.Provider {
	case "openai":
		rep.BaseURL = rs.BaseURL
	case "local":
		rep.About = aboutLocal
	}
	if err != nil {
		err = checkFailure(cat, rs, rep, err)
		rep.Error = &CheckError{Code: errs.CodeOf(err), Kind: errs.KindOf(err).String(), Message: err.Error()}
		return rep, err
	}
	return rep, nil
}

// checkFailure turns a gateway error into one line naming the category,
// the provider and what to fix; it keeps the gateway error's kind and
// code.
func checkFailure(cat quota.Category, rs config.Resolved, rep *CheckReport, err error) error {
	var ge *Error
	if !errors.As(err, &ge) {
		return fmt.Errorf("ai check %s: %w", cat, err)
	}
	env := func(key string) string { return "FOLIO_AI_" + strings.ToUpper(string(cat)+"_"+key) }
	from := func(key string) string {
		o := rs.Origins[key]
		if o == "default" {
			return "the default"
		}
		return o
	}
	// fix names where to change key: where it is set now, or where to set it.
	fix := func(key string) string {
		switch o := rs.Origins[key]; {
		case o == "" || o == "default":
			return fmt.Sprintf("%s in [ai.%s] or %s", key, cat, env(strings.ToUpper(key)))
		case strings.HasPrefix(o, "env "):
			return fmt.Sprintf("%s (set by %s)", key, strings.TrimPrefix(o, "env "))
		default:
			return fmt.Sprintf("%s (set in %s; or override with %s)", key, o, env(strings.ToUpper(key)))
		}
	}
	prov := rs.Provider
	if rs.Provider == "openai" {
		prov += " at " + rs.BaseURL
	}
	var what string
	switch ge.Code {
	case CodeUnreachable:
		what = fmt.Sprintf("cannot reach the provider (%v); start the model server or fix %s", cause(err), fix("base_url"))
	case CodeUnauthorized:
		what = fmt.Sprintf("the provider rejected the credentials (HTTP 401/403); set a valid %s", fix("api_key"))
	case CodeRateLimited:
		what = "the provider is rate limiting (HTTP 429)"
		if ge.RetryAfter > 0 {
			what += fmt.Sprintf("; retry in %s", ge.RetryAfter.Round(time.Second))
		}
		what += "; lower requests_per_minute in [ai." + string(cat) + "] or raise the account's limit"
	case CodeStreamCut:
		what = fmt.Sprintf("the stream was cut before the answer completed (%d characters received); the reservation of %d tokens was charged; check the server and any proxy's timeouts",
			len(rep.Text), rep.Usage.Total)
	case CodeTimeout:
		what = fmt.Sprintf("no complete answer within %s; raise %s, or check the server's load", rs.Timeout, fix("timeout"))
	case CodeBadRequest:
		what = fmt.Sprintf("the provider rejected the request (%v); check model %q (from %s), or set response_format = false for servers without JSON mode",
			cause(err), rs.Model, from("model"))
	case CodeProviderError:
		what = fmt.Sprintf("the provider failed (%v); try again later or check the server's logs", cause(err))
	case CodeCancelled:
		what = "cancelled"
	default:
		var qe *quota.Error
		if errors.As(err, &qe) {
			what = qe.Limit + " reached"
			if qe.RetryAfter > 0 {
				what += fmt.Sprintf("; retry in %s", qe.RetryAfter.Round(time.Second))
			}
			what += fmt.Sprintf("; the limits are in [ai.%s] (or [ai])", cat)
		} else {
			what = cause(err).Error()
		}
	}
	return &errs.Error{Kind: errs.KindOf(err), Code: errs.CodeOf(err), RetryAfter: ge.RetryAfter, Err: err,
		NoRetry: !ge.Retryable(),
		Msg:     fmt.Sprintf("ai check %s: provider %s: %s: %s", cat, prov, ge.Code, what)}
}

// cause is the innermost useful message of a provider error.
func cause(err error) error {
	var le *llm.Error
	if errors.As(err, &le) {
		switch {
		case le.Msg != "" && le.Err != nil:
			return fmt.Errorf("%s: %v", le.Msg, le.Err)
		case le.Msg != "":
			return errors.New(le.Msg)
		case le.Err != nil:
			return le.Err
		}
		return errors.New(string(le.Code))
	}
	return err
}
