package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMetricsProtection checks the metrics token on the site's listener,
// and that SeparateMetrics takes /metrics off it.
func TestMetricsProtection(t *testing.T) {
	const token = "metrics-token-0123456789abc"
	get := func(h http.Handler, auth string) (int, string) {
		r := httptest.NewRequest("GET", "/metrics", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	for _, tt := range []struct {
		name     string
		token    string
		separate bool
		auth     string
		site     int // status on the site's handler
		own      int // status on MetricsHandler
	}{
		{"open", "", false, "", 200, 200},
		{"token, none sent", token, false, "", 401, 401},
		{"token, wrong one", token, false, "Bearer nope", 401, 401},
		{"token, not Bearer", token, false, token, 401, 401},
		{"token, right one", token, false, "Bearer " + token, 200, 200},
		{"separate", "", true, "", 404, 200},
		{"separate with token", token, true, "Bearer " + token, 404, 200},
		{"separate, wrong token", token, true, "Bearer nope", 404, 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.MetricsToken, cfg.SeparateMetrics = tt.token, tt.separate
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			code, body := get(s, tt.auth)
			if code != tt.site || (code == 200 && !strings.Contains(body, "go_goroutines")) {
				t.Errorf("site GET /metrics = %d; want %d with the metrics", code, tt.site)
			}
			code, body = get(s.MetricsHandler(), tt.auth)
			if code != tt.own || (code == 200 && !strings.Contains(body, "go_goroutines")) {
				t.Errorf("MetricsHandler GET /metrics = %d; want %d with the metrics", code, tt.own)
			}
		})
	}
}
