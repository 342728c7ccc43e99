// Lock Lab's lock lab: checks the recipe in place. The form posts as it
// does without this script, and the server answers with the parts of the
// page a check changes (views.LabResult: the error above the form, the
// report, the challenges), rendered as the page renders them; they take
// the place of the page's own. Each counterexample plays on the race's
// player (race.js's LockLabRace.replay). The gallery's entries load into
// the editor in place.
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
    // The button pressed says what is asked: Compare sends do=compare,
    // as the form does without this script.
    var data = new FormData(form), by = ev.submitter;
    if (by && by.name) data.append(by.name, by.value);
    status.textContent = (by && by.getAttribute("data-lab-busy")) || status.getAttribute("data-lab-busy");
    fetch("/lab?fragment=result", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Accept": "text/html" },
      body: new URLSearchParams(data)
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

  // The gallery's Load links fill the editor from GET /api/lab/library
  // instead of loading the page again: the recipe, its replies' rules and
  // the fault model its entry is checked under. The link still works as
  // a link where the page has a challenge (whose form the entry would
  // not fit) or the gallery cannot be read.
  var gallery = null; // the promise of GET /api/lab/library
  root.addEventListener("click", function (ev) {
    var link = ev.target.closest && ev.target.closest("[data-lab-load]");
    if (!link || form.elements.challenge || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    ev.preventDefault();
    var id = link.getAttribute("data-lab-load");
    if (!gallery) {
      gallery = fetch("/api/lab/library", { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (resp) { if (!resp.ok) throw new Error(resp.statusText); return resp.json(); });
    }
    gallery.then(function (entries) {
      var entry = entries.filter(function (e) { return e.id === id; })[0];
      if (!entry) throw new Error("no entry " + id);
      load(entry);
    }).catch(function () {
      gallery = null;
      window.location.assign(link.href);
    });
  });

  // load puts a gallery entry in the editor, marks it in the gallery,
  // clears the report of another recipe and says what was loaded.
  function load(entry) {
    var r = entry.recipe, f = form.elements;
    f.acquire.value = r.acquire.join("\n");
    f.release.value = r.release.join("\n");
    f.extend.value = r.extend.join("\n");
    f.fencing.checked = r.fencing;
    [["taken", r.taken_when], ["renewed", r.renewed_when], ["released", r.released_when]].forEach(function (d) {
      f[d[0] + "_line"].value = d[1] ? String(d[1].line) : "";
      f[d[0] + "_reply"].value = d[1] ? d[1].reply : "";
    });
    f.token_line.value = r.token_from ? String(r.token_from.line) : "";
    f.token_element.value = r.token_from ? String(r.token_from.element) : "";
    if (f.nodes) f.nodes.value = String(r.nodes || 1);
    if (f.quorum) f.quorum.value = r.quorum ? String(r.quorum) : "";
    var replies = form.querySelector(".lab-replies");
    if (replies) replies.open = !!(r.taken_when || r.renewed_when || r.released_when || r.token_from);
    if (f.long_stalls) {
      f.long_stalls.checked = entry.model.long_stalls;
      f.combine.checked = entry.model.combine;
      f.clock_jumps.value = entry.model.clock_jumps;
      f.restarts.value = entry.model.restarts;
    }
    var field = form.querySelector("[data-lab-library-field]");
    if (field) field.value = entry.id;
    root.querySelectorAll("[data-library]").forEach(function (li) {
      var on = li.getAttribute("data-library") === entry.id;
      li.classList.toggle("lab-current", on);
      var a = li.querySelector("[data-lab-load]");
      if (on) a.setAttribute("aria-current", "true"); else a.removeAttribute("aria-current");
    });
    var slot = root.querySelector("[data-lab-report-slot]");
    if (slot) slot.replaceChildren();
    var err = root.querySelector("[data-lab-error]");
    err.hidden = true;
    err.textContent = "";
    ["acquire", "release", "extend"].forEach(function (name) {
      f[name].removeAttribute("aria-invalid");
      f[name].setAttribute("aria-describedby", "lab-" + name + "-help");
    });
    var note = root.querySelector("[data-lab-loaded]");
    note.textContent = entry.loaded_text;
    note.hidden = false;
    if (window.history && history.replaceState) history.replaceState(null, "", entry.load);
    note.scrollIntoView({ block: "nearest" });
    note.focus();
  }

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
