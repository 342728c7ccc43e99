// Lock Lab's lock lab: checks the recipe through POST /api/lab/check and
// plays each counterexample with the race's renderer (race.js's
// LockLabRace.draw), on the race's lanes, narration and outcomes. The
// server renders the form, the report and each counterexample's
// transcript, so the page works without this script. All text goes in
// with textContent.
(function () {
  "use strict";
  var root = document.querySelector("[data-lab]");
  if (!root) return;
  var form = root.querySelector("[data-lab-form]");
  var errorEl = root.querySelector("[data-lab-error]");
  var status = root.querySelector("[data-lab-status]");
  var checkBtn = form.querySelector("[data-lab-check]");
  var slot = root.querySelector("[data-lab-report-slot]");
  var PLAY_SECONDS = 14;
  var reduceMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  var race = window.LockLabRace;

  // The report the server rendered, if any, gets its players.
  var embedded = document.getElementById("lab-report-json");
  if (embedded) {
    try { players(root.querySelector("[data-lab-report]"), JSON.parse(embedded.textContent)); } catch (e) { /* the transcript stays */ }
  }

  function lines(name) {
    return form.elements[name].value.split("\n").map(function (l) { return l.trim(); }).filter(function (l) { return l !== ""; });
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var body = {
      recipe: { acquire: lines("acquire"), release: lines("release"), extend: lines("extend"), fencing: form.elements.fencing.checked }
    };
    // The fields the form posts without JavaScript, under the API's names.
    [["taken", "taken_when"], ["renewed", "renewed_when"], ["released", "released_when"]].forEach(function (d) {
      var line = form.elements[d[0] + "_line"].value.trim(), reply = form.elements[d[0] + "_reply"].value;
      if (line !== "" || reply !== "") body.recipe[d[1]] = { line: Number(line), reply: reply };
    });
    if (form.elements.token_line.value.trim() !== "") {
      body.recipe.token_from = { line: Number(form.elements.token_line.value), element: Number(form.elements.token_element.value || 0) };
    }
    if (form.elements.clock_jumps) {
      body.model = {
        long_stalls: form.elements.long_stalls.checked, combine: form.elements.combine.checked,
        clock_jumps: form.elements.clock_jumps.value, restarts: form.elements.restarts.value
      };
    }
    if (form.elements.challenge) body.challenge = form.elements.challenge.value;
    var meta = document.querySelector("meta[name=csrf-token]");
    checkBtn.disabled = true;
    status.textContent = "Checking hundreds of schedules…";
    fetch("/api/lab/check", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": meta ? meta.getAttribute("content") : "" },
      body: JSON.stringify(body)
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (data) {
        if (!resp.ok) throw new Error(data.error || "The check could not be run; please try again.");
        return data;
      });
    }).then(function (data) {
      showError("");
      status.textContent = "";
      var old = root.querySelector("[data-lab-report]");
      var sec = report(data);
      if (old) old.replaceWith(sec); else slot.appendChild(sec);
      players(sec, data);
      if (data.link && window.history && history.replaceState) history.replaceState(null, "", data.link);
      if (data.passed) markSolved(body.challenge);
      sec.focus();
    }).catch(function (err) {
      status.textContent = "";
      showError(err.message);
    }).then(function () { checkBtn.disabled = false; });
  });

  // showError says why a recipe cannot run, and marks the part it names.
  function showError(msg) {
    errorEl.textContent = msg ? msg.charAt(0).toUpperCase() + msg.slice(1) : "";
    errorEl.hidden = !msg;
    var m = /^(?:recipe: )?(acquire|release|extend)\b/.exec(msg || "");
    ["acquire", "release", "extend"].forEach(function (name) {
      var ta = form.elements[name];
      var bad = !!m && m[1] === name;
      if (bad) ta.setAttribute("aria-invalid", "true"); else ta.removeAttribute("aria-invalid");
      ta.setAttribute("aria-describedby", "lab-" + name + "-help" + (bad ? " lab-error" : ""));
    });
    if (msg) (m ? form.elements[m[1]] : errorEl).focus();
  }

  function markSolved(id) {
    var li = root.querySelector("[data-challenge=\"" + id + "\"]");
    if (!li || li.classList.contains("lab-solved")) return;
    li.classList.add("lab-solved");
    var b = document.createElement("span");
    b.className = "status status-completed lab-solved-badge";
    b.textContent = "Solved";
    li.appendChild(b);
    var count = root.querySelector("[data-lab-solved-count]");
    var n = root.querySelectorAll(".lab-solved").length, all = root.querySelectorAll("[data-challenge]").length;
    if (count) count.textContent = n + " of " + all + " solved.";
  }

  function h(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function code(text) { return h("code", "", text); }

  // report builds the report as the server renders it.
  function report(data) {
    var sec = h("section", "lab-report");
    sec.id = "report";
    sec.tabIndex = -1;
    sec.setAttribute("data-lab-report", "");
    sec.setAttribute("aria-labelledby", "lab-report-title");
    var h2 = h("h2", "", "The report");
    h2.id = "lab-report-title";
    sec.appendChild(h2);
    if (data.challenge) {
      var v = h("p", "notice lab-verdict" + (data.passed ? " notice-ok" : ""));
      v.setAttribute("data-lab-passed", String(!!data.passed));
      v.textContent = (data.pass_text || "") + (data.passed && data.just_solved ? " Saved with your progress." : "");
      sec.appendChild(v);
    }
    if (!data.works) {
      var w = h("p", "notice lab-works");
      w.setAttribute("data-lab-works", "false");
      w.append(h("strong", "", "This recipe does not work yet:"), " " + (data.works_text || ""));
      sec.appendChild(w);
    }
    var sum = h("p", "lab-summary", (data.summary || "") + " ");
    var a = h("a", "", "Link to this check");
    a.href = data.link || "/lab";
    a.setAttribute("data-lab-link", "");
    sum.appendChild(a);
    sec.appendChild(sum);
    sec.appendChild(h("p", "lab-model", data.model_text || ""));
    var ul = h("ul", "lab-properties");
    ul.setAttribute("role", "list");
    data.properties.forEach(function (p) {
      var st = { holds: ["lab-holds", "✓", "held", "Held in all " + p.explored + " schedules that exercised it."],
        broken: ["lab-breaks", "✗", "broken", "Broken; " + p.explored + " schedules exercised it."] }[p.status] ||
        ["lab-unjudged", "–", "not judged", ""];
      var li = h("li", "lab-property " + st[0] + (data.challenge_property === p.id ? " lab-focus" : ""));
      li.setAttribute("data-property", p.id);
      li.setAttribute("data-holds", String(p.holds));
      li.setAttribute("data-status", p.status);
      var h3 = h("h3");
      var mark = h("span", "lab-mark", st[1]);
      mark.setAttribute("aria-hidden", "true");
      h3.append(mark, " ", code(p.id), " " + st[2]);
      li.append(h3, h("p", "lab-property-what", p.description || ""));
      li.appendChild(h("p", "lab-property-count", st[3] + (p.note ? " " + p.note : "")));
      if (p.counterexample) li.appendChild(counterexample(p));
      ul.appendChild(li);
    });
    sec.appendChild(ul);
    return sec;
  }

  function counterexample(p) {
    var cx = p.counterexample;
    var sec = h("section", "race lab-cx");
    sec.setAttribute("data-lab-cx", p.id);
    sec.setAttribute("aria-labelledby", "cx-" + p.id + "-title");
    var h4 = h("h4", "", "Shortest counterexample: schedule " + cx.seed);
    h4.id = "cx-" + p.id + "-title";
    var extra = [];
    if (cx.summary) extra.push(h("p", "lab-cx-summary", cx.summary));
    if (cx.faults && cx.faults.length) {
      extra.push(h("p", "lab-cx-faults-title", "Faults in this schedule:"));
      var fl = h("ul", "lab-cx-faults");
      cx.faults.forEach(function (f) { fl.appendChild(h("li", "", f)); });
      extra.push(fl);
    }
    var stage = h("div", "race-stage");
    stage.setAttribute("data-race-stage", "");
    var player = h("div", "race-player");
    player.setAttribute("data-race-player", "");
    var buttons = h("div", "race-buttons");
    [["play", "Play", "button"], ["back", "Step back", "button button-secondary"], ["forward", "Step forward", "button button-secondary"]].forEach(function (b) {
      var btn = h("button", b[2], b[1]);
      btn.type = "button";
      btn.setAttribute("data-act", b[0]);
      buttons.appendChild(btn);
    });
    var scrubLabel = h("label", "race-scrub");
    var scrub = document.createElement("input");
    scrub.type = "range"; scrub.min = "0"; scrub.max = "1000"; scrub.step = "1"; scrub.value = "0";
    scrub.setAttribute("data-act", "scrub");
    var clock = h("output", "", "0 s");
    clock.setAttribute("data-race-clock", "");
    scrubLabel.append(h("span", "visually-hidden", "Time"), scrub, clock);
    player.append(buttons, scrubLabel);
    var narration = h("p", "race-narration");
    narration.setAttribute("data-race-narration", "");
    narration.setAttribute("aria-live", "polite");
    var verdict = h("div", "race-verdict verdict-unsafe");
    var what = h("p");
    what.appendChild(h("strong", "", "What happened:"));
    var outs = h("ul", "race-outcomes");
    (cx.outcomes || []).forEach(function (o) {
      var li = h("li", "outcome-" + o.outcome);
      li.setAttribute("data-outcome", o.outcome);
      li.append(h("strong", "", o.label || o.outcome), " ", h("span", "race-time", "(at " + seconds(o.t_ms) + ")"), o.text ? " " + o.text : "");
      outs.appendChild(li);
    });
    verdict.append(what, outs);
    var det = h("details", "race-transcript");
    det.open = true;
    det.appendChild(h("summary", "", "Transcript"));
    var ol = h("ol");
    ol.setAttribute("data-race-transcript", "");
    cx.events.forEach(function (e, i) {
      var li = h("li");
      li.setAttribute("data-i", String(i));
      li.append(h("span", "race-time", seconds(e.t_ms)), " ", h("span", "race-actor", e.actor), " " + e.text);
      ol.appendChild(li);
    });
    det.appendChild(ol);
    var links = h("p", "race-links");
    var a = h("a", "", "Link to this schedule");
    a.href = cx.link || "#";
    a.setAttribute("data-lab-cx-link", "");
    links.appendChild(a);
    sec.append.apply(sec, [h4].concat(extra, [stage, player, narration, verdict, det, links]));
    return sec;
  }

  function seconds(ms) { return (Math.round(ms) / 1000) + " s"; }

  // players sets up a player on each counterexample of a report.
  function players(sec, data) {
    if (!race || !sec) return;
    (data.properties || []).forEach(function (p) {
      if (!p.counterexample) return;
      var box = sec.querySelector("[data-lab-cx=\"" + p.id + "\"]");
      if (box) player(box, p);
    });
  }

  // player plays one counterexample: the race's drawing, with the lab's
  // few controls (play, step, scrub) and the narration.
  function player(box, p) {
    var cx = p.counterexample;
    var $ = function (sel) { return box.querySelector(sel); };
    var stage = $("[data-race-stage]"), controls = $("[data-race-player]"), narration = $("[data-race-narration]");
    var transcript = $("[data-race-transcript]"), clock = $("[data-race-clock]");
    var playBtn = controls.querySelector("[data-act=play]"), scrub = controls.querySelector("[data-act=scrub]");
    var run = {
      id: "lab", title: "the counterexample to " + p.id, nodes: cx.nodes || 1,
      params: { fencing: !!cx.fencing, ttl_ms: cx.ttl_ms || 1000 }, events: cx.events
    };
    var outcomes = (cx.outcomes || []).map(function (o) {
      return { id: o.outcome, t_ms: o.t_ms, event: o.event, text: o.text || "", label: o.label || "", short: o.short || "" };
    });
    var lastT = run.events.length ? run.events[run.events.length - 1].t_ms : 0;
    var T = Math.max(1000, Math.ceil(lastT * 1.06));
    var t = 0, idx = -2, playing = false, last = 0, lastStep = 0;
    [stage, controls, narration].forEach(function (el) { el.hidden = false; });
    box.classList.add("race-live");
    var view = race.draw(stage, run, T, outcomes);
    box.setAttribute("data-lab-playing", "ready");
    say("Press Play to watch this schedule break " + p.id + ", or step through it.");

    function say(text) { narration.textContent = text; }
    function label(o) { return o.label || o.id; }

    function seek(to) {
      t = Math.max(0, Math.min(T, to));
      var i = -1;
      while (i + 1 < run.events.length && run.events[i + 1].t_ms <= t) i++;
      if (i !== idx) enter(i);
      var x = view.x(t);
      view.playhead.setAttribute("transform", "translate(" + x.toFixed(1) + " 0)");
      view.reveal(t);
      view.drain(run.events[idx] || null, t);
      scrub.value = String(Math.round(1000 * t / T));
      clock.textContent = (Math.floor(t / 100) / 10) + " s";
      if (t >= T && playing) finish();
    }

    function enter(i) {
      idx = i;
      transcript.querySelectorAll("li").forEach(function (li, j) {
        if (j === i) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
      });
      var e = i >= 0 ? run.events[i] : null;
      if (e) {
        var text = seconds(e.t_ms) + ": " + e.text;
        outcomes.forEach(function (o) { if (o.event === i) text += " Outcome: " + label(o) + "."; });
        say(text);
      }
      view.markers.forEach(function (m, j) { m.style.display = j <= i ? "" : "none"; m.classList.toggle("current", j === i); });
      view.state(e);
    }

    function finish() {
      stop();
      box.setAttribute("data-lab-playing", "done");
      say("The end. What happened: " + outcomes.map(label).join("; ") + ".");
    }

    function play() {
      if (t >= T) seek(0);
      playing = true;
      box.setAttribute("data-lab-playing", "playing");
      playBtn.textContent = "Pause";
      last = performance.now();
      lastStep = last;
      requestAnimationFrame(tick);
    }
    function stop() {
      playing = false;
      playBtn.textContent = t >= T ? "Play again" : "Play";
    }
    function tick(now) {
      if (!playing) return;
      if (reduceMotion) {
        if (now - lastStep >= 1400) { lastStep = now; step(1); }
      } else {
        seek(t + (now - last) * (T / (PLAY_SECONDS * 1000)));
      }
      last = now;
      if (playing && t < T) requestAnimationFrame(tick);
      else if (playing) finish();
    }
    function step(dir) {
      var times = run.events.map(function (e) { return e.t_ms; }).concat([T]);
      var target = dir > 0
        ? times.find(function (x) { return x > t + 0.5; })
        : times.slice().reverse().find(function (x) { return x < t - 0.5; });
      seek(target === undefined ? (dir > 0 ? T : 0) : target);
      if (t >= T) finish();
    }
    controls.addEventListener("click", function (ev) {
      var act = ev.target.getAttribute("data-act");
      if (act === "play") { if (playing) stop(); else play(); }
      else if (act === "back") { stop(); step(-1); }
      else if (act === "forward") { stop(); step(1); }
    });
    scrub.addEventListener("input", function () { stop(); seek(T * Number(scrub.value) / 1000); });
    box.addEventListener("keydown", function (ev) {
      var tag = ev.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      if (ev.key === "ArrowRight") { ev.preventDefault(); stop(); step(1); }
      else if (ev.key === "ArrowLeft") { ev.preventDefault(); stop(); step(-1); }
    });
    seek(0);
  }
})();
