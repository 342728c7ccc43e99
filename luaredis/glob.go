package luaredis

// globMatch is Redis 7.0's stringmatchlen: whether str matches the glob
// pattern (*, ?, [...] with ^ and ranges, \ escapes), in any case if
// nocase is set. FUNCTION LIST LIBRARYNAME matches with it. Like Redis's,
// it gives up on the longer matches of an earlier * once the rest of the
// pattern matched nowhere, so that its work stays polynomial, and it
// stops past 1,000 nested stars.
func globMatch(pattern, str string, nocase bool) bool {
	g := globber{nocase: nocase, steps: -1}
	return g.match(pattern, str)
}

// globber matches patterns as globMatch does, within a budget of steps
// (one per character compared) shared by all its matches, so that the
// work of a command that matches many names with one pattern stays
// bounded: polynomial is still the product of the pattern's length and
// the names'. A match past the budget is false, and over is set.
type globber struct {
	nocase bool
	steps  int // left; negative for no budget
	over   bool
}

// match reports whether str matches pattern.
func (g *globber) match(pattern, str string) bool {
	skip := false
	return g.matchAt(pattern, str, &skip, 0)
}

// step takes one step of the budget, and reports whether there was one.
func (g *globber) step() bool {
	switch {
	case g.steps < 0:
		return true
	case g.steps == 0:
		g.over = true
		return false
	}
	g.steps--
	return true
}

func (g *globber) matchAt(pattern, str string, skipLonger *bool, nesting int) bool {
	if nesting > 1000 || g.over {
		return false
	}
	nocase := g.nocase
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
		if !g.step() {
			return false
		}
		switch pattern[p] {
		case '*':
			for p < len(pattern) && at(p+1) == '*' {
				p++
			}
			if p == len(pattern)-1 {
				return true
			}
			for s < len(str) {
				if g.matchAt(pattern[p+1:], str[s:], skipLonger, nesting+1) {
					return true
				}
				if *skipLonger || g.over {
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
				if !g.step() {
					return false
				}
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
