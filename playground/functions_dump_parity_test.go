package playground

import "testing"

// TestParityFunctionDumpRestore compares FUNCTION DUMP and FUNCTION
// RESTORE with redis-cli + Redis 7.0.15: payloads of no library, of one
// (plain and LZF-compressed), a learner's round trip, the three restore
// policies and their collisions, and payloads that are wrong in every
// way Redis tells apart. Redis dumps several libraries in its hash
// table's order, which changes with every server start, so FUNCTION DUMP
// here runs with one library or none; payloads of two were made with
// Redis's encoding and each is checked by its effect.
func TestParityFunctionDumpRestore(t *testing.T) {
	a := func(line string) parityCase { return parityCase{client: ClientA, line: line} }
	b := func(line string) parityCase { return parityCase{client: ClientB, line: line} }
	cases := []parityCase{
		// No library: the footer alone.
		a(`FUNCTION DUMP`),
		a(`FUNCTION DUMP x`),
		a(`FUNCTION RESTORE`),
		a(`function dump`),
		// One library, too short to compress, dumped and restored by a learner.
		a(`FUNCTION LOAD "#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n return 'hello' \nend)\n"`),
		a(`FUNCTION DUMP`),
		b(`FUNCTION DUMP`),
		a(`FUNCTION RESTORE "\xf5@[#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n return 'hello' \nend)\n\n\x00\xd9\xc1$a\x9eXf\xbd"`),
		a(`FUNCTION RESTORE "\xf5@[#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n return 'hello' \nend)\n\n\x00\xd9\xc1$a\x9eXf\xbd" REPLACE`),
		a(`FUNCTION FLUSH`),
		a(`FCALL test 0`),
		a(`FUNCTION RESTORE "\xf5@[#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n return 'hello' \nend)\n\n\x00\xd9\xc1$a\x9eXf\xbd" append`),
		b(`FCALL test 0`),
		a(`FUNCTION LIST WITHCODE`),
		// A byte of the checksum changed, then of the code, then the version.
		a(`FUNCTION RESTORE "\xf5@[#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n return 'hello' \nend)\n\n\x00\xd9\xc1$a\x9eXf\xbe"`),
		a(`FUNCTION RESTORE "\xf5@[#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n return 'jello' \nend)\n\n\x00\xd9\xc1$a\x9eXf\xbd"`),
		// Policies.
		a(`FUNCTION RESTORE "\xf5@[#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n return 'hello' \nend)\n\n\x00\xd9\xc1$a\x9eXf\xbd" MERGE`),
		a(`FUNCTION RESTORE x y z`),
		a(`FUNCTION RESTORE x FLUSH z`),
		a(`FUNCTION RESTORE x y`),
		a(`FUNCTION RESTORE ""`),
		a(`FUNCTION RESTORE 123456789`),
		// A library long enough to compress.
		a(`FUNCTION FLUSH`),
		a(`FUNCTION LOAD "#!lua name=long\nredis.register_function('f' .. 1, function() return 1 end)\n-- comment comment comment\n-- comment comment comment\n-- comment comment comment\n-- comment comment comment\n-- comment comment comment\n-- comment comment comment\n-- comment comment comment\n-- comment comment comment\n-- comment comment comment\n-- comment comment comment\n"`),
		a(`FUNCTION DUMP`),
		a(`FUNCTION FLUSH`),
		a(`FUNCTION RESTORE "\xf5\xc3@[AY\x1f#!lua name=long\nredis.register_f\x11unction('f' .. 1, \xe0\x00\x12\x19) return 1 end)\n-- comment\xe0\x07\x07\xe0\xe9\x1a\x01t\n\n\x00B\xce\x90\x8c\x9e\"\xde\xad"`),
		a(`FCALL f1 0`),
		a(`FUNCTION LIST WITHCODE`),
		// A payload of no library changes nothing, whatever the policy; FLUSH empties.
		a(`FUNCTION RESTORE "\n\x00]\x9b\\@\x0f\x7f\xa2\xda"`),
		a(`FUNCTION RESTORE "\n\x00]\x9b\\@\x0f\x7f\xa2\xda" APPEND`),
		a(`FCALL f1 0`),
		a(`FUNCTION RESTORE "\n\x00]\x9b\\@\x0f\x7f\xa2\xda" FLUSH`),
		a(`FCALL f1 0`),
		a(`FUNCTION STATS`),
		// Two libraries in one payload, against what is there.
		a(`FUNCTION LOAD "#!lua name=la\nredis.register_function('old', function() return 'old la' end)"`),
		a(`FUNCTION RESTORE "\xf5@Q#!lua name=la\nredis.register_function('fa', function(keys, args) return 'la' end)\xf5@Q#!lua name=lb\nredis.register_function('fb', function(keys, args) return 'lb' end)\n\x00\x10IcZ\xa9Vt\xcc"`),
		a(`FUNCTION RESTORE "\xf5@Q#!lua name=la\nredis.register_function('fa', function(keys, args) return 'la' end)\xf5@Q#!lua name=lb\nredis.register_function('fb', function(keys, args) return 'lb' end)\n\x00\x10IcZ\xa9Vt\xcc" APPEND`),
		a(`FCALL old 0`),
		a(`FCALL fb 0`),
		a(`FUNCTION RESTORE "\xf5@Q#!lua name=la\nredis.register_function('fa', function(keys, args) return 'la' end)\xf5@Q#!lua name=lb\nredis.register_function('fb', function(keys, args) return 'lb' end)\n\x00\x10IcZ\xa9Vt\xcc" REPLACE`),
		a(`FCALL old 0`),
		a(`FCALL fa 0`),
		b(`FCALL fb 0`),
		a(`FUNCTION STATS`),
		a(`FUNCTION RESTORE "\xf5@Q#!lua name=la\nredis.register_function('fa', function(keys, args) return 'la' end)\xf5@Q#!lua name=lb\nredis.register_function('fb', function(keys, args) return 'lb' end)\n\x00\x10IcZ\xa9Vt\xcc" REPLACE`),
		a(`FUNCTION STATS`),
		a(`FUNCTION DELETE lb`),
		a(`FUNCTION LOAD "#!lua name=other\nredis.register_function('fb', function() return 'other' end)"`),
		// fb belongs to a library the payload does not replace.
		a(`FUNCTION RESTORE "\xf5@Q#!lua name=la\nredis.register_function('fa', function(keys, args) return 'la' end)\xf5@Q#!lua name=lb\nredis.register_function('fb', function(keys, args) return 'lb' end)\n\x00\x10IcZ\xa9Vt\xcc" REPLACE`),
		a(`FCALL fa 0`),
		a(`FCALL fb 0`),
		a(`FUNCTION RESTORE "\xf5@Q#!lua name=la\nredis.register_function('fa', function(keys, args) return 'la' end)\xf5@Q#!lua name=lb\nredis.register_function('fb', function(keys, args) return 'lb' end)\n\x00\x10IcZ\xa9Vt\xcc" FLUSH`),
		a(`FCALL fb 0`),
		a(`FUNCTION LIST LIBRARYNAME other`),
		a(`FUNCTION STATS`),
		// Wrong payloads, each with a right footer: nothing changes.
		a(`FUNCTION RESTORE "\xf5@Q#!lua name=la\nredis.register_function('fa', function(keys, args) return 'la' end)\xf5@Q#!lua name=la\nredis.register_function('fb', function(keys, args) return 'la' end)\n\x00\x86\xdb\x84\x03\x155\x1c("`),
		a(`FUNCTION RESTORE "\xf5@Q#!lua name=la\nredis.register_function('fa', function(keys, args) return 'la' end)\xf5@Q#!lua name=lb\nredis.register_function('fa', function(keys, args) return 'lb' end)\n\x00\x895\xdd0\xcb\x00'\xef" FLUSH`),
		a(`FUNCTION RESTORE "\xf6\x03abc\n\x00d]\x95\xff\xbfo\xb9\x97" FLUSH`),
		a(`FUNCTION RESTORE "\x00\x03abc\n\x00\xd9\xac0=Ar\xa2\xe2" FLUSH`),
		a(`FUNCTION RESTORE "\xf5?a\n\x00b\xaa\xaefS>p\xa5" FLUSH`),
		a(`FUNCTION RESTORE "\xf5\xc0\x07\n\x00\x02\xe8c*\xf2\xf3\xd2\xf5" FLUSH`),
		a(`FUNCTION RESTORE "\xf5\x08return 1\n\x00\xa1\x8f\xb9\xbc\x97%1\x99" FLUSH`),
		a(`FUNCTION RESTORE "\xf5\x1e#!lua name=bad\nthis is not lua\n\x00\x9e\xb6kngB|\xe9" FLUSH`),
		a(`FUNCTION RESTORE "\xf5\x1b#!lua name=nofn\nlocal x = 1\n\x00)\x9eX\xa3\xe3&ze" FLUSH`),
		a(`FUNCTION RESTORE "\xf5\x0d#!js name=j\nx\n\x00\xac0\xbb\xc9!\x03\xd2\xcf" FLUSH`),
		a(`FUNCTION RESTORE "\xf5\x85\x01\x02\x03\n\x00\x10\x0dt\x8ds\x0722" FLUSH`),
		a(`FUNCTION RESTORE "\xf5\xc3\x03( \x00\x00\n\x00TZ.\xc7\x9d}\xb8l" FLUSH`),
		a(`FUNCTION RESTORE "\xf5\x00\n\x00\xceRD\xc0\xf3D\x07\n" FLUSH`),
		a(`FUNCTION STATS`),
		a(`FCALL fa 0`),
		// Not from scripts.
		a(`EVAL "return redis.call('FUNCTION', 'DUMP')" 0`),
		a(`EVAL "return redis.pcall('function', 'restore', 'x')" 0`),
		// In a transaction.
		a(`MULTI`),
		a(`FUNCTION RESTORE "\n\x00]\x9b\\@\x0f\x7f\xa2\xda" FLUSH`),
		a(`FUNCTION DUMP`),
		a(`EXEC`),
		a(`FUNCTION STATS`),
		// As Redis 7.0's release candidates wrote libraries: name, engine,
		// description and code apart.
		a(`FUNCTION RESTORE "\xf6\n\x00\x96M\"+\xad\x0c3\x93"`),
		a(`FUNCTION RESTORE "\xf6\x03LUA\n\x00\xea\x869\xab\x9a\xd9T\xb6"`),
		a(`FUNCTION RESTORE "\xf6\x03LUA\x03lib\n\x00e\n\x8b\xbbOt1\xdb"`),
		a(`FUNCTION RESTORE "\xf6\x03LUA\x03lib\x04desc\n\x00\xac\x02R\x97b+\xfe\x99"`),
		a(`FUNCTION RESTORE "\xf6\x02pg\x03LUA\x00>\nredis.register_function('pg', function() return 'pre-GA' end)\n\x00\xfdY\xd8\x90~U\xe4\xb5"`),
		a(`FCALL pg 0`),
		a(`FUNCTION LIST LIBRARYNAME pg WITHCODE`),
		a(`FUNCTION RESTORE "\xf6\x03pg2\x03lua\x01\x0da description>\nredis.register_function('pg', function() return 'pre-GA' end)\n\x00\x07\x16X1\x1f\x9c\"d"`),
		a(`FUNCTION RESTORE "\xf6\x03pg3\x03lua\xc1\x01x7redis.register_function('pg3', function() return 3 end)\n\x00O\"\xee\x1c\xafv\x9ae"`),
		a(`FCALL pg3 0`),
		a(`FUNCTION RESTORE "\xf5\x80\xff\xff\xff\xff\n\x00\x94\xb8)yQ}o\xc6"`),
		a(`FUNCTION RESTORE "\xf5\x81\x00\x00\x00\x00\x00\x00\x00\x03abc\n\x00@\\\xfb\xfb\xc6\xa7I-"`),
		a(`FUNCTION RESTORE "\xf5\xc190\n\x00)\x86\xe4M\xd9?\x84\xd4"`),
		a(`FUNCTION RESTORE "\xf5\xc2\x01\x00\x00\x80\n\x00\x1b\x0d\x06\xfd\xf3\xb63/"`),
		a(`FUNCTION RESTORE "\xf5\xc4\n\x00?y\xe8#4\x8b\xfd\x8b"`),
		a(`FUNCTION STATS`),
	}
	runParityCases(t, cases)
}
