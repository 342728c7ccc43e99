package main

import (
	"context"
	"fmt"
	"log/slog"
)

// redisLogger sends go-redis's own messages (such as "failed to dial" while
// Redis is down) to the server's structured log instead of bare stderr.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client", "message", fmt.Sprintf(format, v...))
}
