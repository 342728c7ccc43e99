package workshop

import (
	"strconv"
	"strings"
	"time"
)

// ParticipantRows is the participants export: a header, then one row per
// participant, in the order given.
func ParticipantRows(ps []Participant) [][]string {
	rows := [][]string{{"nickname", "joined_at", "last_active", "answers", "first_try_right", "completed", "commands", "races"}}
	for _, p := range ps {
		rows = append(rows, []string{csvSafe(p.Nickname), p.JoinedAt.UTC().Format(time.RFC3339), p.LastActive.UTC().Format(time.RFC3339),
			strconv.Itoa(p.Answers), strconv.Itoa(p.FirstRight), strconv.FormatBool(p.Completed), strconv.Itoa(p.Commands), strconv.Itoa(p.Races)})
	}
	return rows
}

// QuestionRows is the questions export: a header, then one row per
// question and choice, in dashboard order.
func QuestionRows(d Dashboard) [][]string {
	rows := [][]string{{"question", "choice", "right", "answers", "first_tries", "first_right"}}
	for _, q := range d.Questions {
		for _, ch := range q.Choices {
			rows = append(rows, []string{q.ID, ch.ID, strconv.FormatBool(ch.Right), strconv.Itoa(ch.Count), strconv.Itoa(q.FirstTries), strconv.Itoa(q.FirstRight)})
		}
	}
	return rows
}

// csvSafe keeps a learner's nickname from being read as a formula by a
// spreadsheet.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
