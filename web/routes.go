package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// routes registers every route and the middleware around them, in one place.
func (s *Server) routes() {
	e := s.echo
	// Headers for every answer, the trailing-slash redirect's too.
	e.Pre(noStore())
	e.Pre(s.securityHeaders())
	e.Pre(stripTrailingSlash())
	e.Use(s.observe())
	e.Use(s.recoverPanics())
	e.Use(limitBodies(), s.csrf(), s.limitWrites(), compress())

	e.Match(readMethods, "/healthz", handleHealthz)
	e.Match(readMethods, "/readyz", s.handleReadyz)
	if !s.separateMetrics {
		e.Match(readMethods, "/metrics", s.handleMetrics)
	}
	e.Match(readMethods, "/static/*", s.assets.handle)

	e.Match(readMethods, "/", s.handleHome)
	e.Match(readMethods, "/topics/:slug", s.handleLesson)
	e.POST("/topics/:slug/quiz/:question", s.handleAnswerForm)
	e.Match(readMethods, "/race", s.handleRacePage)
	e.Match(readMethods, "/race/present", s.handleRacePresent)
	if s.playground != nil {
		e.Match(readMethods, "/playground", s.handlePlaygroundPage)
		e.POST("/playground/:action", s.handlePlaygroundForm)
		e.POST("/api/playground/exec", s.handleExecAPI)
		e.POST("/api/playground/reset", s.handleResetAPI)
		e.POST("/api/playground/advance", s.handleAdvanceAPI)
		e.Match(readMethods, "/api/playground/keys", s.handleKeysAPI)
		e.Match(readMethods, "/api/playground/nodes", s.handleNodesAPI)
		e.POST("/api/playground/nodes/:n", s.handleNodeAPI)
	}
	e.Match(readMethods, "/lab", s.handleLabPage)
	e.POST("/lab", s.handleLabForm)
	e.Match(readMethods, "/api/lab/challenges", s.handleLabChallenges)
	e.Match(readMethods, "/api/lab/library", s.handleLabLibrary)
	e.POST("/api/lab/check", s.handleLabCheck)
	e.POST("/api/lab/compare", s.handleLabCompare)
	e.Match(readMethods, "/progress", s.handleCarryPage)
	e.POST("/progress/code", s.handleCodeForm)
	e.POST("/progress/carry", s.handleCarryForm)
	e.Match(readMethods, "/carry/:code", s.handleCarryLink)
	e.POST("/api/progress/code", s.handleCodeAPI)
	e.POST("/api/progress/carry", s.handleCarryAPI)

	e.Match(readMethods, "/api/topics/:slug/quiz", s.handleQuizAPI)
	e.POST("/api/topics/:slug/quiz/:question", s.handleAnswerAPI)
	e.Match(readMethods, "/api/race/scenarios", s.handleRaceScenarios)
	e.Match(readMethods, "/api/race/:id", s.handleRaceAPI)
	e.POST("/api/race/done", s.handleRaceDone)

	if s.workshops != nil {
		e.Match(readMethods, "/join", s.handleJoinForm)
		e.Match(readMethods, "/join/:code", s.handleJoinForm)
		e.POST("/join", s.handleJoin)
		e.Match(readMethods, "/admin", s.handleAdminHome)
		e.POST("/admin/login", s.handleAdminLogin)
		e.POST("/admin/logout", s.handleAdminLogout)
		admin := e.Group("/admin/workshops", s.requireAdmin)
		admin.POST("", s.handleStartWorkshop)
		admin.Match(readMethods, "/:code", s.handleWorkshopDashboard)
		admin.GET("/:code/events", s.handleWorkshopEvents)
		admin.Match(readMethods, "/:code/export.csv", s.handleWorkshopCSV)
		admin.POST("/:code/end", s.handleEndWorkshop)
		admin.POST("/:code/joining", s.handleWorkshopJoining)
		admin.POST("/:code/participants/:key/remove", s.handleRemoveParticipant)
		// Polls (workshop_poll.go): the instructor's side, then the learner's.
		admin.Match(readMethods, "/:code/present", s.handleWorkshopPresent)
		admin.POST("/:code/polls", s.handleOpenPoll)
		admin.Match(readMethods, "/:code/polls/:id", s.handlePoll)
		admin.POST("/:code/polls/:id/reveal", s.handleRevealPoll)
		e.Match(readMethods, "/workshop", s.handleLearnerPage)
		e.POST("/workshop/leave", s.handleLeaveWorkshop)
		e.POST("/workshop/poll/:id/predict", s.handlePredictForm)
		e.Match(readMethods, "/api/workshop", s.handleLearnerWorkshop)
		e.GET("/api/workshop/events", s.handleLearnerEvents)
		e.Match(readMethods, "/api/workshop/poll", s.handleLearnerPoll)
		e.POST("/api/workshop/poll/:id/predict", s.handlePredict)
	}

	// Unknown API paths answer JSON, everything else the 404 page; the error
	// handler decides which by the path.
	e.Any("/api/*", s.handleUnknownAPI)
}

// handleUnknownAPI answers a request under /api/ that no route took. This
// catch-all wins over Echo's own 405 for the API's paths, so it tells a
// wrong method on a known path (405, with Allow) from a path that does not
// exist (404) itself, by asking the router which methods the path has.
func (s *Server) handleUnknownAPI(c echo.Context) error {
	r := c.Request()
	if allow := s.apiMethods(echo.GetPath(r)); len(allow) > 0 {
		c.Response().Header().Set(echo.HeaderAllow, strings.Join(allow, ", "))
		return echo.NewHTTPError(http.StatusMethodNotAllowed,
			fmt.Sprintf("%s is not allowed on %s; it takes %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
	}
	return echo.NewHTTPError(http.StatusNotFound, "no API endpoint "+r.Method+" "+r.URL.Path)
}

// routeMethods are the methods routes are registered with.
var routeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost}

// apiMethods returns the methods that a route of their own serves path
// with, in routeMethods' order: none for a path only the catch-all takes.
// It costs a router lookup per method, as the request itself did.
func (s *Server) apiMethods(path string) []string {
	var allow []string
	c := s.echo.NewContext(nil, nil)
	for _, m := range routeMethods {
		s.echo.Router().Find(m, path, c)
		if p := c.Path(); p != "" && p != "/api/*" {
			allow = append(allow, m)
		}
		c.Reset(nil, nil)
	}
	return allow
}

// readMethods are the methods of a route that only reads: HEAD answers as
// GET does, without the body (net/http drops it), so that link checkers and
// uptime probes that send HEAD get the page's status and headers rather
// than a 405. The event streams stay GET only: a HEAD of a stream would
// hold its connection open with nothing to show for it.
var readMethods = []string{http.MethodGet, http.MethodHead}

func handleHealthz(c echo.Context) error {
	return c.String(http.StatusOK, "ok")
}
