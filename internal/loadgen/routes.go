package loadgen

import "strings"

// Routes groups request paths by the route pattern that serves them, so
// that latencies of /topics/a and /topics/b land in one row.
type Routes struct {
	patterns []routePattern
}

type routePattern struct {
	method   string
	segments []string // "{name}" matches one segment, a final "*" the rest
	label    string
}

// NewRoutes returns Routes for patterns such as "GET /topics/{slug}" or
// "GET /static/*". The first pattern that matches wins, so list literal
// paths such as /api/race/scenarios before /api/race/{id}.
func NewRoutes(patterns ...string) Routes {
	var r Routes
	for _, p := range patterns {
		method, path, _ := strings.Cut(p, " ")
		r.patterns = append(r.patterns, routePattern{method: method, segments: splitPath(path), label: p})
	}
	return r
}

// LockLabRoutes returns the routes of the Lock Lab server that the load
// generator calls, as listed in docs/api.md.
func LockLabRoutes() Routes {
	return NewRoutes(
		"GET /healthz",
		"GET /static/*",
		"GET /",
		"GET /topics/{slug}",
		"POST /topics/{slug}/quiz/{question}",
		"GET /playground",
		"GET /race",
		"POST /api/playground/exec",
		"POST /api/playground/reset",
		"POST /api/playground/advance",
		"GET /api/playground/keys",
		"GET /api/topics/{slug}/quiz",
		"POST /api/topics/{slug}/quiz/{question}",
		"GET /api/race/scenarios",
		"GET /api/race/{id}",
		"GET /join/{code}",
		"POST /join",
		"GET /api/workshop/poll",
		"POST /api/workshop/poll/{id}/predict",
	)
}

// Group returns the pattern that serves method and path (without the query
// string), or "METHOD path" when none does.
func (r Routes) Group(method, path string) string {
	segs := splitPath(path)
	for _, p := range r.patterns {
		if p.method == method && p.match(segs) {
			return p.label
		}
	}
	return method + " " + path
}

func (p routePattern) match(segs []string) bool {
	for i, want := range p.segments {
		if want == "*" && i == len(p.segments)-1 {
			return len(segs) > i
		}
		if i >= len(segs) {
			return false
		}
		if strings.HasPrefix(want, "{") && strings.HasSuffix(want, "}") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if want != segs[i] {
			return false
		}
	}
	return len(segs) == len(p.segments)
}

// splitPath splits "/a/b" into ["a", "b"]; "/" gives no segments.
func splitPath(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}
