package main

import (
	"fmt"
	"io"

	"github.com/foliodev/folio/internal/quota"
)

// meterNames are the usage view's three meters, one per AI category.
var meterNames = map[quota.Category]string{
	quota.Reading:    "reading explanations",
	quota.Writing:    "writing assistant",
	quota.Attributes: "attributes",
}

// printMeters prints the three meters of the usage view: per category,
// today's and the range's model calls and tokens, the answers served from
// a cache (not billed), and where its settings come from.
func printMeters(w io.Writer, rep *quota.Report) {
	fmt.Fprintln(w)
	today := rep.Days[len(rep.Days)-1]
	for _, cat := range []quota.Category{quota.Reading, quota.Writing, quota.Attributes} {
		d, t := today.Categories[cat], rep.Totals[cat]
		fmt.Fprintf(w, "%-21s today %d call(s), %d tokens, %d cache hit(s); %s .. %s: %d call(s), %d tokens, %d cache hit(s); settings %s\n",
			meterNames[cat]+":", d.Events, d.Total, d.CacheHits, rep.From, rep.To, t.Events, t.Total, t.CacheHits, rep.Sources[cat])
	}
	if rep.Health == quota.HealthIncomplete {
		fmt.Fprintln(w, "statistics may be missing bookings (health: incomplete)")
	}
}
