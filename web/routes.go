package web

import (
	"net/http"

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
	// The middleware that differ from route to route; the exec API's short
	// way (shortexec.go) runs the same ones.
	perRoute := []echo.MiddlewareFunc{limitBodies(), s.csrf(), s.limitWrites(), compress()}
	e.Use(perRoute...)

	e.GET("/healthz", handleHealthz)
	if !s.separateMetrics {
		e.GET("/metrics", s.handleMetrics)
	}
	e.GET("/static/*", s.assets.handle)

	e.GET("/", s.handleHome)
	e.GET("/topics/:slug", s.handleLesson)
	e.POST("/topics/:slug/quiz/:question", s.handleAnswerForm)
	e.GET("/race", s.handleRacePage)
	e.GET("/race/present", s.handleRacePresent)
	if s.playground != nil {
		e.GET("/playground", s.handlePlaygroundPage)
		e.POST("/playground/:action", s.handlePlaygroundForm)
		e.POST(execPath, s.handleExecAPI)
		s.execShort = composeMiddleware(s.handleExecAPI, perRoute)
		e.POST("/api/playground/reset", s.handleResetAPI)
		e.POST("/api/playground/advance", s.handleAdvanceAPI)
		e.GET("/api/playground/keys", s.handleKeysAPI)
	}
	e.GET("/lab", s.handleLabPage)
	e.POST("/lab", s.handleLabForm)
	e.GET("/api/lab/challenges", s.handleLabChallenges)
	e.POST("/api/lab/check", s.handleLabCheck)
	e.GET("/progress", s.handleCarryPage)
	e.POST("/progress/code", s.handleCodeForm)
	e.POST("/progress/carry", s.handleCarryForm)
	e.GET("/carry/:code", s.handleCarryLink)
	e.POST("/api/progress/code", s.handleCodeAPI)
	e.POST("/api/progress/carry", s.handleCarryAPI)

	e.GET("/api/topics/:slug/quiz", s.handleQuizAPI)
	e.POST("/api/topics/:slug/quiz/:question", s.handleAnswerAPI)
	e.GET("/api/race/scenarios", s.handleRaceScenarios)
	e.GET("/api/race/:id", s.handleRaceAPI)
	e.POST("/api/race/done", s.handleRaceDone)

	if s.workshops != nil {
		e.GET("/join", s.handleJoinForm)
		e.GET("/join/:code", s.handleJoinForm)
		e.POST("/join", s.handleJoin)
		e.GET("/admin", s.handleAdminHome)
		e.POST("/admin/login", s.handleAdminLogin)
		e.POST("/admin/logout", s.handleAdminLogout)
		admin := e.Group("/admin/workshops", s.requireAdmin)
		admin.POST("", s.handleStartWorkshop)
		admin.GET("/:code", s.handleWorkshopDashboard)
		admin.GET("/:code/events", s.handleWorkshopEvents)
		admin.GET("/:code/export.csv", s.handleWorkshopCSV)
		admin.POST("/:code/end", s.handleEndWorkshop)
		// Polls (workshop_poll.go): the instructor's side, then the learner's.
		admin.GET("/:code/present", s.handleWorkshopPresent)
		admin.POST("/:code/polls", s.handleOpenPoll)
		admin.GET("/:code/polls/:id", s.handlePoll)
		admin.POST("/:code/polls/:id/reveal", s.handleRevealPoll)
		e.GET("/workshop", s.handleLearnerPage)
		e.POST("/workshop/leave", s.handleLeaveWorkshop)
		e.POST("/workshop/poll/:id/predict", s.handlePredictForm)
		e.GET("/api/workshop", s.handleLearnerWorkshop)
		e.GET("/api/workshop/events", s.handleLearnerEvents)
		e.GET("/api/workshop/poll", s.handleLearnerPoll)
		e.POST("/api/workshop/poll/:id/predict", s.handlePredict)
	}

	// Unknown API paths answer JSON, everything else the 404 page; the error
	// handler decides which by the path.
	e.Any("/api/*", func(c echo.Context) error {
		return echo.NewHTTPError(http.StatusNotFound, "no API endpoint "+c.Request().Method+" "+c.Request().URL.Path)
	})
}

func handleHealthz(c echo.Context) error {
	return c.String(http.StatusOK, "ok")
}
