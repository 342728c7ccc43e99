package playground

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locklab/locklab/lock"
)

// StorageState is what the learner's storage service holds: the highest
// fencing token it has accepted, the data of the last accepted write and
// that write's token.
type StorageState struct {
	Highest int64  `json:"highest"`
	Data    string `json:"data"`
	Token   int64  `json:"token"`
	Written bool   `json:"written"`
}

// storageHelp describes the storage service; it is ours, not Redis.
const storageHelp = "(@storage is Lock Lab's teaching service, not Redis: the fenced storage of the race. It takes WRITE <token> <data>, accepted unless the token is lower than one it has already seen, and READ)"

// storageExec runs a line on the storage service, which applies the lock
// package's fencing rule (lock.Storage).
func (ns *nodeSet) storageExec(client Client, line string, allow int) (Result, int, error) {
	argv, err := Tokenize(line)
	if err != nil {
		return ns.answer(client, "Invalid argument(s)"), ns.total(), nil
	}
	switch {
	case len(argv) == 1 && strings.EqualFold(argv[0], "READ"):
		var st StorageState
		if ns.store != nil {
			st = *ns.store
		}
		return ns.answer(client, st.read()), ns.total(), nil
	case len(argv) == 3 && strings.EqualFold(argv[0], "WRITE"):
	default:
		return ns.answer(client, storageHelp), ns.total(), nil
	}
	token, err := strconv.ParseInt(argv[1], 10, 64)
	if err != nil || token < 0 {
		return ns.answer(client, fmt.Sprintf("rejected: the token must be a whole number of 0 or more, not %q", shorten(argv[1], 24))), ns.total(), nil
	}
	var st StorageState
	if ns.store != nil {
		st = *ns.store
	}
	if grow := len(argv[2]) - len(st.Data); grow > 0 && ns.total()+grow > allow {
		ref := overLimit("ERR the playground is full: your sandbox's data may not grow past %s", sizeText(allow))
		return ns.answer(client, "(error) "+ref.Msg), ns.total(), ref
	}
	fenced := lock.NewFencedStorage(st.Highest)
	if !fenced.Write(token) {
		return ns.answer(client, fmt.Sprintf("rejected: token %d is lower than %d, which it has already seen", token, st.Highest)), ns.total(), nil
	}
	ns.store = &StorageState{Highest: fenced.Highest(), Data: argv[2], Token: token, Written: true}
	ns.writes++
	return ns.answer(client, "accepted"), ns.total(), nil
}

// read is what READ shows.
func (st StorageState) read() string {
	if !st.Written {
		return "(empty: nothing written yet)"
	}
	return fmt.Sprintf("%s (written with token %d)", Quote(st.Data), st.Token)
}
