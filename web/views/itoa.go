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
