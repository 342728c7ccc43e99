package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisObserver is told of every round trip the Redis store makes: op is
// the command's name (the commands the store sends, a fixed set) or
// "pipeline"; err is nil unless it failed. A missing key (redis.Nil) and a
// script not cached yet (NOSCRIPT, which go-redis answers by sending the
// script) are not failures.
type RedisObserver func(op string, took time.Duration, err error)

// ObserveRedis has the Redis store call f after every round trip, for
// metrics. The bolt store makes no round trips and ignores it.
func ObserveRedis(f RedisObserver) Option {
	return func(o *options) { o.observeRedis = f }
}

// observeHook is the go-redis hook through which every call of the
// store's client passes, the sandbox copies', workshops' and limits'
// included.
type observeHook struct {
	observe RedisObserver
	now     func() time.Time
}

func (h observeHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h observeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if connSetup(cmd) {
			return next(ctx, cmd)
		}
		start := h.now()
		err := next(ctx, cmd)
		h.observe(cmd.Name(), h.now().Sub(start), failure(err))
		return err
	}
}

func (h observeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return !connSetup(c) }) {
			return next(ctx, cmds)
		}
		start := h.now()
		err := next(ctx, cmds)
		h.observe("pipeline", h.now().Sub(start), failure(err))
		return err
	}
}

// connSetup says whether cmd is one go-redis sends on a new connection
// (HELLO, CLIENT SETINFO, AUTH, SELECT, READONLY) rather than one of the
// store's: the store sends none of these itself, and a Redis older than
// 7.2 refuses CLIENT SETINFO, which go-redis ignores and no metric should
// count.
func connSetup(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "client", "auth", "select", "readonly":
		return true
	}
	return false
}

// failure is err unless it is an answer that is no failure: a missing
// key, or a script Redis has not cached yet.
func failure(err error) error {
	if err == nil || errors.Is(err, redis.Nil) || redis.HasErrorPrefix(err, "NOSCRIPT") {
		return nil
	}
	return err
}
