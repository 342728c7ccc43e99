package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net/netip"

	"github.com/locklab/locklab/limit"
	"github.com/locklab/locklab/web"
)

// connConfig is how many connections and event streams the server holds
// for one client and in all.
type connConfig struct {
	// perAddress and idlePerAddress cap one client address's open and
	// idle connections; 0 is no cap.
	perAddress, idlePerAddress int
	// streamsPerLearner, streamsPerAddress and streams cap the event
	// streams open at once.
	streamsPerLearner, streamsPerAddress, streams int
}

// addConnFlags declares the connection and stream flags.
func addConnFlags(fset *flag.FlagSet, cc *connConfig) {
	for _, f := range []struct {
		p         *int
		name, env string
		def       int
		usage     string
	}{
		{&cc.perAddress, "max-conns-per-address", "LOCKLAB_MAX_CONNS_PER_ADDRESS", web.DefaultConnsPerAddress,
			"most connections one client address (an IPv6 one by its /64) may hold open; one more is closed as soon as it is accepted; trusted proxies are exempt; 0 is no cap"},
		{&cc.idlePerAddress, "max-idle-conns-per-address", "LOCKLAB_MAX_IDLE_CONNS_PER_ADDRESS", web.DefaultIdleConnsPerAddress,
			"most kept-alive connections one client address may hold idle; one more that goes idle is closed; trusted proxies are exempt; 0 is no cap"},
		{&cc.streamsPerLearner, "max-streams-per-learner", "LOCKLAB_MAX_STREAMS_PER_LEARNER", limit.DefaultStreamsPerLearner,
			"most live-update event streams one learner may hold open; one more gets 429 with Retry-After and its page asks every few seconds instead"},
		{&cc.streamsPerAddress, "max-streams-per-address", "LOCKLAB_MAX_STREAMS_PER_ADDRESS", limit.DefaultStreamsPerAddress,
			"most event streams one client address may hold open; raise it for a large workshop behind one address"},
		{&cc.streams, "max-streams", "LOCKLAB_MAX_STREAMS", limit.DefaultStreams,
			"most event streams open in all; held to half the connections the file descriptor limit allows"},
	} {
		fset.IntVar(f.p, f.name, f.def, f.usage+" (env "+f.env+")")
	}
}

func checkConnFlags(cc connConfig) error {
	if cc.perAddress < 0 || cc.idlePerAddress < 0 {
		return fmt.Errorf("-max-conns-per-address and -max-idle-conns-per-address must be 0 (no cap) or more")
	}
	if cc.streamsPerLearner < 1 || cc.streamsPerAddress < 1 || cc.streams < 1 {
		return fmt.Errorf("-max-streams-per-learner, -max-streams-per-address and -max-streams must be at least 1")
	}
	return nil
}

// connCaps are the connection caps for a process that has room for
// room connections (connRoom; 0 for unknown), with the trusted proxies
// exempt from the per-address caps: every client behind them comes from
// their address.
func (cc connConfig) connCaps(room int, trusted []netip.Prefix) web.ConnCaps {
	return web.ConnCaps{PerAddress: cc.perAddress, IdlePerAddress: cc.idlePerAddress, Max: room, Exempt: trusted}
}

// streamCaps are the stream caps, the total held to half of room so
// that streams, which stay open, always leave connections for the rest.
func (cc connConfig) streamCaps(room int, logger *slog.Logger) limit.StreamCaps {
	total := cc.streams
	if room > 0 && total > room/2 {
		total = max(room/2, 1)
		logger.Warn("fewer event streams than -max-streams: the file descriptor limit leaves room for few connections", "max_streams", total, "connections", room)
	}
	return limit.StreamCaps{PerLearner: cc.streamsPerLearner, PerAddress: cc.streamsPerAddress, Total: total}
}
