package views

import "strconv"

func itoa(n int) string { return strconv.Itoa(n) }

// numberWord spells small counts as words, as the course's copy does.
func numberWord(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

// ClockText is how the playground shows a sandbox clock of ms (Unix
// milliseconds), for pages that fill the clock into a kept widget.
func ClockText(ms int64) string { return clockText(ms) }
