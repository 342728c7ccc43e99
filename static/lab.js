// Lock Lab's lock lab: checks the recipe in place. The form posts as it
// does without this script, and the server answers with the parts of the
// page a check changes (views.LabResult: the error above the form, the
// report, the challenges), rendered as the page renders them; they take
// the place of the page's own. Each counterexample plays on the race's
// player (race.js's LockLabRace.replay).
(function () {
  "use strict";
  var root = document.querySelector("[data-lab]");
  if (!root || !window.fetch || !window.DOMParser) return;
  var form = root.querySelector("[data-lab-form]");
  var status = root.querySelector("[data-lab-status]");
  var checkBtn = form.querySelector("[data-lab-check]");
  var race = window.LockLabRace;
  var latest = 0; // only the last check asked for is shown

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var mine = ++latest;
    checkBtn.disabled = true;
    status.textContent = status.getAttribute("data-lab-busy");
    fetch("/lab?fragment=result", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Accept": "text/html" },
      body: new URLSearchParams(new FormData(form))
    }).then(function (resp) {
      return resp.text().then(function (html) {
        var got = new DOMParser().parseFromString(html, "text/html").querySelector("[data-lab-result]");
        // A refused recipe (400) or check (429) comes as a result with
        // its error; anything else is the error page.
        if (!got) throw new Error(resp.statusText);
        return got;
      });
    }).then(function (got) {
      if (mine !== latest) return;
      status.textContent = "";
      place(got);
    }).catch(function () {
      if (mine !== latest) return;
      status.textContent = "";
      var err = root.querySelector("[data-lab-error]");
      err.textContent = form.getAttribute("data-lab-failed");
      err.hidden = false;
      err.focus();
    }).then(function () { if (mine === latest) checkBtn.disabled = false; });
  });

  // place puts each part of a check's result in place of the page's, and
  // moves the focus to the report, or to what the error names.
  function place(got) {
    ["[data-lab-error]", "[data-lab-report-slot]", "[data-lab-challenges]"].forEach(function (sel) {
      var now = root.querySelector(sel), next = got.querySelector(sel);
      if (now && next) now.replaceWith(document.importNode(next, true));
    });
    var err = root.querySelector("[data-lab-error]");
    var field = err.hidden ? "" : err.getAttribute("data-lab-error-field");
    ["acquire", "release", "extend"].forEach(function (name) {
      var ta = form.elements[name];
      var bad = name === field;
      if (bad) ta.setAttribute("aria-invalid", "true"); else ta.removeAttribute("aria-invalid");
      ta.setAttribute("aria-describedby", "lab-" + name + "-help" + (bad ? " lab-error" : ""));
    });
    if (!err.hidden) {
      (field ? form.elements[field] : err).focus();
      return;
    }
    var report = root.querySelector("[data-lab-report]");
    if (!report) return;
    if (race) report.querySelectorAll("[data-race-replay]").forEach(race.replay);
    var link = report.querySelector("[data-lab-link]");
    if (link && window.history && history.replaceState) history.replaceState(null, "", link.getAttribute("href"));
    report.focus();
  }
})();
