package web

import (
	"net/netip"

	"github.com/labstack/echo/v4"
)

// addressGroup is the key the limits count a client by: its address, or
// for IPv6 the /64 it is in.
func addressGroup(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if a.Is4() {
		// ParseAddr takes IPv4 only as four decimal bytes without
		// leading zeros: ip is already what a.String() would make.
		return ip
	}
	return groupOf(a)
}

// groupOf is addressGroup of a parsed address.
func groupOf(a netip.Addr) string {
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
}

// clientAddress is what every per-address limit counts the request's
// client by: its address (RealIP, which believes X-Forwarded-For only
// from trusted proxies), an IPv6 one by its /64, so that one machine
// cannot take a fresh share of each limit from every address it holds.
func clientAddress(c echo.Context) string {
	return addressGroup(c.RealIP())
}
