package playground

import (
	"regexp"
	"slices"
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

// forwardRanges returns argv with each glob pattern's reversed character
// ranges put the right way round ([z-b] as [b-z]), as Redis's
// stringmatchlen reads them; miniredis would refuse them. argv itself is
// returned when nothing changes.
func forwardRanges(name string, argv []string) []string {
	var out []string
	at := func(i int) {
		if p := forwardRange(argv[i]); p != argv[i] {
			if out == nil {
				out = slices.Clone(argv)
			}
			out[i] = p
		}
	}
	switch name {
	case "KEYS":
		at(1)
	case "SCAN", "HSCAN", "SSCAN", "ZSCAN":
		for i := 1; i+1 < len(argv); i++ {
			if strings.EqualFold(argv[i], "MATCH") {
				at(i + 1)
			}
		}
	}
	if out == nil {
		return argv
	}
	return out
}

// forwardRange is one pattern with its reversed ranges turned round. In a
// class, a backslash escapes the next byte, and x-y is a range when both
// ends are there, as in stringmatchlen.
func forwardRange(p string) string {
	if !strings.Contains(p, "-") {
		return p
	}
	b := []byte(p)
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '[':
			i++
			if i < len(b) && b[i] == '^' {
				i++
			}
			for ; i < len(b) && b[i] != ']'; i++ {
				switch {
				case b[i] == '\\' && i+1 < len(b):
					i++
				case i+2 < len(b) && b[i+1] == '-':
					if b[i] > b[i+2] {
						b[i], b[i+2] = b[i+2], b[i]
					}
					i += 2
				}
			}
		}
	}
	return string(b)
}
