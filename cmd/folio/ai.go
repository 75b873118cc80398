package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/quota"
)

func init() { extraCommands = append(extraCommands, aiCommands()...) }

// aiCommands are the operator verbs for model access: `folio usage` and
// `folio ai check`. Both work on the data directory, or through a daemon
// (--server), which then uses its own configuration.
func aiCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "usage",
			Usage:     "show daily token usage per AI category and whether the statistics are complete",
			ArgsUsage: " ",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "days", Value: 7, Usage: "report the last `N` UTC days, today included"},
				formatFlag("text", "text", "json"),
			},
			Action: withBackend(0, []string{"text", "json"}, usageAction),
		},
		{
			Name:  "ai",
			Usage: "inspect model access",
			Subcommands: []*cli.Command{{
				Name:      "check",
				Usage:     "send one small streamed request through a category's provider and policy",
				ArgsUsage: " ",
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

func usageAction(c *cli.Context, _ []string, format string, b backend) error {
	days := c.Int("days")
	if days < 1 || days > quota.MaxReportDays {
		return usagef("usage: --days must be from 1 to %d", quota.MaxReportDays)
	}
	rep, err := b.Usage(c.Context, days)
	if err != nil {
		return err
	}
	w := c.App.Writer
	if format == "json" {
		return printJSON(w, rep)
	}
	fmt.Fprintf(w, "Token usage %s .. %s (UTC)\n", rep.From, rep.To)
	if rep.Health == quota.HealthIncomplete {
		fmt.Fprintf(w, "health: incomplete — %s failed, totals undercount (the daemon log has the warnings)\n", plural(int(rep.Failures), "usage booking"))
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
			fmt.Fprintf(w, "%-10s  %s failed\n", d.Date, plural(int(d.Failures), "booking"))
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
	for _, warning := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warning)
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

func aiCheckAction(c *cli.Context) error {
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	jsonOut := format == "json"
	cat, err := quota.ParseCategory(c.String("category"))
	if err != nil {
		return usagef("ai check: %v", err)
	}
	prompt := strings.TrimSpace(c.String("prompt"))
	if prompt == "" {
		return usagef("ai check: --prompt must not be empty")
	}
	if _, err := args(c, 0); err != nil {
		return err
	}
	b, err := openBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	w := c.App.Writer
	wroteText := false
	rep, err := b.AICheck(c.Context, cat, prompt, func(s string) {
		if !jsonOut && s != "" {
			wroteText = true
			io.WriteString(w, s)
		}
	})
	if rep == nil {
		return err
	}
	if jsonOut {
		if perr := printJSON(w, rep); perr != nil {
			return perr
		}
		return err // the JSON on stdout, the one-line error on stderr
	}
	if wroteText {
		fmt.Fprintln(w)
	}
	if err != nil {
		return err
	}
	printCheck(w, rep)
	return nil
}

// printCheck prints a successful check's report after its text.
func printCheck(w io.Writer, rep *assistant.CheckReport) {
	where := rep.Model
	if rep.BaseURL != "" {
		where += " at " + rep.BaseURL
	}
	fmt.Fprintf(w, "\ncategory: %s\n", rep.Category)
	fmt.Fprintf(w, "provider: %s (model %s)\n", rep.Provider, where)
	if rep.About != "" {
		fmt.Fprintf(w, "          %s\n", rep.About)
	}
	fmt.Fprintf(w, "config:   %s (%s)\n", rep.Source, rep.Describe)
	latency, first := time.Duration(rep.LatencyMS)*time.Millisecond, time.Duration(rep.FirstTextMS)*time.Millisecond
	fmt.Fprintf(w, "latency:  %s total, first text after %s\n", latency, first)
	usage := fmt.Sprintf("%d input, %d output, %d total tokens", rep.Usage.Input, rep.Usage.Output, rep.Usage.Total)
	if !rep.UsageKnown {
		usage += " (estimated: the provider reported no usage; enable stream usage or check the server version)"
	}
	if rep.Booked {
		usage += ", booked under " + rep.Category
	} else {
		usage += ", NOT booked (statistics marked incomplete)"
	}
	fmt.Fprintf(w, "usage:    %s\n", usage)
}
