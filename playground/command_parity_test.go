package playground

import "testing"

// TestParityCommandGetKeys compares COMMAND GETKEYS, COUNT and HELP with
// redis-cli + Redis 7.0.15: the keys of commands with fixed key
// positions, of subcommands, of the commands whose keys follow a count
// (EVAL, FCALL, ZUNIONSTORE, LMPOP, ...) and of SORT, and Redis's errors.
// The subcommands that list the command table are refused, and so is
// GETKEYS of the commands the playground refuses whose keys move.
func TestParityCommandGetKeys(t *testing.T) {
	a := func(line string) parityCase { return parityCase{client: ClientA, line: line} }
	refused := func(line, own string) parityCase {
		return parityCase{client: ClientA, line: line, differs: "the playground refuses it", own: own}
	}
	runParityCases(t, []parityCase{
		a(`COMMAND GETKEYS`),
		a(`COMMAND GETKEYS get`),
		a(`COMMAND GETKEYS get a`),
		a(`COMMAND GETKEYS get a b`),
		a(`COMMAND GETKEYS nosuch a`),
		a(`COMMAND GETKEYS ping x`),
		a(`COMMAND GETKEYS mset a 1 b 2`),
		a(`COMMAND GETKEYS mset a 1 b`),
		a(`COMMAND GETKEYS eval 'return 1' 2 a b c`),
		a(`COMMAND GETKEYS eval x 3 a`),
		a(`COMMAND GETKEYS eval x -1`),
		a(`COMMAND GETKEYS eval x 0`),
		a(`COMMAND GETKEYS evalsha x 1 k`),
		a(`COMMAND GETKEYS fcall test 1 x foo`),
		a(`COMMAND GETKEYS fcall_ro test 1 x foo`),
		a(`COMMAND GETKEYS sort l by x get y store dst`),
		a(`COMMAND GETKEYS sort l store a store b`),
		a(`COMMAND GETKEYS sort l limit 0 1 store`),
		a(`COMMAND GETKEYS sort_ro l by x`),
		a(`COMMAND GETKEYS zunionstore d 2 a b weights 1 2`),
		a(`COMMAND GETKEYS zunionstore d 0 a`),
		a(`COMMAND GETKEYS zunionstore d 3 a b`),
		a(`COMMAND GETKEYS zunion 2 a b`),
		a(`COMMAND GETKEYS sintercard 2 a b limit 1`),
		a(`COMMAND GETKEYS lmpop 2 a b left`),
		a(`COMMAND GETKEYS blmpop 0 2 a b left`),
		a(`COMMAND GETKEYS bzmpop 0 1 a min`),
		a(`COMMAND GETKEYS object encoding k`),
		a(`COMMAND GETKEYS object`),
		a(`COMMAND GETKEYS object nosuch k`),
		a(`COMMAND GETKEYS config get x`),
		a(`COMMAND GETKEYS client list`),
		a(`COMMAND GETKEYS set a b EX 10`),
		a(`COMMAND GETKEYS blpop a b 0`),
		a(`COMMAND GETKEYS lcs a b`),
		a(`COMMAND GETKEYS rename a b`),
		a(`COMMAND GETKEYS smove a b m`),
		a(`COMMAND GETKEYS command getkeys get a`),
		a(`COMMAND getkeys DEL a b c`),
		a(`command GETKEYS Get a`),
		a(`COMMAND COUNT`),
		a(`COMMAND COUNT x`),
		a(`COMMAND GETKEYS script load x`),
		a(`COMMAND GETKEYS watch a b`),
		a(`COMMAND GETKEYS exists a`),
		a(`COMMAND GETKEYS touch a b`),
		a(`COMMAND GETKEYS copy a b db 1`),
		a(`COMMAND GETKEYS zrangestore d s 0 1`),
		refused(`COMMAND GETKEYS georadius k 0 0 1 m store d`, `(error) ERR the playground does not support COMMAND GETKEYS for GEORADIUS: it is not part of this course`),
		refused(`COMMAND GETKEYS xread streams a b 0 0`, `(error) ERR the playground does not support COMMAND GETKEYS for XREAD: streams are not part of this course`),
		refused(`COMMAND GETKEYS migrate h 1 k 0 0`, `(error) ERR the playground does not support COMMAND GETKEYS for MIGRATE: it moves keys between servers, and a sandbox cannot reach another server`),
		refused(`COMMAND`, `(error) ERR the playground does not support COMMAND: it describes Redis's command table, which the playground keeps only in part; COMMAND COUNT and COMMAND GETKEYS work, and help <command> describes one`),
		refused(`COMMAND INFO get`, `(error) ERR the playground does not support COMMAND INFO: it describes Redis's command table, which the playground keeps only in part; COMMAND COUNT and COMMAND GETKEYS work, and help <command> describes one`),
		refused(`COMMAND DOCS get`, `(error) ERR the playground does not support COMMAND DOCS: it describes Redis's command table, which the playground keeps only in part; COMMAND COUNT and COMMAND GETKEYS work, and help <command> describes one`),
		refused(`COMMAND LIST`, `(error) ERR the playground does not support COMMAND LIST: it describes Redis's command table, which the playground keeps only in part; COMMAND COUNT and COMMAND GETKEYS work, and help <command> describes one`),
		a(`COMMAND HELP`),
		refused(`COMMAND GETKEYSANDFLAGS set a b`, `(error) ERR the playground does not support COMMAND GETKEYSANDFLAGS: it describes Redis's command table, which the playground keeps only in part; COMMAND COUNT and COMMAND GETKEYS work, and help <command> describes one`),
		a(`COMMAND NOSUCH`),
		a(`EVAL "return redis.call('command', 'getkeys', 'get', 'a')" 0`),
		a(`EVAL "return redis.call('command', 'count')" 0`),
	})
}
