package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// maxJSONBody bounds API request bodies: room for a playground line at its
// 64 KiB limit even when JSON escapes much of it, so that a long line gets
// the playground's own clear refusal.
const maxJSONBody = 192 << 10

// decodeJSON reads a JSON request body into v, rejecting other content
// types, unknown fields, trailing data and oversized bodies with a 400.
func decodeJSON(c echo.Context, v any) error {
	r := c.Request()
	if ct := r.Header.Get(echo.HeaderContentType); !strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "send JSON with Content-Type: application/json")
	}
	// One byte past the limit tells a body that is too large from one
	// that is malformed.
	body, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody+1))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("reading the request body: %v", err))
	}
	if len(body) > maxJSONBody {
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge, fmt.Sprintf("the JSON body is larger than %d KiB", maxJSONBody>>10))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("malformed JSON body: %v", err))
	}
	if dec.More() {
		return echo.NewHTTPError(http.StatusBadRequest, "malformed JSON body: more than one value")
	}
	return nil
}
