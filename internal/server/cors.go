package server

import (
	"net/http"
	"net/url"
	"strings"
)

// cors lets browser editors served from the allowed origins call the API:
// their preflight requests are answered and their responses carry
// Access-Control-Allow-Origin. Tokens travel in the Authorization header,
// never in cookies, so credentials are not enabled. /v1/sync is left to
// the WebSocket handshake's own origin check (originPatterns).
func (s *Server) cors(next http.Handler) http.Handler {
	if len(s.cfg.AllowedOrigins) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" || r.URL.Path == "/v1/sync" || !s.originAllowed(origin) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-None-Match, "+PasswordHeader+", "+VisitorHeader)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originAllowed reports whether a browser origin ("https://host[:port]")
// is one of the configured ones ("*" allows all).
func (s *Server) originAllowed(origin string) bool {
	for _, o := range s.cfg.AllowedOrigins {
		if o == "*" || strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	return false
}

// originPatterns turns the allowed origins into the host patterns the
// WebSocket handshake checks the Origin header against.
func originPatterns(origins []string) []string {
	var out []string
	for _, o := range origins {
		if o == "*" {
			return []string{"*"}
		}
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			out = append(out, u.Host)
		}
	}
	return out
}
