package views

import "context"

type csrfKey struct{}

// WithCSRF returns a context whose pages put token in their forms.
func WithCSRF(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, csrfKey{}, token)
}

// csrfToken is the token WithCSRF stored, or "".
func csrfToken(ctx context.Context) string {
	t, _ := ctx.Value(csrfKey{}).(string)
	return t
}
