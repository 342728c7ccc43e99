package playground

import (
	"regexp"
	"strings"
)

// patternArgs returns the glob patterns of KEYS and of the MATCH options of
// SCAN, HSCAN, SSCAN and ZSCAN.
func patternArgs(name string, argv []string) []string {
	switch name {
	case "KEYS":
		return argv[1:2]
	case "SCAN", "HSCAN", "SSCAN", "ZSCAN":
		var pats []string
		for i := 1; i+1 < len(argv); i++ {
			if strings.EqualFold(argv[i], "MATCH") {
				pats = append(pats, argv[i+1])
			}
		}
		return pats
	}
	return nil
}

// patternOK reports whether miniredis can use the glob pattern p. miniredis
// turns a glob into a regular expression, and panics, with its lock held,
// when that expression does not compile: for bytes that are not UTF-8 and
// for character classes such as [z-a]. The translation here follows
// miniredis's, so that exactly those patterns are refused.
func patternOK(p string) bool {
	var re strings.Builder
	re.WriteString(`(?s)^\Q`)
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			re.WriteString(`\E.*\Q`)
		case '?':
			re.WriteString(`\E.\Q`)
		case '[':
			var class strings.Builder
			for i++; i < len(p) && p[i] != ']'; i++ {
				if p[i] == '\\' {
					if i == len(p)-1 {
						return true // miniredis matches nothing, without a regexp
					}
					class.WriteByte(p[i])
					i++
				}
				class.WriteByte(p[i])
			}
			if class.Len() == 0 {
				return true
			}
			re.WriteString(`\E[` + class.String() + `]\Q`)
		case '\\':
			if i == len(p)-1 {
				return true
			}
			i++
			re.WriteByte(p[i])
		default:
			re.WriteByte(c)
		}
	}
	re.WriteString(`\E$`)
	_, err := regexp.Compile(re.String())
	return err == nil
}
