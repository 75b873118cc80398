package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
)

func init() { extraCommands = append(extraCommands, aiCommands()...) }

// aiOpenStore and aiLoadConfig open the data directory and load the
// configuration for the AI verbs; they are variables so that a shared
// openStore/loadConfig can take their place.
var (
	aiOpenStore  = openStoreAI
	aiLoadConfig = loadConfigAI
)

// openStoreAI opens the data directory named by --data for writing.
func openStoreAI(c *cli.Context) (*kv.DB, func(), error) {
	if c.String("server") != "" {
		return nil, nil, exitf(exitUsage, "folio %s works on a data directory (--data), not through --server; with a daemon running, read its admin usage endpoint", c.Command.FullName())
	}
	dir := c.String("data")
	if dir == "" {
		dir = "./folio-data"
	}
	db, err := kv.Open(dir, kv.Options{})
	if err != nil {
		return nil, nil, storeError(dir, err)
	}
	return db, func() { db.Close() }, nil
}

// loadConfigAI loads --config (none means defaults) with environment
// overrides.
func loadConfigAI(c *cli.Context) (*config.Config, error) {
	cfg, err := config.Load(c.String("config"), nil)
	if err != nil {
		return nil, exitf(exitInvalid, "%v", err)
	}
	return cfg, nil
}

// asJSON checks --format and reports whether it asks for JSON.
func asJSON(c *cli.Context) (bool, error) {
	f, err := checkFormat(c, "text", "json")
	return f == "json", err
}

// aiCommands are the operator verbs for model access: `folio usage` and
// `folio ai check`.
func aiCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:  "usage",
			Usage: "show daily token usage per AI category and whether the statistics are complete",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "days", Value: 7, Usage: "report the last `N` UTC days, today included"},
				formatFlag("text", "text", "json"),
			},
			Action: usageAction,
		},
		{
			Name:  "ai",
			Usage: "inspect model access",
			Subcommands: []*cli.Command{{
				Name:  "check",
				Usage: "send one small streamed request through a category's provider and policy",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "category", Value: "writing", Usage: "`CATEGORY`: writing, reading or attributes"},
					&cli.StringFlag{Name: "prompt", Value: defaultCheckPrompt, Usage: "the `TEXT` to send"},
					formatFlag("text", "text", "json"),
				},
				Action: aiCheckAction,
			}},
		},
	}
}

const defaultCheckPrompt = "Reply with one short sentence saying that you received this check."

func usageAction(c *cli.Context) error {
	jsonOut, err := asJSON(c)
	if err != nil {
		return err
	}
	days := c.Int("days")
	if days < 1 || days > quota.MaxReportDays {
		return exitf(exitUsage, "usage: --days must be from 1 to %d", quota.MaxReportDays)
	}
	cfg, err := aiLoadConfig(c)
	if err != nil {
		return err
	}
	db, closeDB, err := aiOpenStore(c)
	if err != nil {
		return err
	}
	defer closeDB()
	rep, err := quota.NewLedger(db, quota.LedgerOptions{}).Report(days)
	if err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	rep.Sources = map[quota.Category]string{}
	for _, cat := range quota.Categories {
		r, err := cfg.AICategory(string(cat))
		if err != nil {
			return err
		}
		rep.Sources[cat] = string(r.Source)
	}
	w := c.App.Writer
	if jsonOut {
		return printJSON(w, rep)
	}
	fmt.Fprintf(w, "Token usage %s .. %s (UTC)\n", rep.From, rep.To)
	if rep.Health == quota.HealthIncomplete {
		fmt.Fprintf(w, "health: incomplete — %d usage booking(s) failed, totals undercount (the daemon log has the warnings)\n", rep.Failures)
	} else {
		fmt.Fprintln(w, "health: ok")
	}
	fmt.Fprintf(w, "\n%-10s  %-10s  %8s  %10s  %10s  %10s\n", "date", "category", "calls", "input", "output", "total")
	rows := 0
	for _, d := range rep.Days {
		for _, cat := range quota.Categories {
			t := d.Categories[cat]
			if t.Events == 0 {
				continue
			}
			rows++
			fmt.Fprintf(w, "%-10s  %-10s  %8d  %10d  %10d  %10d%s\n", d.Date, cat, t.Events, t.Input, t.Output, t.Total, estimatedNote(t))
		}
		if d.Health == quota.HealthIncomplete {
			fmt.Fprintf(w, "%-10s  %d booking(s) failed\n", d.Date, d.Failures)
		}
	}
	if rows == 0 {
		fmt.Fprintln(w, "(no model calls)")
	}
	fmt.Fprintln(w)
	for _, cat := range quota.Categories {
		t := rep.Totals[cat]
		fmt.Fprintf(w, "%-10s  %-10s  %8d  %10d  %10d  %10d  settings: %s\n", "total", cat, t.Events, t.Input, t.Output, t.Total, rep.Sources[cat])
	}
	printMeters(w, rep)
	return nil
}

func estimatedNote(t quota.Totals) string {
	if t.Estimated == 0 {
		return ""
	}
	return fmt.Sprintf("  (%d estimated: no usage reported)", t.Estimated)
}

// checkReport is `folio ai check --format json`'s output.
type checkReport struct {
	Category     string            `json:"category"`
	Provider     string            `json:"provider"`
	Model        string            `json:"model"`
	BaseURL      string            `json:"base_url,omitempty"`
	Source       string            `json:"source"`
	Origins      map[string]string `json:"origins"`
	LatencyMS    int64             `json:"latency_ms"`
	FirstTextMS  int64             `json:"first_text_ms,omitempty"`
	Text         string            `json:"text"`
	FinishReason string            `json:"finish_reason,omitempty"`
	Usage        llm.Usage         `json:"usage"`
	UsageKnown   bool              `json:"usage_reported"`
	Booked       bool              `json:"booked"`
	Error        *checkError       `json:"error,omitempty"`
}

type checkError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func aiCheckAction(c *cli.Context) error {
	jsonOut, err := asJSON(c)
	if err != nil {
		return err
	}
	cat, err := quota.ParseCategory(c.String("category"))
	if err != nil {
		return exitf(exitUsage, "ai check: %v", err)
	}
	prompt := strings.TrimSpace(c.String("prompt"))
	if prompt == "" {
		return exitf(exitUsage, "ai check: --prompt must not be empty")
	}
	cfg, err := aiLoadConfig(c)
	if err != nil {
		return err
	}
	db, closeDB, err := aiOpenStore(c)
	if err != nil {
		return err
	}
	defer closeDB()
	ledger := quota.NewLedger(db, quota.LedgerOptions{})
	g, err := assistant.Open(cfg, db, ledger, nil)
	if err != nil {
		return fmt.Errorf("ai check %s: %w", cat, err)
	}
	route, _ := g.Route(cat)
	rs := route.Settings

	w := c.App.Writer
	start := time.Now()
	var first time.Duration
	onText := func(s string) {
		if first == 0 {
			first = time.Since(start)
		}
		if !jsonOut {
			io.WriteString(w, s)
		}
	}
	ctx := c.Context
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := g.Text(ctx, assistant.Request{
		Category:  cat,
		Messages:  []llm.Message{{Role: llm.User, Content: prompt}},
		MaxTokens: 64,
		OnText:    onText,
	})
	latency := time.Since(start)
	rep := checkReport{
		Category: string(cat), Provider: route.Provider.Name(), Model: route.Provider.Model(), Source: string(rs.Source),
		Origins: rs.Origins, LatencyMS: latency.Milliseconds(), FirstTextMS: first.Milliseconds(),
		Text: res.Text, FinishReason: res.FinishReason, Usage: res.Usage, UsageKnown: res.UsageKnown, Booked: res.Booked,
	}
	if rs.Provider == "openai" {
		rep.BaseURL = rs.BaseURL
	}
	var failure error
	if err != nil {
		failure = checkFailure(cat, rs, res, err)
		rep.Error = &checkError{Code: assistant.CodeOf(err), Message: failure.Error()}
	}
	if jsonOut {
		if err := printJSON(w, rep); err != nil {
			return err
		}
		return failure // the JSON on stdout, the one-line error on stderr
	}
	if res.Text != "" {
		fmt.Fprintln(w)
	}
	if failure != nil {
		return failure
	}
	where := rep.Model
	if rep.BaseURL != "" {
		where += " at " + rep.BaseURL
	}
	fmt.Fprintf(w, "\ncategory: %s\n", cat)
	fmt.Fprintf(w, "provider: %s (model %s)\n", rep.Provider, where)
	fmt.Fprintf(w, "config:   %s (%s)\n", rs.Source, rs.Describe())
	fmt.Fprintf(w, "latency:  %s total, first text after %s\n", latency.Round(time.Millisecond), first.Round(time.Millisecond))
	usage := fmt.Sprintf("%d input, %d output, %d total tokens", res.Usage.Input, res.Usage.Output, res.Usage.Total)
	if !res.UsageKnown {
		usage += " (estimated: the provider reported no usage; enable stream usage or check the server version)"
	}
	if res.Booked {
		usage += ", booked under " + string(cat)
	} else {
		usage += ", NOT booked (statistics marked incomplete)"
	}
	fmt.Fprintf(w, "usage:    %s\n", usage)
	return nil
}

// checkFailure turns a gateway error into one line naming the category,
// the provider and what to fix.
func checkFailure(cat quota.Category, rs config.Resolved, res *assistant.Result, err error) error {
	var ge *assistant.Error
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
	case assistant.CodeUnreachable:
		what = fmt.Sprintf("cannot reach the provider (%v); start the model server or fix %s", cause(err), fix("base_url"))
	case assistant.CodeUnauthorized:
		what = fmt.Sprintf("the provider rejected the credentials (HTTP 401/403); set a valid %s", fix("api_key"))
	case assistant.CodeRateLimited:
		what = "the provider is rate limiting (HTTP 429)"
		if ge.RetryAfter > 0 {
			what += fmt.Sprintf("; retry in %s", ge.RetryAfter.Round(time.Second))
		}
		what += "; lower requests_per_minute in [ai." + string(cat) + "] or raise the account's limit"
	case assistant.CodeStreamCut:
		what = fmt.Sprintf("the stream was cut before the answer completed (%d characters received); the reservation of %d tokens was charged; check the server and any proxy's timeouts",
			len(res.Text), res.Usage.Total)
	case assistant.CodeTimeout:
		what = fmt.Sprintf("no complete answer within %s; raise %s, or check the server's load", rs.Timeout, fix("timeout"))
	case assistant.CodeBadRequest:
		what = fmt.Sprintf("the provider rejected the request (%v); check model %q (from %s), or set response_format = false for servers without JSON mode",
			cause(err), rs.Model, from("model"))
	case assistant.CodeProviderError:
		what = fmt.Sprintf("the provider failed (%v); try again later or check the server's logs", cause(err))
	case assistant.CodeCancelled:
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
	code := exitError
	if ge.Code == assistant.CodeUnreachable {
		code = exitUnavailable
	}
	return exitf(code, "ai check %s: provider %s: %s: %s", cat, prov, ge.Code, what)
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
