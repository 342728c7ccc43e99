package main

import (
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
