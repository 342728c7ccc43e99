package playground

import "strings"

// helpEntry is one entry of redis-cli's help (commands_help.go, generated
// from redis-cli itself).
type helpEntry struct {
	name, args, summary, since, group string
}

// commandHelp is what redis-cli prints for "help ARGS" with ARGS not
// empty: "help @group" lists the group's commands, any other the entries
// whose first words are ARGS (help OBJECT lists OBJECT and its
// subcommands; help OBJECT ENCODING just the one), in redis-cli's layout
// without its colours (the playground's terminal shows no colours). No
// entry prints the empty line redis-cli prints.
func commandHelp(args []string) string {
	var b strings.Builder
	group := ""
	if g, ok := strings.CutPrefix(args[0], "@"); ok {
		group = g
	}
	for _, e := range helpEntries {
		if group != "" {
			if !strings.EqualFold(e.group, group) {
				continue
			}
		} else if !wordsPrefix(args, strings.Fields(e.name)) {
			continue
		}
		b.WriteString("\n  " + e.name + " " + e.args + "\n  summary: " + e.summary + "\n  since: " + e.since + "\n")
		if group == "" {
			b.WriteString("  group: " + e.group + "\n")
		}
	}
	return b.String()
}

// wordsPrefix reports whether the words of an entry's name start with
// args, compared as redis-cli compares them (case aside).
func wordsPrefix(args, words []string) bool {
	if len(args) > len(words) {
		return false
	}
	for i, a := range args {
		if !strings.EqualFold(a, words[i]) {
			return false
		}
	}
	return true
}
