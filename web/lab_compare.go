package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/locklab/locklab/lab"
	"github.com/locklab/locklab/web/views"
)

// Comparing two recipes: POST /api/lab/compare, and the lab page's
// "Compare with…" control, which posts the page's form with do=compare.
// The rule (which schedules, what differs) is lab.Compare's; this file
// maps HTTP to it and puts it under the same limits as a check.

// labCompareWith names the recipe to compare with: a challenge's broken
// recipe, a gallery entry's, the lesson's lock, or one given in full.
type labCompareWith struct {
	Recipe    *labRecipeJSON `json:"recipe,omitempty"`
	Challenge string         `json:"challenge,omitempty"`
	Library   string         `json:"library,omitempty"`
	// Textbook is the lesson's lock (lab.Textbook).
	Textbook bool `json:"textbook,omitempty"`
}

// labCompareRequest is the body of POST /api/lab/compare.
type labCompareRequest struct {
	Recipe labRecipeJSON  `json:"recipe"`
	With   labCompareWith `json:"with"`
	Model  *lab.Model     `json:"model,omitempty"`
}

// labCompareJSON answers POST /api/lab/compare: lab.Comparison, with
// the other recipe as it ran and each telling schedule's runs in the
// shape of a counterexample.
type labCompareJSON struct {
	Schedules  int                   `json:"schedules"`
	MaxFaults  int                   `json:"max_faults"`
	Summary    string                `json:"summary"`
	Model      lab.Model             `json:"model"`
	ModelText  string                `json:"model_text"`
	Nodes      int                   `json:"nodes"`
	Differ     int                   `json:"differ"`
	With       labRecipeJSON         `json:"with"`
	WithTitle  string                `json:"with_title"`
	WorksA     bool                  `json:"works_a"`
	WorksB     bool                  `json:"works_b"`
	WorksTextA string                `json:"works_text_a,omitempty"`
	WorksTextB string                `json:"works_text_b,omitempty"`
	Properties []labCompPropertyJSON `json:"properties"`
}

type labCompPropertyJSON struct {
	ID      string       `json:"id"`
	Title   string       `json:"title"`
	A       lab.Side     `json:"a"`
	B       lab.Side     `json:"b"`
	Differs bool         `json:"differs"`
	Text    string       `json:"text"`
	Telling *labTellJSON `json:"telling"`
}

// labTellJSON is the schedule that tells two recipes apart on a
// property: its faults, the recipe that broke it ("a" or "b"), and the
// schedule as each ran it.
type labTellJSON struct {
	Faults []string               `json:"faults"`
	Broke  string                 `json:"broke"`
	A      *labCounterexampleJSON `json:"a"`
	B      *labCounterexampleJSON `json:"b"`
}

func (s *Server) handleLabCompare(c echo.Context) error {
	var req labCompareRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	out, err := s.labCompare(c, req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// labCompareRecipe resolves what to compare with, on as many nodes as
// the learner's recipe unless it is a gallery entry, which keeps its
// own; title names it for people.
func labCompareRecipe(w labCompareWith, nodes int) (r lab.Recipe, title string, err error) {
	switch {
	case w.Challenge != "":
		ch, err := lab.ChallengeByID(w.Challenge)
		if err != nil {
			return r, "", err
		}
		r, title = ch.Recipe, "the challenge "+ch.Title+" (its broken recipe)"
	case w.Library != "":
		e, err := labLibraryEntry(w.Library)
		if err != nil {
			return r, "", err
		}
		return e.Recipe, e.Name, nil
	case w.Textbook:
		r, title = lab.Textbook(), "the lesson's lock"
	case w.Recipe != nil:
		r, title = recipeFromJSON(*w.Recipe), "the other recipe"
		if w.Recipe.Nodes > 0 {
			return r, title, nil
		}
	default:
		return r, "", echo.NewHTTPError(http.StatusBadRequest, "with: name the recipe to compare with (recipe, challenge, library or textbook)")
	}
	r.Nodes = nodes
	return r, title, nil
}

// labCompare runs a comparison under the limits of a check (it counts as
// one script that may run long, waits in the lab's fair queue and pays
// its CPU time) and builds the API's answer.
func (s *Server) labCompare(c echo.Context, req labCompareRequest) (labCompareJSON, error) {
	a := recipeFromJSON(req.Recipe)
	if err := a.Validate(); err != nil {
		return labCompareJSON{}, err
	}
	b, title, err := labCompareRecipe(req.With, a.Nodes)
	if err != nil {
		return labCompareJSON{}, err
	}
	if err := b.Validate(); err != nil {
		return labCompareJSON{}, fmt.Errorf("compare with %s: %w", title, err)
	}
	learner := s.ensureLearner(c)
	charge, err := s.limitCheck(c, learner)
	if err != nil {
		return labCompareJSON{}, err
	}
	release, err := s.enterLabQueue(c, learner)
	if err != nil {
		charge(0)
		return labCompareJSON{}, err
	}
	start := time.Now()
	cmp, err := s.lab.CompareLab(c.Request().Context(), lab.CompareRequest{A: a, B: b, Model: req.Model}, lab.Budget{})
	release()
	switch {
	case err == nil:
		charge(time.Duration(cmp.CPUMS) * time.Millisecond)
	case errors.Is(err, lab.ErrBudget):
		charge(2 * lab.DefaultBudget().CPU)
	default:
		charge(time.Since(start))
	}
	if err != nil {
		return labCompareJSON{}, err
	}
	out := labCompareJSON{
		Schedules: cmp.Schedules, MaxFaults: cmp.MaxFaults, Summary: cmp.Summary, Model: cmp.Model, ModelText: cmp.ModelText,
		Nodes: max(cmp.Nodes, 1), Differ: cmp.Differ, With: recipeToJSON(b), WithTitle: title,
		WorksA: cmp.WorksA, WorksB: cmp.WorksB, WorksTextA: cmp.WorksTextA, WorksTextB: cmp.WorksTextB,
		Properties: []labCompPropertyJSON{},
	}
	for _, pc := range cmp.Properties {
		pj := labCompPropertyJSON{ID: string(pc.ID), Title: propertyInfo(pc.ID).Title, A: pc.A, B: pc.B, Differs: pc.Differs, Text: pc.Text}
		if t := pc.Telling; t != nil {
			pj.Telling = &labTellJSON{Faults: nonNil(t.Faults), Broke: t.Broke, A: counterexampleJSON(t.A, ""), B: counterexampleJSON(t.B, "")}
		}
		out.Properties = append(out.Properties, pj)
	}
	return out, nil
}

// labCompareForm is what the page's "Compare with…" control sent:
// with = "challenge:ID", "library:ID", "textbook" or "pasted" (the
// with_acquire, with_release and with_extend fields), as the form shows
// them again.
type labCompareForm struct {
	value, acquire, release, extend string
	with                            labCompareWith
}

// readCompareForm reads the "Compare with…" control.
func readCompareForm(get func(string) string) (*labCompareForm, error) {
	f := &labCompareForm{value: get("with"), acquire: get("with_acquire"), release: get("with_release"), extend: get("with_extend")}
	switch v := f.value; {
	case strings.HasPrefix(v, "challenge:"):
		f.with = labCompareWith{Challenge: strings.TrimPrefix(v, "challenge:")}
	case strings.HasPrefix(v, "library:"):
		f.with = labCompareWith{Library: strings.TrimPrefix(v, "library:")}
	case v == "textbook":
		f.with = labCompareWith{Textbook: true}
	case v == "pasted":
		f.with = labCompareWith{Recipe: &labRecipeJSON{Acquire: splitLines(f.acquire), Release: splitLines(f.release), Extend: splitLines(f.extend)}}
	default:
		return nil, echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("with = %q: choose a recipe to compare with", v))
	}
	return f, nil
}

// labCompareView runs the comparison the page's form asked for and
// returns it as the page shows it.
func (s *Server) labCompareView(c echo.Context, req labCheckRequest) (*views.LabCompare, error) {
	cmp, err := s.labCompare(c, labCompareRequest{Recipe: req.Recipe, With: req.compare.with, Model: req.Model})
	if err != nil {
		return nil, err
	}
	return compareView(cmp), nil
}

// compareView is a comparison as the page shows it.
func compareView(cmp labCompareJSON) *views.LabCompare {
	v := &views.LabCompare{Summary: cmp.Summary, ModelText: cmp.ModelText, WithTitle: cmp.WithTitle,
		WorksA: cmp.WorksA, WorksB: cmp.WorksB, WorksTextA: cmp.WorksTextA, WorksTextB: cmp.WorksTextB}
	for _, p := range cmp.Properties {
		pv := views.LabCompareProperty{ID: p.ID, Title: p.Title, A: p.A.Status, B: p.B.Status, Differs: p.Differs, Text: p.Text}
		if t := p.Telling; t != nil {
			pv.Telling = &views.LabTelling{Faults: t.Faults, Broke: t.Broke,
				A: counterexampleView("your recipe's run of the schedule that tells them apart on "+p.ID, t.A),
				B: counterexampleView(cmp.WithTitle+"'s run of the schedule that tells them apart on "+p.ID, t.B)}
		}
		v.Properties = append(v.Properties, pv)
	}
	return v
}
