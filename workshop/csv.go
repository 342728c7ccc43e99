package workshop

import (
	"strconv"
	"strings"
	"time"
)

// ParticipantRows is the participants export: a header, then one row per
// participant, in the order given.
func ParticipantRows(ps []Participant) [][]string {
	rows := [][]string{{"nickname", "joined_at", "last_active", "answers", "first_try_right", "completed", "commands", "races", "lab_solves"}}
	for _, p := range ps {
		rows = append(rows, []string{csvSafe(p.Nickname), p.JoinedAt.UTC().Format(time.RFC3339), p.LastActive.UTC().Format(time.RFC3339),
			strconv.Itoa(p.Answers), strconv.Itoa(p.FirstRight), strconv.FormatBool(p.Completed), strconv.Itoa(p.Commands), strconv.Itoa(p.Races), strconv.Itoa(p.LabSolves)})
	}
	return rows
}

// QuestionRows is the answers export, in dashboard order: for each
// question a row with its first-try figures (how many answered it, how
// many were right on their first try) and all its answers, then one row
// per choice with its text, how many answers chose it and their share of
// the question's answers.
func QuestionRows(d Dashboard) [][]string {
	rows := [][]string{{"question_id", "question", "choice_id", "choice", "right", "answers", "share", "first_tries", "first_right"}}
	for _, q := range d.Questions {
		if len(q.Choices) == 0 {
			continue
		}
		rows = append(rows, []string{q.ID, csvSafe(q.Prompt), "", "", "", strconv.Itoa(q.Answers), "", strconv.Itoa(q.FirstTries), strconv.Itoa(q.FirstRight)})
		for _, ch := range q.Choices {
			rows = append(rows, []string{q.ID, csvSafe(q.Prompt), ch.ID, csvSafe(ch.Text), strconv.FormatBool(ch.Right), strconv.Itoa(ch.Count), share(ch.Count, q.Answers), "", ""})
		}
	}
	return rows
}

// PollRows is the polls export: one row per poll and outcome it offered,
// in the order given, with how many participants picked the outcome,
// their share of those who answered, and whether it happened (empty
// before the reveal).
func PollRows(rs []PollResult) [][]string {
	rows := [][]string{{"poll", "opened_at", "scenario", "title", "settings", "outcome", "label", "picked", "share", "answered", "joined", "revealed", "happened"}}
	for _, r := range rs {
		for _, c := range r.Choices {
			happened := ""
			if r.Revealed() {
				happened = strconv.FormatBool(r.Happened(c.ID))
			}
			rows = append(rows, []string{strconv.Itoa(r.Number), r.OpenedAt.UTC().Format(time.RFC3339), r.Scenario, csvSafe(r.Title), csvSafe(r.Query),
				c.ID, csvSafe(c.Label), strconv.Itoa(r.Counts[c.ID]), share(r.Counts[c.ID], r.Answered), strconv.Itoa(r.Answered), strconv.Itoa(r.Joined),
				strconv.FormatBool(r.Revealed()), happened})
		}
	}
	return rows
}

// share is n of all as a fraction with two decimals, 0.00 when all is 0.
func share(n, all int) string {
	if all == 0 {
		return "0.00"
	}
	return strconv.FormatFloat(float64(n)/float64(all), 'f', 2, 64)
}

// csvSafe keeps a learner's nickname from being read as a formula by a
// spreadsheet.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
