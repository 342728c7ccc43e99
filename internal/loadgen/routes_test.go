package loadgen

import "testing"

func TestRoutesGroup(t *testing.T) {
	routes := LockLabRoutes()
	for _, tt := range []struct {
		method, path, want string
	}{
		{"GET", "/", "GET /"},
		{"GET", "/healthz", "GET /healthz"},
		{"GET", "/topics/distributed-locks", "GET /topics/{slug}"},
		{"GET", "/topics/other-topic/", "GET /topics/{slug}"},
		{"GET", "/static/site.d556f3c1bd52.css", "GET /static/*"},
		{"GET", "/static/icons/lock.svg", "GET /static/*"},
		{"POST", "/api/playground/exec", "POST /api/playground/exec"},
		{"GET", "/api/playground/keys", "GET /api/playground/keys"},
		{"GET", "/api/race/scenarios", "GET /api/race/scenarios"},
		{"GET", "/api/race/gc-pause", "GET /api/race/{id}"},
		{"GET", "/api/topics/distributed-locks/quiz", "GET /api/topics/{slug}/quiz"},
		{"POST", "/api/topics/distributed-locks/quiz/gc-pause", "POST /api/topics/{slug}/quiz/{question}"},
		{"POST", "/topics/distributed-locks/quiz/gc-pause", "POST /topics/{slug}/quiz/{question}"},
		// Method, segment count and literal segments all have to match.
		{"POST", "/healthz", "POST /healthz"},
		{"GET", "/topics", "GET /topics"},
		{"GET", "/topics/a/b", "GET /topics/a/b"},
		{"GET", "/static", "GET /static"},
		{"GET", "/api/race/gc-pause/extra", "GET /api/race/gc-pause/extra"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			if got := routes.Group(tt.method, tt.path); got != tt.want {
				t.Errorf("Group(%q, %q) = %q; want %q", tt.method, tt.path, got, tt.want)
			}
		})
	}
}

func TestRoutesFirstMatchWins(t *testing.T) {
	routes := NewRoutes("GET /a/{x}", "GET /a/b")
	if got, want := routes.Group("GET", "/a/b"), "GET /a/{x}"; got != want {
		t.Errorf("Group(GET, /a/b) = %q; want %q", got, want)
	}
}
