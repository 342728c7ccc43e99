package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/locklab/locklab/internal/faillog"
)

// redisLogger sends go-redis's own messages (such as "failed to dial" while
// Redis is down) to the server's structured log instead of bare stderr,
// at most once a minute: with Redis down, every call would log one.
type redisLogger struct{ log *faillog.Log }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.Log(ctx, slog.LevelWarn, "redis client", "message", fmt.Sprintf(format, v...))
}
