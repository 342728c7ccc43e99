package luaredis

import "sync"

// LZF, the compression of Redis's RDB strings. Its stream is a sequence
// of literal runs (a byte 000LLLLL, then L+1 bytes) and back references
// (LLLooooo oooooooo, or 111ooooo LLLLLLLL oooooooo for the longer ones:
// copy L+2 bytes from offset o+1 back). lzfCompress makes the stream
// liblzf 3.6 makes with its defaults (a hash table of 2^16 slots and its
// multiplicative hash), which Debian's redis-server links, so that
// FUNCTION DUMP prints the bytes that Redis prints; the test compares it
// with DUMP on a real Redis. Redis built from its own source carries an
// older LZF, whose stream can differ in a few bytes; each reads the
// other's.

const (
	lzfHashLog = 16
	lzfHashLen = 1 << lzfHashLog
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 1<<8 + 1<<3
)

// lzfTables keeps hash tables between calls: each is 256 KiB.
var lzfTables = sync.Pool{New: func() any { return new([lzfHashLen]int32) }}

// lzfHash is liblzf's hash of the three bytes ending h.
func lzfHash(h uint32) int {
	return int((h * 0x1e35a7bd >> (32 - lzfHashLog - 8)) & (lzfHashLen - 1))
}

// lzfCompress compresses in into at most max bytes, or reports that it
// does not fit. in must be longer than 4 bytes, as Redis's are.
func lzfCompress(in []byte, max int) ([]byte, bool) {
	n := len(in)
	if n <= 4 || max <= 0 {
		return nil, false
	}
	htab := lzfTables.Get().(*[lzfHashLen]int32)
	defer lzfTables.Put(htab)
	clear(htab[:])
	// One spare byte, as Redis allocates: closing an empty run may touch
	// the byte at max before the output is found too long.
	out := make([]byte, max+1)
	ip, op, lit := 0, 1, 0 // op starts past the first run's length byte
	hval := uint32(in[0])<<8 | uint32(in[1])
	for ip < n-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := lzfHash(hval)
		ref := int(htab[slot])
		htab[slot] = int32(ip)
		// A slot never set reads 0, which is never a match: liblzf never
		// refers back to the first byte.
		if ref > 0 && ref < ip && ip-ref-1 < lzfMaxOff &&
			in[ref] == in[ip] && in[ref+1] == in[ip+1] && in[ref+2] == in[ip+2] {
			off := ip - ref - 1
			maxLen := min(n-ip-2, lzfMaxRef)
			if op+3+1 >= max && op-b2i(lit == 0)+3+1 >= max {
				return nil, false
			}
			out[op-lit-1] = byte(lit - 1) // close the literal run
			if lit == 0 {
				op-- // it was empty
			}
			l := lzfMatch(in, ref, ip, maxLen) - 2
			ip++
			if l < 7 {
				out[op] = byte(off>>8 + l<<5)
				op++
			} else {
				out[op], out[op+1] = byte(off>>8+7<<5), byte(l-7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // a new run
			ip += l + 1
			if ip >= n-2 {
				break
			}
			// Hash the last two positions of the match.
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			for range 2 {
				hval = hval<<8 | uint32(in[ip+2])
				htab[lzfHash(hval)] = int32(ip)
				ip++
			}
			continue
		}
		if op >= max {
			return nil, false
		}
		out[op] = in[ip]
		op, ip, lit = op+1, ip+1, lit+1
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > max {
		return nil, false
	}
	for ip < n {
		out[op] = in[ip]
		op, ip, lit = op+1, ip+1, lit+1
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	return out[:op], true
}

// lzfMatch is how many bytes from ip repeat those from ref, the first
// three known equal, as liblzf counts them: past maxLen 16, it checks 16
// more before it looks at maxLen, so a match may end a byte or two past
// maxLen (never past the input's end).
func lzfMatch(in []byte, ref, ip, maxLen int) int {
	l := 2
	if maxLen > 16 {
		for range 16 {
			l++
			if in[ref+l] != in[ip+l] {
				return l
			}
		}
	}
	for {
		l++
		if l >= maxLen || in[ref+l] != in[ip+l] {
			return l
		}
	}
}

// lzfStatus says how decompressing went.
type lzfStatus int

const (
	lzfExact   lzfStatus = iota // the input gave exactly the bytes wanted
	lzfShort                    // the input ended before
	lzfOver                     // the input would give more
	lzfCorrupt                  // a reference before the start, or a cut-off code
)

// lzfDecompress decompresses in, expecting want bytes; it never makes
// more. Its cost is linear in want and len(in).
func lzfDecompress(in []byte, want int) ([]byte, lzfStatus) {
	out := make([]byte, 0, want)
	for ip := 0; ip < len(in); {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 {
			run := ctrl + 1
			if ip+run > len(in) {
				return nil, lzfCorrupt
			}
			if len(out)+run > want {
				return nil, lzfOver
			}
			out = append(out, in[ip:ip+run]...)
			ip += run
			continue
		}
		l := ctrl >> 5
		if l == 7 {
			if ip >= len(in) {
				return nil, lzfCorrupt
			}
			l += int(in[ip])
			ip++
		}
		if ip >= len(in) {
			return nil, lzfCorrupt
		}
		ref := len(out) - (ctrl&0x1f)<<8 - 1 - int(in[ip])
		ip++
		l += 2
		if ref < 0 {
			return nil, lzfCorrupt
		}
		if len(out)+l > want {
			return nil, lzfOver
		}
		for i := range l { // byte by byte: a reference may overlap what it makes
			out = append(out, out[ref+i])
		}
	}
	if len(out) < want {
		return nil, lzfShort
	}
	return out, lzfExact
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
