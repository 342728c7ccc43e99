package luaredis

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
	"strconv"
)

// A FUNCTION DUMP payload is what Redis 7.0 writes, byte for byte: for
// each library, the opcode rdbOpcodeFunction2 and the library's code as
// an RDB string (LZF-compressed when that saves at least 4 bytes), then
// the RDB version (2 bytes, little-endian) and a CRC-64 of all that (8
// bytes, little-endian), as Redis's DUMP of a key ends.
const (
	rdbOpcodeFunction2     = 245
	rdbOpcodeFunctionPreGA = 246 // as Redis 7.0's release candidates wrote them
	rdbVersion             = 10  // Redis 7.0's RDB_VERSION
	rdbEncLZF              = 0xc3
)

// errPayloadFooter is Redis's error for a payload whose version or
// checksum is wrong.
const errPayloadFooter = "ERR DUMP payload version or checksum are wrong"

// crcJones is the table of Redis's CRC-64: the Jones polynomial
// (0xad93d23594c935a9), bits reflected, starting from 0 with no final
// inversion.
var crcJones = crc64.MakeTable(0x95ac9329ac4bc9b5)

// redisCRC64 is Redis's crc64(0, p). hash/crc64 inverts the CRC before
// and after its update, so starting it from all ones and inverting its
// result leaves Redis's.
func redisCRC64(p []byte) uint64 {
	return ^crc64.Update(^uint64(0), crcJones, p)
}

// appendFooter ends a payload: the RDB version and the CRC-64 of all of it.
func appendFooter(b []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, rdbVersion)
	return binary.LittleEndian.AppendUint64(b, redisCRC64(b))
}

// footerOK is Redis's verifyDumpPayload: at least the 10 bytes of the
// footer, a version Redis 7.0 reads, and the right checksum.
func footerOK(p []byte) bool {
	if len(p) < 10 {
		return false
	}
	foot := p[len(p)-10:]
	if binary.LittleEndian.Uint16(foot) > rdbVersion {
		return false
	}
	return binary.LittleEndian.Uint64(foot[2:]) == redisCRC64(p[:len(p)-8])
}

// appendRDBLen is Redis's rdbSaveLen: 6 bits, 14 bits, or a marker byte
// and 32 or 64 bits big-endian.
func appendRDBLen(b []byte, n int) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case uint64(n) <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, 0x81), uint64(n))
	}
}

// appendRDBString is Redis's rdbSaveRawString for a string that does not
// read as a small integer (a library's code starts with "#!"): over 20
// bytes it is LZF-compressed if that saves at least 4 bytes.
func appendRDBString(b []byte, s string) []byte {
	if len(s) > 20 {
		if c, ok := lzfCompress([]byte(s), len(s)-4); ok {
			b = appendRDBLen(append(b, rdbEncLZF), len(c))
			b = appendRDBLen(b, len(s))
			return append(b, c...)
		}
	}
	return append(appendRDBLen(b, len(s)), s...)
}

// errPayloadRead is a string of the payload that cannot be read:
// truncated, of an unknown encoding, or LZF data that does not give the
// length it claims.
var errPayloadRead = errors.New("payload unreadable")

// payloadReader reads a payload's strings, as Redis's rio on a buffer
// does: a string may run on into the footer, which the loop that calls
// it leaves alone.
type payloadReader struct {
	p   []byte
	pos int
	// max is the longest string it decompresses; a longer one is
	// errStringTooLong, with its length in tooLong.
	max     int
	tooLong int
}

var errStringTooLong = errors.New("string too long")

func (r *payloadReader) byte() (byte, error) {
	if r.pos >= len(r.p) {
		return 0, errPayloadRead
	}
	r.pos++
	return r.p[r.pos-1], nil
}

func (r *payloadReader) bytes(n uint64) ([]byte, error) {
	if n > uint64(len(r.p)-r.pos) {
		return nil, errPayloadRead
	}
	r.pos += int(n)
	return r.p[r.pos-int(n) : r.pos], nil
}

// length is Redis's rdbLoadLenByRef: a length, or with enc set, the
// encoding of a string stored as an integer or compressed.
func (r *payloadReader) length() (n uint64, enc bool, err error) {
	b, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case 0:
		return uint64(b & 0x3f), false, nil
	case 1:
		lo, err := r.byte()
		return uint64(b&0x3f)<<8 | uint64(lo), false, err
	case 3:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case 0x80:
		p, err := r.bytes(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case 0x81:
		p, err := r.bytes(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, errPayloadRead
}

// string is Redis's rdbGenericLoadStringObject.
func (r *payloadReader) string() (string, error) {
	n, enc, err := r.length()
	if err != nil {
		return "", err
	}
	if !enc {
		p, err := r.bytes(n)
		return string(p), err
	}
	switch n {
	case 0, 1, 2: // a signed integer of 1, 2 or 4 bytes, little-endian
		size := uint64(1) << n
		p, err := r.bytes(size)
		if err != nil {
			return "", err
		}
		var v int64
		switch size {
		case 1:
			v = int64(int8(p[0]))
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		}
		return strconv.FormatInt(v, 10), nil
	case 3:
		clen, enc1, err := r.length()
		if err != nil || enc1 {
			return "", errPayloadRead
		}
		ulen, enc2, err := r.length()
		if err != nil || enc2 {
			return "", errPayloadRead
		}
		c, err := r.bytes(clen)
		if err != nil {
			return "", err
		}
		want := ulen
		if ulen > uint64(r.max) {
			want = uint64(r.max) + 1
		}
		out, st := lzfDecompress(c, int(want))
		switch {
		case st == lzfExact && ulen == want:
			return string(out), nil
		case ulen > want && (st == lzfExact || st == lzfOver):
			// At least max+1 bytes, and perhaps the length claimed.
			r.tooLong = int(min(ulen, 1<<40))
			return "", errStringTooLong
		}
	}
	return "", errPayloadRead
}
