package web

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/locklab/locklab/internal/browsertest"
	"github.com/locklab/locklab/race"
)

// TestPollInBrowsers plays a poll the way a workshop does: the instructor
// opens it from the dashboard, with the presenter view in its own tab; a
// learner with JavaScript on a phone (390 px) sees it appear on the lesson
// page without a reload, predicts, and sees the reveal judged outcome by
// outcome; a learner without JavaScript does the same with the workshop
// page's forms. The learner's poll is the server's, put in place: the
// page stays, and the focus goes to what changed. The dashboard and
// presenter view count both live. Every
// page is checked with axe-core and photographed at 390, 1280 and 1920 px,
// light and dark.
func TestPollInBrowsers(t *testing.T) {
	base := newWorkshopServer(t)
	teacher := browsertest.New(t)
	browsertest.ColorScheme(t, teacher, "light")
	browsertest.Open(t, teacher, base+"/admin", 1280, 900)
	err := chromedp.Do(teacher,
		chromedp.SendKeys(chromedp.CSS("#admin-token"), adminToken),
		chromedp.Click(chromedp.CSS(`form[action="/admin/login"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#ws-title")),
		chromedp.SendKeys(chromedp.CSS("#ws-title"), "Thursday group"),
		chromedp.Click(chromedp.CSS(`form[action="/admin/workshops"] button`)),
		chromedp.WaitVisible(chromedp.CSS("[data-dashboard]")),
	)
	if err != nil {
		t.Fatal(err)
	}
	code, _ := chromedp.Run(teacher, chromedp.Text(chromedp.CSS(".join-code")))
	code = strings.TrimSpace(code)
	if target, err := chromedp.Run(teacher, chromedp.AttributeValue(chromedp.CSS(`a[href$="/present"]`), "target")); err != nil || target.Value != "_blank" {
		t.Errorf("the presenter view link opens in target %q (%v); want its own tab (_blank)", target.Value, err)
	}

	// A learner with JavaScript, on a phone, joins and reads the lesson.
	ada := browsertest.New(t)
	browsertest.ColorScheme(t, ada, "light")
	browsertest.Open(t, ada, base+"/join/"+code, 390, 800)
	err = chromedp.Do(ada,
		chromedp.SendKeys(chromedp.CSS("#join-nick"), "Ada"),
		chromedp.Click(chromedp.CSS(`form[action="/join"] button`)),
		chromedp.WaitVisible(chromedp.CSS("[data-ws-learner]")),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ada, `document.querySelector(".ws-joined").textContent.includes("as Ada")`)
	browsertest.Open(t, ada, base+"/topics/distributed-locks", 390, 800)
	browsertest.WaitFor(t, ada, `!document.querySelector(".ws-banner").hidden && document.querySelector(".ws-who").textContent.includes("You joined Thursday group as Ada")`)

	// A learner without JavaScript joins with the form.
	bo := browsertest.New(t)
	browsertest.Scripts(t, bo, false)
	browsertest.ColorScheme(t, bo, "dark")
	browsertest.Open(t, bo, base+"/join/"+code, 1280, 900)
	err = chromedp.Do(bo,
		chromedp.SendKeys(chromedp.CSS("#join-nick"), "Bo"),
		chromedp.Click(chromedp.CSS(`form[action="/join"] button`)),
		chromedp.WaitVisible(chromedp.CSS("[data-ws-learner]")),
	)
	if err != nil {
		t.Fatal(err)
	}

	// The presenter view, in its own tab of the instructor's browser.
	present, cancel := chromedp.NewContext(teacher)
	t.Cleanup(cancel)
	browsertest.Open(t, present, base+"/admin/workshops/"+code+"/present", 1920, 1080)
	browsertest.WaitFor(t, present, `document.querySelector("[data-no-poll]") !== null`)

	// The instructor opens a poll on the GC pause.
	err = chromedp.Do(teacher,
		chromedp.SetValue(chromedp.CSS("#poll-scenario"), "gc-pause"),
		chromedp.Click(chromedp.CSS(`.ws-open-form button`)),
		chromedp.WaitVisible(chromedp.CSS("[data-poll]")),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The presenter view and Ada's lesson page show it by themselves.
	browsertest.WaitFor(t, present, `document.querySelector("[data-poll]") !== null`)
	browsertest.WaitFor(t, ada, `document.querySelector(".ws-banner .ws-lpoll form") !== null`)
	browsertest.WaitFor(t, ada, `document.querySelector("[data-ws-said]").textContent.startsWith("Predict: ")`)
	shots(t, ada, "poll-learner-lesson", ".ws-banner", true, 390, 1280, 1920)
	// A mark on the page's window, which a navigation would lose.
	evalJS[bool](t, ada, `window.pollStayed = true`)
	stayed := func() {
		t.Helper()
		if !evalJS[bool](t, ada, `window.pollStayed === true && location.pathname === "/topics/distributed-locks"`) {
			t.Error("the poll's form left the lesson; want the answer in place")
		}
	}
	// Sent with nothing ticked: the server's refusal, in place, and the
	// focus on the first choice.
	if err := chromedp.Do(ada, chromedp.Click(chromedp.CSS(`.ws-banner .ws-lpoll button[type=submit]`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ada, `document.querySelector(".ws-banner .ws-lpoll [role=alert]") !== null && document.activeElement === document.querySelector(".ws-banner .ws-lpoll input[type=checkbox]")`)
	stayed()
	err = chromedp.Do(ada,
		chromedp.Click(chromedp.CSS(`.ws-banner input[value="two-holders"]`)),
		chromedp.Click(chromedp.CSS(`.ws-banner input[value="stale-write-accepted"]`)),
		chromedp.Click(chromedp.CSS(`.ws-banner .ws-lpoll button[type=submit]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ada, `document.querySelector(".ws-banner .ws-lpoll").textContent.includes("Your prediction is in")`)
	// The poll as the server has it: the two picks ticked, the refusal
	// gone, the focus on the button that changes the prediction.
	stayed()
	browsertest.WaitFor(t, ada, `[...document.querySelectorAll(".ws-banner input:checked")].map(x => x.value).join(" ") === "two-holders stale-write-accepted" && document.querySelector(".ws-banner .ws-lpoll [role=alert]") === null && document.activeElement.textContent.trim() === "Change my prediction"`)
	browsertest.WaitFor(t, teacher, `document.querySelector("[data-poll-answered]").textContent === "1"`)

	// Bo predicts with the workshop page's form.
	browsertest.Open(t, bo, base+"/workshop", 1280, 900)
	err = chromedp.Do(bo,
		chromedp.Click(chromedp.CSS(`input[value="safe"]`)),
		chromedp.Click(chromedp.CSS(`.ws-lpoll button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.ws-lpoll [role=status]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	shots(t, bo, "poll-learner-nojs", "", false, 1280)
	browsertest.WaitFor(t, teacher, `document.querySelector("[data-poll-answered]").textContent === "2"`)
	// A wrong quiz answer shows up among the misconceptions, live.
	quizzer := newLearner(t, base)
	form(quizzer, "/join", url.Values{"code": {code}})
	quizzer.answer("gc-pause", "longer-ttl")
	browsertest.WaitFor(t, teacher, `document.querySelector("[data-misc-list]").textContent.includes("A longer TTL")`)
	browsertest.WaitFor(t, present, `document.querySelector('[data-poll-count="safe"]').textContent === "1" && document.querySelector('[data-poll-count="two-holders"]').textContent === "1"`)
	shots(t, teacher, "poll-dashboard", "", true, 1280)
	shots(t, present, "poll-present", "", true, 1920)

	// The reveal, from the presenter view: it shows the run to play.
	err = chromedp.Do(present,
		chromedp.Click(chromedp.CSS(`.ws-poll form button`)),
		chromedp.WaitVisible(chromedp.CSS(".race")),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, present, `document.querySelector("[data-poll][data-revealed]") !== null`)
	shots(t, present, "poll-present-revealed", "", true, 1920, 1280)
	browsertest.WaitFor(t, ada, `document.querySelector(".ws-banner .ws-lpoll h2").textContent.startsWith("Revealed") && document.querySelector("[data-ws-said]").textContent.startsWith("Revealed: ")`)
	stayed()
	browsertest.WaitFor(t, ada, fmt.Sprintf(`document.querySelectorAll(".ws-banner .ws-judged li").length === %d`, len(race.Outcomes())))
	shots(t, ada, "poll-learner-revealed", ".ws-banner", true, 390, 1280)
	browsertest.WaitFor(t, teacher, `document.querySelector("[data-poll][data-revealed]") !== null`)
	browsertest.Open(t, bo, base+"/workshop", 1280, 900)
	judged, err := chromedp.Run(bo, chromedp.Text(chromedp.CSS(".ws-lpoll")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(judged, "Revealed:") || !strings.Contains(judged, "you expected it") && !strings.Contains(judged, "You were right") {
		t.Errorf("Bo's page after the reveal = %q; want each outcome judged", judged)
	}
	shots(t, bo, "poll-learner-nojs-revealed", "", false, 390)
}

// shots checks a page with axe-core, light and dark, and photographs it
// at the given widths, whole or only the element sel; js says whether the tab runs the page's scripts
// (axe-core needs them, so they are on while it runs).
func shots(t *testing.T, ctx context.Context, name, sel string, js bool, widths ...int64) {
	t.Helper()
	for _, scheme := range []string{"light", "dark"} {
		browsertest.ColorScheme(t, ctx, scheme)
		for _, w := range widths {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
				t.Fatal(err)
			}
			if sel != "" {
				browsertest.ElementScreenshot(t, ctx, sel, fmt.Sprintf("%s-%d-%s", name, w, scheme))
			} else {
				browsertest.Screenshot(t, ctx, fmt.Sprintf("%s-%d-%s", name, w, scheme))
			}
		}
		if !js {
			browsertest.Scripts(t, ctx, true)
		}
		browsertest.RequireNoSerious(t, browsertest.Axe(t, ctx), name+" "+scheme)
		if !js {
			browsertest.Scripts(t, ctx, false)
		}
	}
}
