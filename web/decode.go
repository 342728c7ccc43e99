package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// maxJSONBody bounds API request bodies.
const maxJSONBody = 64 << 10

// decodeJSON reads a JSON request body into v, rejecting other content
// types, unknown fields, trailing data and oversized bodies with a 400.
func decodeJSON(c echo.Context, v any) error {
	r := c.Request()
	if ct := r.Header.Get(echo.HeaderContentType); !strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "send JSON with Content-Type: application/json")
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("malformed JSON body: %v", err))
	}
	if dec.More() {
		return echo.NewHTTPError(http.StatusBadRequest, "malformed JSON body: more than one value")
	}
	return nil
}
