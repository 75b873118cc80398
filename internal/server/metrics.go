package server

import (
	"strconv"

	"github.com/foliodev/folio/objstore"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the HTTP side's collectors; the sync server registers its
// own (connections, messages, saves, checkpoints, conflicts, ack latency)
// with the same registry.
type metrics struct {
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	inFlight      prometheus.Gauge
	saves         *prometheus.CounterVec
	saveLatency   prometheus.Histogram
	checkpoints   *prometheus.CounterVec
	conflicts     prometheus.Counter
	authFail      prometheus.Counter
	revoked       prometheus.Counter
	backupPacks   prometheus.Counter
	backupBytes   prometheus.Counter
	connections   *prometheus.GaugeVec
	connRefused   *prometheus.CounterVec
	connEvicted   *prometheus.CounterVec
	connOverShare *prometheus.CounterVec
}

// Every label value comes from a fixed set, whatever a client sends: a
// label made of client input (a method, a path) would grow /metrics and
// the registry's memory by one series per distinct value, for ever.

// methodLabel is r.Method when it is one the API knows, else "other".
func methodLabel(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return m
	}
	return "other"
}

// codeLabel is an HTTP status as a label: the statuses a handler can
// write, "other" for anything outside 100-599.
func codeLabel(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code)
}

// reasonLabel is a checkpoint reason or version kind as a label.
func reasonLabel(r string) string {
	switch r {
	case "create", "restore", "accept_suggestion", objstore.ReasonIdle, objstore.ReasonMaxDuration, objstore.ReasonAI,
		objstore.ReasonPublish, objstore.ReasonLeave, objstore.ReasonManual, objstore.ReasonRecovery:
		return r
	}
	return "other"
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	lat := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_http_requests_total", Help: "HTTP requests, by method, route and status code."},
			[]string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "folio_http_request_duration_seconds", Help: "HTTP request latency, by method and route.", Buckets: lat},
			[]string{"method", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "folio_http_requests_in_flight", Help: "HTTP requests being served (open WebSockets excluded)."}),
		saves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_http_draft_saves_total", Help: "Draft saves through the HTTP API, by result (ok, conflict, invalid, error)."},
			[]string{"result"}),
		saveLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "folio_http_draft_save_seconds", Help: "Time to commit an HTTP draft save durably.", Buckets: lat}),
		checkpoints: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_http_checkpoints_total", Help: "Versions created through the HTTP API, by reason or kind."},
			[]string{"reason"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "folio_http_conflicts_total", Help: "HTTP requests answered with a conflict."}),
		authFail: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "folio_auth_failures_total", Help: "Requests with a missing, unknown or revoked token."}),
		revoked: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "folio_tokens_revoked_total", Help: "Tokens revoked (directly or by deleting their user)."}),
		backupPacks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "folio_backup_packs_total", Help: "Packs served to backup pulls."}),
		backupBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "folio_backup_pack_bytes_total", Help: "Bytes of the packs served to backup pulls."}),
		connections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "folio_http_connections", Help: "Open client connections, by state: untrusted (no request authenticated yet) or trusted."},
			[]string{"state"}),
		connRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_http_connections_refused_total", Help: "Connections answered 503 and closed at accept, by the cap they met (total, per_address)."},
			[]string{"reason"}),
		connEvicted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_http_connections_evicted_total", Help: "Connections closed to make room for new ones, by what they were: untrusted, or idle (trusted, waiting for their next request)."},
			[]string{"state"}),
		connOverShare: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "folio_http_connections_over_share_total", Help: "Authenticated connections left untrusted because their token, user or all authors together held their share (per_token, per_user, authors)."},
			[]string{"share"}),
	}
	for _, l := range []string{"untrusted", "idle"} {
		m.connEvicted.WithLabelValues(l)
	}
	for _, l := range []string{"per_token", "per_user", "authors"} {
		m.connOverShare.WithLabelValues(l)
	}
	m.connections.WithLabelValues("untrusted")
	m.connections.WithLabelValues("trusted")
	m.connRefused.WithLabelValues("total")
	m.connRefused.WithLabelValues("per_address")
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight, m.saves, m.saveLatency,
		m.checkpoints, m.conflicts, m.authFail, m.revoked, m.backupPacks, m.backupBytes,
		m.connections, m.connRefused, m.connEvicted, m.connOverShare} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// registerRuntime adds the Go runtime and process collectors (memory,
// goroutines, file descriptors). A registry that has them already keeps
// its own, so the error is of no interest.
func registerRuntime(reg prometheus.Registerer) {
	_ = reg.Register(collectors.NewGoCollector())
	_ = reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}
