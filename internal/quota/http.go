package quota

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// MaxReportDays bounds the days a report covers.
const MaxReportDays = 366

// UsageHandler serves the usage report as JSON: GET ?days=N (default 7,
// at most MaxReportDays) answers a Report; sources (may be nil) fills
// Report.Sources. Authorization is the mounting server's job.
func UsageHandler(l *Ledger, sources map[Category]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeErr(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
			return
		}
		days := 7
		if s := r.URL.Query().Get("days"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > MaxReportDays {
				writeErr(w, http.StatusBadRequest, "bad_request", "days must be an integer from 1 to 366")
				return
			}
			days = n
		}
		rep, err := l.Report(days)
		if err != nil {
			writeErr(w, http.StatusInternalServerError, "internal", "usage report failed")
			return
		}
		rep.Sources = sources
		_ = json.NewEncoder(w).Encode(rep)
	})
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg})
}
