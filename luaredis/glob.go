package luaredis

// globMatch is Redis 7.0's stringmatchlen: whether str matches the glob
// pattern (*, ?, [...] with ^ and ranges, \ escapes), in any case if
// nocase is set. FUNCTION LIST LIBRARYNAME matches with it. Like Redis's,
// it gives up on the longer matches of an earlier * once the rest of the
// pattern matched nowhere, so that its work stays polynomial, and it
// stops past 1,000 nested stars.
func globMatch(pattern, str string, nocase bool) bool {
	skip := false
	return globMatchAt(pattern, str, nocase, &skip, 0)
}

func globMatchAt(pattern, str string, nocase bool, skipLonger *bool, nesting int) bool {
	if nesting > 1000 {
		return false
	}
	// at reads pattern as C reads it: a NUL past its end.
	at := func(i int) byte {
		if i < len(pattern) {
			return pattern[i]
		}
		return 0
	}
	lower := func(c byte) byte {
		if nocase && c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	p, s := 0, 0
	for p < len(pattern) && s < len(str) {
		switch pattern[p] {
		case '*':
			for p < len(pattern) && at(p+1) == '*' {
				p++
			}
			if p == len(pattern)-1 {
				return true
			}
			for s < len(str) {
				if globMatchAt(pattern[p+1:], str[s:], nocase, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				s++
			}
			*skipLonger = true
			return false
		case '?':
			s++
		case '[':
			p++
			not := at(p) == '^'
			if not {
				p++
			}
			match := false
			for {
				if at(p) == '\\' && len(pattern)-p >= 2 {
					p++
					match = match || pattern[p] == str[s]
				} else if at(p) == ']' {
					break
				} else if p >= len(pattern) {
					p--
					break
				} else if len(pattern)-p >= 3 && pattern[p+1] == '-' {
					// C compares chars, which are signed.
					start, end, c := int(int8(pattern[p])), int(int8(pattern[p+2])), int(int8(str[s]))
					if start > end {
						start, end = end, start
					}
					if nocase {
						start, end, c = int(int8(lower(byte(start)))), int(int8(lower(byte(end)))), int(int8(lower(byte(c))))
					}
					p += 2
					match = match || c >= start && c <= end
				} else {
					match = match || lower(pattern[p]) == lower(str[s])
				}
				p++
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s++
		case '\\':
			if len(pattern)-p >= 2 {
				p++
			}
			fallthrough
		default:
			if lower(pattern[p]) != lower(str[s]) {
				return false
			}
			s++
		}
		p++
		if s == len(str) {
			for at(p) == '*' {
				p++
			}
			break
		}
	}
	return p >= len(pattern) && s == len(str)
}
