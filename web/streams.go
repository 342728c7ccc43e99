package web

import (
	"fmt"

	"github.com/labstack/echo/v4"
)

// openStream admits an event stream of the request's learner from its
// client address under the stream caps (limit.Streams), or answers the
// refusal: 429 with Retry-After. A refused page falls back to asking
// every few seconds. The caller must call done when the stream ends.
func (s *Server) openStream(c echo.Context) (done func(), err error) {
	done, d := s.streams.Open(s.learnerID(c), clientAddress(c))
	if d.Allowed() {
		return done, nil
	}
	caps := s.streams.Caps()
	var msg string
	switch d.Limit {
	case "streams_per_learner":
		msg = fmt.Sprintf("you have %d live updates open already (one per open page); close a tab, or this page will ask for news every few seconds instead", caps.PerLearner)
	case "streams_per_address":
		msg = fmt.Sprintf("your address has %d live updates open already; this page will ask for news every few seconds instead", caps.PerAddress)
	default:
		msg = "the server has as many live updates open as it may; this page will ask for news every few seconds instead"
	}
	return done, s.refused(c, d, msg)
}
