// Lock Lab race player: draws a scenario's timeline as SVG and plays it.
// The server renders every part of the race widget, so the page works
// without this script; with it, the learner predicts what will happen,
// then plays, pauses, steps and scrubs through the run, changes settings
// in place and adds faults at the playhead. A new run's parts, and the
// prediction judged at the end, are fragments of the page the server
// renders with the page's own templates (/race?fragment=run or judged);
// this script puts them in place and builds none of them. Nothing of the
// run is drawn before the playhead reaches it: the drawing starts with
// the lanes only, and each bar, marker and token appears when its time
// comes. The lock lab's counterexamples play on the same player
// ([data-race-replay], rendered by the same template, with their run in
// the page). Text the script writes goes in with textContent.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var PLAY_SECONDS = 16; // a whole run lasts this long at 1x
  var reduceMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  var present = document.documentElement.classList.contains("present");
  var uid = 0; // tells apart the patterns of several drawings on a page

  document.querySelectorAll("[data-race]").forEach(function (root) { setup(root); });
  document.querySelectorAll("[data-race-replay]").forEach(function (box) { replay(box); });
  // The lock lab (lab.js) plays the counterexamples of a report it puts
  // in the page; the page tests draw made-up runs.
  window.LockLabRace = { replay: replay, draw: draw };

  // replay plays the run a box carries (a lock lab counterexample): the
  // JSON script in it holds the run, in the race API's shape.
  function replay(box) {
    var data = box.querySelector("script[type='application/json']");
    if (!data) return;
    var run;
    try { run = JSON.parse(data.textContent); } catch (e) { return; }
    player(box, {}).load(run);
  }

  // player plays runs in box, on the controls the server's racePlayer
  // rendered: the stage, the buttons and slider, the narration, and the
  // transcript's lines, one per event. opts: keys, the element whose keys
  // drive it (box if not given); hideAhead, to hide the lines the playhead
  // has not reached; and hooks: moved, when the learner moves the
  // playhead (play, step, scrub, End), entered, when an event is reached
  // before the end, framed(t), at each frame, and finished, at the end.
  // The narration says what the server put in it while a run is at its
  // start.
  function player(box, opts) {
    var $ = function (sel) { return box.querySelector(sel); };
    var stage = $("[data-race-stage]"), controls = $("[data-race-player]");
    var narration = $("[data-race-narration]");
    var clock = $("[data-race-clock]");
    var playBtn = controls.querySelector("[data-act=play]");
    var scrub = controls.querySelector("[data-act=scrub]");
    var speedSel = controls.querySelector("[data-act=speed]");
    var hook = function (name, arg) { if (opts[name]) opts[name](arg); };
    var run = null, outcomes = [], t = 0, T = 1, idx = -1, playing = false, last = 0, lastStep = 0;
    var view = null, done = false, intro = narration.textContent;
    [stage, controls, narration].forEach(function (el) { el.hidden = false; });
    box.classList.add("race-live");

    // load puts a run on screen, undrawn, with the playhead at 0.
    function load(data) {
      run = data;
      outcomes = (data.outcomes || []).map(function (o) {
        return { id: o.outcome, t_ms: o.t_ms, event: o.event, text: o.text || "", label: o.label || "", short: o.short || "" };
      });
      var lastT = data.events.length ? data.events[data.events.length - 1].t_ms : 0;
      T = Math.max(1000, Math.ceil(lastT * 1.06));
      view = draw(stage, data, T, outcomes);
      stop();
      idx = -2; // force enter() on the first seek
      done = false;
      seek(0);
      say(intro);
      box.setAttribute("data-race-playing", "ready");
    }

    function say(text) { narration.textContent = text; }

    function seek(to) {
      t = Math.max(0, Math.min(T, to));
      var i = -1;
      while (run && i + 1 < run.events.length && run.events[i + 1].t_ms <= t) i++;
      if (i !== idx) enter(i);
      frame();
      if (t >= T && !done) finish();
    }

    // enter updates everything that changes only at an event.
    function enter(i) {
      var from = idx;
      idx = i;
      // The transcript is looked up each time: a new run brings its own.
      box.querySelectorAll("[data-race-transcript] li").forEach(function (li, j) {
        if (opts.hideAhead) li.hidden = j > i;
        if (j === i) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
      });
      var e = i >= 0 ? run.events[i] : null;
      if (e) {
        var text = seconds(e.t_ms) + ": " + e.text;
        outcomes.forEach(function (o) {
          if (o.event === i && o.id !== "safe" && o.label) text += " Outcome: " + o.label + ".";
        });
        say(text);
      } else if (from > -1) {
        say("Back at the start.");
      }
      view.markers.forEach(function (m, j) { m.style.display = j <= i ? "" : "none"; m.classList.toggle("current", j === i); });
      view.state(e);
      if (t < T) {
        done = false;
        hook("entered");
      }
    }

    // frame moves what changes continuously: the playhead, the bars that
    // grow with it, and the clock, which the slider says aloud too.
    function frame() {
      var x = view.x(t);
      view.playhead.setAttribute("transform", "translate(" + x.toFixed(1) + " 0)");
      view.reveal(t);
      scrub.value = String(Math.round(1000 * t / T));
      var shown = (Math.floor(t / 100) / 10) + " s";
      if (clock.textContent !== shown) {
        clock.textContent = shown;
        scrub.setAttribute("aria-valuetext", shown);
      }
      view.drain(run.events[idx] || null, t);
      hook("framed", t);
    }

    function finish() {
      done = true;
      stop();
      box.setAttribute("data-race-playing", "done");
      say("The end. What happened: " + outcomes.map(function (o) { return o.label || o.id; }).join("; ") + ".");
      hook("finished");
    }

    function play() {
      if (!run) return;
      hook("moved");
      if (t >= T) seek(0);
      playing = true;
      box.setAttribute("data-race-playing", "playing");
      playBtn.textContent = "Pause";
      last = performance.now();
      lastStep = last;
      requestAnimationFrame(tick);
    }

    function stop() {
      playing = false;
      playBtn.textContent = t >= T ? "Play again" : "Play";
      if (box.getAttribute("data-race-playing") === "playing") box.setAttribute("data-race-playing", "paused");
    }

    function tick(now) {
      if (!playing) return;
      var speed = (speedSel && parseFloat(speedSel.value)) || 1;
      if (reduceMotion) {
        // No gliding: jump from event to event.
        if (now - lastStep >= 1600 / speed) { lastStep = now; step(1); }
      } else {
        seek(t + (now - last) * (T / (PLAY_SECONDS * 1000)) * speed);
      }
      last = now;
      if (playing && t < T) requestAnimationFrame(tick);
    }

    // step moves the playhead to the next or the previous event.
    function step(dir) {
      if (!run) return;
      hook("moved");
      var times = run.events.map(function (e) { return e.t_ms; }).concat([T]);
      var target = dir > 0
        ? times.find(function (x) { return x > t + 0.5; })
        : times.slice().reverse().find(function (x) { return x < t - 0.5; });
      seek(target === undefined ? (dir > 0 ? T : 0) : target);
    }

    controls.addEventListener("click", function (ev) {
      var act = ev.target.getAttribute("data-act");
      if (act === "play") { if (playing) stop(); else play(); }
      else if (act === "back") { stop(); step(-1); }
      else if (act === "forward") { stop(); step(1); }
      else if (act === "replay") { seek(0); play(); }
    });
    scrub.addEventListener("input", function () { stop(); hook("moved"); seek(T * Number(scrub.value) / 1000); });

    (opts.keys || box).addEventListener("keydown", function (ev) {
      var tag = ev.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      if (ev.key === " " && tag !== "BUTTON" && tag !== "SUMMARY" && tag !== "A") { ev.preventDefault(); if (playing) stop(); else play(); }
      else if (ev.key === "ArrowRight") { ev.preventDefault(); stop(); step(1); }
      else if (ev.key === "ArrowLeft") { ev.preventDefault(); stop(); step(-1); }
      else if (ev.key === "Home") { ev.preventDefault(); stop(); seek(0); }
      else if (ev.key === "End") { ev.preventDefault(); stop(); hook("moved"); seek(T); }
    });

    // A drawing is as wide as its stage: a new width draws it again.
    var resizeTimer = 0, lastWidth = stage.clientWidth;
    window.addEventListener("resize", function () {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(function () {
        if (!run || !box.isConnected || Math.abs(stage.clientWidth - lastWidth) < 20) return;
        lastWidth = stage.clientWidth;
        var at = t;
        view = draw(stage, run, T, outcomes);
        idx = -2;
        seek(at);
      }, 200);
    });

    return { load: load, say: say, play: play };
  }

  // setup drives a race widget. The server renders every part of it; with
  // the script, what happened is told as the playhead reaches it, and a
  // change of the settings, or a fault added or removed, asks the server
  // for the parts of the widget a new run changes (GET the settings
  // form's address with its fields and fragment=run: views.RaceRun), which
  // take the place of the page's own. The player reads the run's events
  // from the race API (data-api) to draw them.
  function setup(root) {
    var $ = function (sel) { return root.querySelector(sel); };
    var predict = $("[data-race-predict]"), predictForm = $("[data-race-predict-form]");
    var form = $("[data-race-form]"), settingsBox = $("[data-race-settings]");
    var faultBox = $("[data-race-fault]"), story = $("[data-race-story]");
    var predictSummary = predict.querySelector("summary");
    var predictAsk = predictSummary.textContent;
    var compact = root.classList.contains("race-compact");
    // The outcomes' labels come from the server: each prediction choice
    // is labelled with one.
    var labels = {};
    predict.querySelectorAll("input[type=checkbox]").forEach(function (el) {
      labels[el.value] = el.parentNode.textContent.trim();
    });
    var run = null, asked = false, prediction = null;

    // With the script, what happened is told as the playhead reaches it:
    // the transcript grows line by line, and the outcomes come at the
    // end, above it. The form that shows it all at once is not needed.
    predict.hidden = false;
    story.parentNode.insertBefore($("[data-race-result]"), story);
    story.querySelector("[data-race-story-nojs]").hidden = true;
    story.querySelector("[data-race-story-js]").hidden = false;
    story.open = !compact;
    $("[data-race-steps-title]").hidden = true;
    $("[data-race-predict-nojs]").hidden = true;
    $("[data-race-predict-js]").hidden = false;
    $("[data-race-result]").hidden = true;
    if (present) settingsBox.open = false;
    if (present) predict.open = false;
    var faultAt = function () {}, kindChanged = function () {}, faultAdded = function () {};
    var pl = player(root, {
      keys: present ? document : root, // on the presenter view, wherever the focus is
      hideAhead: true,
      moved: function () { lockPrediction(false); },
      entered: function () { $("[data-race-result]").hidden = true; },
      framed: function (t) { faultAt(t); },
      finished: finished
    });

    // getJSON fetches a run from the race API.
    function getJSON(url) {
      return fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
        .then(function (resp) {
          return resp.json().catch(function () { return {}; }).then(function (data) {
            if (!resp.ok) throw new Error(data.error || $("[data-race-error]").getAttribute("data-race-failed"));
            return data;
          });
        });
    }

    // fragment asks path for the part of the widget called name, with
    // the query q, as this widget renders it (the lesson's is compact).
    // It resolves to the answer's status and the parsed page: a query the
    // server refuses (400, 404, 429) comes as the fragment with its
    // error, anything else as the error page.
    function fragment(path, q, name) {
      q.set("fragment", name);
      if (compact) q.set("widget", "lesson");
      return fetch(path + "?" + q.toString(), { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (resp) {
          return resp.text().then(function (html) {
            return { ok: resp.ok, doc: new DOMParser().parseFromString(html, "text/html") };
          });
        });
    }

    // swap puts the server's part sel, from got, in place of the page's.
    function swap(got, sel) {
      var now = $(sel), next = got.querySelector(sel);
      if (now && next) now.replaceWith(document.importNode(next, true));
    }

    // start puts a new run on the player, undrawn: the playhead at 0 and
    // the prediction asked again. Every run is a new round, whether the
    // learner changed a setting or added a fault.
    function start(data) {
      run = data;
      resetPrediction();
      $("[data-race-result]").hidden = true;
      pl.load(data);
    }

    function resetPrediction() {
      asked = false;
      prediction = null;
      predict.querySelectorAll("input[type=checkbox]").forEach(function (el) { el.checked = false; el.disabled = false; });
      predictSummary.textContent = predictAsk;
      predict.classList.remove("race-predict-done");
      predict.open = !present;
    }

    // lockPrediction takes the ticked outcomes as the learner's prediction
    // when the run is first played; none ticked is no prediction.
    function lockPrediction(skip) {
      if (asked) return;
      asked = true;
      var ticked = [];
      predict.querySelectorAll("input[type=checkbox]").forEach(function (el) {
        if (el.checked && !skip) ticked.push(el.value);
        el.disabled = true;
      });
      prediction = ticked.length ? ticked : null;
      predictSummary.textContent = prediction
        ? "Your prediction: " + prediction.map(function (id) { return labels[id] || id; }).join("; ") + "."
        : "No prediction this time.";
      predict.classList.add("race-predict-done");
      predict.open = false;
    }

    // finished shows what happened at the end of a round, reports the
    // round, and then shows the prediction judged, as the prediction form
    // asks for it without the script (show=1, fragment=judged).
    function finished() {
      $("[data-race-result]").hidden = false;
      var mine = run;
      report(prediction || []);
      if (!prediction) return;
      var q = new URLSearchParams(new FormData(predictForm));
      q.delete("predict");
      prediction.forEach(function (id) { q.append("predict", id); });
      q.set("show", "1");
      fragment(predictForm.getAttribute("action"), q, "judged").then(function (answer) {
        if (!answer.ok || mine !== run || $("[data-race-result]").hidden) return;
        swap(answer.doc, "[data-race-judged]");
      }).catch(function () {});
    }

    // report tells the server a run was played to the end, for workshop
    // dashboards: the run as the prediction form carries it, and the
    // prediction. The server works out the outcomes itself.
    function report(pred) {
      var scenario = "", params = {};
      new URLSearchParams(new FormData(predictForm)).forEach(function (v, k) {
        if (k === "scenario") scenario = v;
        else if (k === "fault") (params.fault = params.fault || []).push(v);
        else if (k !== "predict") params[k] = v;
      });
      var meta = document.querySelector("meta[name=csrf-token]");
      fetch("/api/race/done", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": meta ? meta.getAttribute("content") : "" },
        body: JSON.stringify({ scenario: scenario, params: params, prediction: pred })
      }).catch(function () {});
    }

    predict.querySelector("[data-act=skip]").addEventListener("click", function () {
      lockPrediction(true);
      pl.play();
    });
    // The prediction form shows the whole run at once without the
    // script; with it, sending the form plays the run.
    predictForm.addEventListener("submit", function (ev) {
      ev.preventDefault();
      pl.play();
    });
    root.setAttribute("tabindex", "-1");

    // rerun sends the settings form as it goes without the script, with
    // the button pressed (Run, Add this fault, a fault's Remove), and
    // puts the new run in place. Only the last of several runs asked for
    // is shown; a run refused leaves the one on screen, with the
    // server's reason.
    var latest = 0;
    function rerun(submitter) {
      var mine = ++latest;
      var q = new URLSearchParams(new FormData(form));
      if (submitter && submitter.name) q.append(submitter.name, submitter.value);
      var got = null;
      fragment(form.getAttribute("action"), q, "run").then(function (answer) {
        got = answer.doc.querySelector("[data-race-fragment=run]");
        if (!got) throw new Error("no fragment");
        return answer.ok ? getJSON(got.getAttribute("data-api")) : null;
      }).then(function (data) {
        if (mine !== latest) return;
        if (!data) {
          ["[data-race-error]", "[data-race-fault-error]"].forEach(function (sel) { swap(got, sel); });
          return;
        }
        // A part replaced may have had the focus (a fault's Remove): it
        // goes to the fault form, or to the widget.
        var focused = document.activeElement, inFaults = !!faultBox && faultBox.contains(focused);
        place(got);
        start(data);
        if (submitter && submitter.name === "add_fault") faultAdded();
        else if (focused && !focused.isConnected) (inFaults ? faultBox.querySelector("[data-race-fault-kind]") : root).focus();
      }).catch(function () {
        if (mine !== latest) return;
        var err = $("[data-race-error]");
        err.textContent = err.getAttribute("data-race-failed");
        err.hidden = false;
      });
    }

    // place puts a new run's parts, got, in place of the page's. The
    // settings form stays, as the learner may be in it: its fields take
    // the server's values (a new scenario brings its defaults) but for the
    // one the learner is in, and show if they apply to the run.
    function place(got) {
      ["[data-race-head]", "[data-race-setup]", "[data-race-error]", "[data-race-form-run]", "[data-race-run-fields]",
        "[data-race-result]", "[data-race-transcript]", "[data-race-fault-list]", "[data-race-fault-error]"].forEach(function (sel) { swap(got, sel); });
      var next = got.querySelector("[data-race-form]");
      next.querySelectorAll("input[id], select[id]").forEach(function (el) {
        var now = form.querySelector("#" + CSS.escape(el.id));
        if (!now || now === document.activeElement) return;
        if (el.type === "checkbox") now.checked = el.checked; else now.value = el.value;
        now.disabled = el.disabled;
      });
      next.querySelectorAll("[data-param]").forEach(function (f) {
        var now = form.querySelector("[data-param='" + f.getAttribute("data-param") + "']");
        if (now) now.hidden = f.hidden;
      });
      // What a fault can hit is the new run's; the one chosen stays if the
      // run has it.
      var targets = faultBox && faultBox.querySelector("[data-race-fault-target]"), options = got.querySelector("[data-race-fault-target]");
      if (targets && options) {
        var keep = targets.value;
        targets.replaceChildren.apply(targets, Array.prototype.map.call(options.children, function (o) { return document.importNode(o, true); }));
        if (Array.prototype.some.call(targets.options, function (o) { return o.value === keep; })) targets.value = keep;
        kindChanged();
      }
      ["api", "scenario", "outcomes", "page", "present"].forEach(function (k) {
        root.setAttribute("data-" + k, got.getAttribute("data-" + k));
      });
      // The server's address for the run: the scenario, every setting
      // and the faults.
      var page = got.getAttribute("data-page"), pres = got.getAttribute("data-present");
      var scope = compact ? root : document;
      scope.querySelectorAll("[data-race-link=page]").forEach(function (a) { a.href = page; });
      scope.querySelectorAll("[data-race-link=present]").forEach(function (a) { a.href = pres; });
      if (!compact && window.history && history.replaceState) {
        history.replaceState(null, "", location.pathname + page.slice(page.indexOf("?")));
      }
    }

    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      rerun(ev.submitter);
    });
    form.addEventListener("change", function () { rerun(); });

    // Faults added at the playhead (on /race; the lesson links there).
    if (faultBox) faultUI();
    function faultUI() {
      var kindSel = faultBox.querySelector("[data-race-fault-kind]");
      var atInput = faultBox.querySelector("[data-race-fault-at]");
      var argLabel = faultBox.querySelector("[data-race-fault-arg-label]");
      var persist = faultBox.querySelector("[data-race-fault-persist]");
      var atLabel = faultBox.querySelector("[data-race-fault-at-label]");
      var atEdited = false;
      atInput.addEventListener("input", function () { atEdited = true; });

      faultAt = function (now) {
        if (atEdited) return;
        var at = Math.round(now / 100) * 100;
        if (atInput.value !== String(at)) atInput.value = String(at);
        var text = "at the playhead, " + seconds(at);
        if (atLabel.textContent !== text) atLabel.textContent = text;
      };

      // kindChanged fits the fault fields to its kind, as the server
      // describes each on its option: the ARG's label, and whether it
      // hits clients, nodes or either.
      kindChanged = function () {
        var kind = kindSel.options[kindSel.selectedIndex];
        var targetSel = faultBox.querySelector("[data-race-fault-target]");
        argLabel.textContent = kind.getAttribute("data-arg-label");
        persist.parentNode.hidden = kind.value !== "crash";
        var first = null;
        Array.prototype.forEach.call(targetSel.options, function (o) {
          var isClient = o.value.indexOf("client") === 0;
          o.disabled = !kind.hasAttribute(isClient ? "data-clients" : "data-nodes");
          o.hidden = o.disabled;
          if (!o.disabled && !first) first = o;
        });
        var sel = targetSel.options[targetSel.selectedIndex];
        if ((!sel || sel.disabled) && first) targetSel.value = first.value;
      };
      kindSel.addEventListener("change", kindChanged);
      kindChanged();

      // faultAdded starts the new round a fault brings: the fault is the
      // last line of the setup, to predict before it plays.
      faultAdded = function () {
        atEdited = false;
        predict.open = true;
        pl.say("Your fault is the last line of the setup. What will it change? Tick what you expect, then press Play.");
        var first = predict.querySelector("input[type=checkbox]");
        if (first && !present) first.focus();
      };
    }

    getJSON(root.getAttribute("data-api")).then(function (data) {
      start(data);
      if (present) root.focus();
    }).catch(function (err) {
      var el = $("[data-race-error]");
      el.textContent = err.message;
      el.hidden = false;
    });
  }

  function seconds(ms) { return (Math.round(ms) / 1000) + " s"; }

  function el(name, attrs, parent) {
    var n = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (k) { n.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(n);
    return n;
  }

  function clientNo(name) {
    var m = /^client (\d+)$/.exec(name || "");
    return m ? Number(m[1]) : 0;
  }

  // clientOf is the client an event is about: its actor, or its subject.
  function clientOf(e) { return clientNo(e.actor) || clientNo(e.subject); }

  function colour(n) { return n ? "c" + (((n - 1) % 4) + 1) : "c0"; }

  // nodeName is the lane of node k (0-based) of a run.
  function nodeName(run, k) {
    var ev = run.events.find(function (e) { return e.nodes && e.nodes[k] && e.nodes[k].name; });
    if (ev) return ev.nodes[k].name;
    return run.nodes === 1 ? "redis" : "redis node " + (k + 1);
  }

  // draw builds the SVG for a run and returns what the player updates.
  // Every element of the run carries the time it appears at, and the
  // player shows it only once the playhead is there. outcomes are the
  // run's, each with its id (or outcome), time, event and, from the
  // server, its label and short words; an outcome without words gets a
  // flag and no text.
  function draw(stage, run, T, outcomes) {
    var clients = [];
    run.events.forEach(function (e) {
      [e.actor, e.subject].forEach(function (a) { if (clientNo(a) && clients.indexOf(a) < 0) clients.push(a); });
    });
    clients.sort(function (a, b) { return clientNo(a) - clientNo(b); });
    var nodeLanes = [];
    for (var n = 0; n < run.nodes; n++) nodeLanes.push(nodeName(run, n));
    var lanes = clients.concat(nodeLanes);
    run.events.forEach(function (e) {
      if (lanes.indexOf(e.actor) < 0 && e.actor !== "storage") lanes.push(e.actor);
    });
    var fencing = !!(run.params && run.params.fencing);
    if (run.events.some(function (e) { return e.actor === "storage"; })) lanes.push("storage");
    var flagged = (outcomes || []).map(function (o) {
      return { id: o.id || o.outcome, t_ms: o.t_ms, words: o.short || o.label || "" };
    }).filter(function (o) { return o.id !== "safe"; });

    // The drawing is as wide as the stage in CSS pixels, so text stays
    // readable on a phone instead of being scaled down. On a narrow stage
    // each lane's name sits above its lane instead of to its left.
    var W = Math.max(300, Math.round(stage.clientWidth) || 1000);
    var narrow = W < 560;
    var left = narrow ? 10 : present ? 210 : 132, right = present ? 24 : 16, top = present ? 64 : narrow ? 42 : 46;
    var laneH = narrow ? 50 : present ? 62 : 44, labelH = narrow ? 17 : 0;
    // Below the lanes, a strip names each outcome under its flag.
    var rowH = present ? 26 : narrow ? 16 : 18;
    var lanesEnd = top + lanes.length * laneH;
    var H = lanesEnd + 8 + (flagged.length ? flagged.length * rowH + 4 : 0);
    var x = function (t) { return left + (W - left - right) * Math.min(Math.max(t, 0), T) / T; };
    var laneTop = function (lane) { return top + lanes.indexOf(lane) * laneH; };
    var y = function (lane) { return laneTop(lane) + labelH + (laneH - labelH) / 2; };
    var inner = laneH - labelH;

    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "class": "race-svg race-timeline" + (narrow ? " race-narrow" : "") });
    // On the page from the start, so that labels can be measured.
    stage.replaceChildren(svg);
    var title = el("title", {}, svg);
    title.textContent = "Timeline of " + run.title + ": " + lanes.join(", ") + " over " + seconds(T) + ". The transcript below says what happens, step by step.";
    var defs = el("defs", {}, svg);
    var hatch = el("pattern", { id: "race-hatch-" + uid, width: 8, height: 8, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, defs);
    el("rect", { width: 8, height: 8, "class": "hatch-bg" }, hatch);
    el("line", { x1: 0, y1: 0, x2: 0, y2: 8, "class": "hatch-line" }, hatch);
    var hatchURL = "url(#race-hatch-" + uid + ")";
    uid++;

    // Labels never overlap: each goes to the first of its places where
    // it covers no other label, or, if none is free, is left out (the
    // marker's tooltip and the transcript still say it).
    var taken = [];
    function boxOf(tx) {
      var b = null;
      try { b = tx.getBBox(); } catch (e) { b = null; }
      if (!b || !b.width) {
        // Not laid out (a hidden stage): a generous guess.
        var size = parseFloat(getComputedStyle(tx).fontSize) || 13;
        var w = tx.textContent.length * size * 0.62, ax = tx.getAttribute("text-anchor") || (/\bend\b/.test(tx.getAttribute("class")) ? "end" : "start");
        var bx = Number(tx.getAttribute("x")) - (ax === "end" ? w : 0);
        b = { x: bx, y: Number(tx.getAttribute("y")) - size, width: w, height: size * 1.3 };
      }
      return b;
    }
    function free(b) {
      if (b.x < 0 || b.x + b.width > W) return false;
      return taken.every(function (o) {
        return b.x + b.width <= o.x || b.x >= o.x + o.width || b.y + b.height <= o.y || b.y >= o.y + o.height;
      });
    }
    // place puts text with class cls at the first free spot of spots
    // ([x, y, anchor] in the coordinates of parent, offset by dx, dy in
    // the drawing) and returns it, or null.
    function place(parent, spots, text, cls, dx, dy) {
      for (var i = 0; i < spots.length; i++) {
        var sp = spots[i];
        var tx = el("text", { x: sp[0], y: sp[1], "class": cls + (sp[2] === "end" ? " end" : sp[2] === "middle" ? " mid" : "") }, parent);
        tx.textContent = text;
        var b = boxOf(tx);
        b = { x: b.x + (dx || 0), y: b.y + (dy || 0), width: b.width, height: b.height };
        if (free(b)) { taken.push(b); return tx; }
        parent.removeChild(tx);
      }
      return null;
    }

    // Lanes: the setup, drawn from the start. Their names go on top of
    // everything, the playhead included, in labels().
    lanes.forEach(function (lane, i) {
      el("rect", { x: 0, y: top + i * laneH, width: W, height: laneH, "class": i % 2 ? "lane lane-odd" : "lane" }, svg);
    });
    var names = el("g", { "class": "race-names" });
    lanes.forEach(function (lane, i) {
      var c = clientNo(lane);
      var label = el("text", { x: 8, y: narrow ? top + i * laneH + 13 : y(lane) + 5, "class": "lane-label" + (c ? " " + colour(c) : "") }, svg);
      label.textContent = lane;
      taken.push(boxOf(label));
      names.appendChild(label);
    });
    var stepMs = niceStep(T, narrow ? 4 : present ? 10 : 8);
    for (var tt = 0; tt <= T; tt += stepMs) {
      el("line", { x1: x(tt), x2: x(tt), y1: top - 4, y2: lanesEnd, "class": "tick" }, svg);
      var lbl = el("text", { x: x(tt), y: top - 8, "class": "tick-label" }, svg);
      lbl.textContent = (tt / 1000) + " s";
      taken.push(boxOf(lbl));
    }

    // The run: each part appears when the playhead reaches it, and bars
    // grow with the playhead up to their end.
    var timed = [];
    var later = el("g", { "class": "race-run" }, svg);
    function part(node, t0, t1, grow) {
      node.setAttribute("data-t0", t0);
      node.style.display = "none";
      timed.push({ node: node, t0: t0, t1: t1, grow: grow || null, x0: x(t0), shown: false });
      return node;
    }
    function bar(lane, t0, t1, cls, dy, h, parent) {
      var r = el("rect", { x: x(t0), y: y(lane) + dy, width: 0, height: h, "class": cls }, parent || later);
      return part(r, t0, t1, "width");
    }
    // text places a label of the run, shown from time t0.
    function text(t0, spots, words, cls) {
      var tx = place(later, spots, words, cls);
      if (tx) part(tx, t0, null);
      return tx;
    }

    // Belief: the clients that believe they hold the lock after each
    // event (a paused client still does), as the server reports them.
    var beliefs = [];
    clients.forEach(function (c) {
      var start = null;
      run.events.forEach(function (e) {
        var holds = (e.holding || []).indexOf(c) >= 0;
        if (holds && start === null) start = e.t_ms;
        else if (!holds && start !== null) { beliefs.push({ c: c, a: start, b: e.t_ms }); start = null; }
      });
      if (start !== null) beliefs.push({ c: c, a: start, b: T });
    });
    // Where two clients believe it at once.
    var spans = [];
    beliefs.forEach(function (p, i) {
      beliefs.slice(i + 1).forEach(function (q) {
        if (p.c === q.c) return;
        var a = Math.max(p.a, q.a), b = Math.min(p.b, q.b);
        if (a < b) spans.push([a, b]);
      });
    });
    spans.sort(function (p, q) { return p[0] - q[0]; });
    var merged = [];
    spans.forEach(function (s) {
      var m = merged[merged.length - 1];
      if (m && s[0] <= m[1]) m[1] = Math.max(m[1], s[1]); else merged.push(s.slice());
    });
    var overlapLabels = [];
    if (clients.length) {
      var y0 = laneTop(clients[0]) + 2, y1 = laneTop(clients[clients.length - 1]) + laneH - 2;
      merged.forEach(function (s) {
        var r = el("rect", { x: x(s[0]), y: y0, width: 0, height: y1 - y0, "class": "overlap" }, later);
        part(r, s[0], s[1], "width");
        // Placed once the markers have their labels: they come first.
        overlapLabels.push(s);
      });
    }
    beliefs.forEach(function (p) {
      bar(p.c, p.a, p.b, "belief " + colour(clientNo(p.c)), -inner / 2 + 4, inner - 8);
      bar(p.c, p.a, p.b, "belief-edge " + colour(clientNo(p.c)), inner / 2 - 7, 3);
    });

    // Lock keys on each node, from the state after each event; a run of
    // events with the same holder is one bar. A key with no TTL (ttl_ms
    // -1) lasts until something removes it, to the end of the run if
    // nothing does, and is marked so; a key whose TTL has already run
    // out by its node's clock (a clock jumped) ends where that is seen.
    var noTTL = false, laneLabels = [];
    nodeLanes.forEach(function (lane, k) {
      var cur = null;
      var flush = function () {
        if (cur && cur.end > cur.start) {
          bar(lane, cur.start, cur.end, "hold " + colour(clientNo(cur.holder)) + (cur.forever !== null ? " no-ttl" : ""), -10, 20);
          if (cur.forever !== null) {
            noTTL = true;
            laneLabels.push({ t0: cur.forever, spots: [[x(cur.forever) + 5, y(lane) + 4], [x(cur.end) - 5, y(lane) + 4, "end"]], words: "no TTL", cls: "nottl-label" });
          }
        }
        cur = null;
      };
      run.events.forEach(function (e, i) {
        var st = e.nodes && e.nodes[k];
        var next = i + 1 < run.events.length ? run.events[i + 1].t_ms : T;
        if (!st || !st.holder || !st.up) { flush(); return; }
        var forever = st.ttl_ms === -1;
        var end = forever ? next : st.ttl_ms > 0 ? Math.min(next, e.t_ms + st.ttl_ms) : e.t_ms;
        if (cur && cur.holder === st.holder && cur.end >= e.t_ms) cur.end = Math.max(e.t_ms, end);
        else { flush(); cur = { holder: st.holder, start: e.t_ms, end: end, forever: null }; }
        if (forever && cur.forever === null) cur.forever = e.t_ms;
      });
      flush();
      // A node that is down: its lane crossed out until it restarts.
      var down = null;
      run.events.forEach(function (e) {
        var st = e.nodes && e.nodes[k];
        if (st && !st.up && down === null) down = e.t_ms;
        if (st && st.up && down !== null) { crossOut(lane, down, e.t_ms, "down"); down = null; }
      });
      if (down !== null) crossOut(lane, down, T, "down");
    });
    // A client that crashed: its lane crossed out to the end.
    var clientCrash = false;
    run.events.forEach(function (e) {
      if (e.kind === "client-crash" && lanes.indexOf(e.actor) >= 0) { clientCrash = true; crossOut(e.actor, e.t_ms, T, "crashed"); }
    });
    function crossOut(lane, a, b, words) {
      var r = bar(lane, a, b, "down", -inner / 2 + 3, inner - 6);
      r.setAttribute("fill", hatchURL);
      var ln = el("line", { x1: x(a), x2: x(a), y1: y(lane), y2: y(lane), "class": "down-line" }, later);
      part(ln, a, b, "x2");
      laneLabels.push({ t0: a, spots: [[x(a) + 12, y(lane) - 5], [x(a) + 12, y(lane) + 14], [x(a) - 6, y(lane) - 5, "end"]], words: words, cls: "down-label" });
    }

    // Pauses on client lanes.
    var pauseStart = {};
    run.events.forEach(function (e) {
      if (e.kind === "pause-start" && pauseStart[e.actor] === undefined) pauseStart[e.actor] = e.t_ms;
      if (e.kind === "pause-end" && pauseStart[e.actor] !== undefined) {
        var a = pauseStart[e.actor];
        var r = bar(e.actor, a, e.t_ms, "pause", -9, 18);
        r.setAttribute("fill", hatchURL);
        laneLabels.push({ t0: a, spots: [[x(a) + 6, y(e.actor) + 4]], words: "paused", cls: "pause-label", within: x(e.t_ms) });
        delete pauseStart[e.actor];
      }
    });
    Object.keys(pauseStart).forEach(function (c) {
      var r = bar(c, pauseStart[c], T, "pause", -9, 18);
      r.setAttribute("fill", hatchURL);
      laneLabels.push({ t0: pauseStart[c], spots: [[x(pauseStart[c]) + 6, y(c) + 4]], words: "paused", cls: "pause-label", within: x(T) });
    });

    // Event markers, shown once their event is reached.
    // A label in the row above a lane's bars: beside the lane's name on
    // a phone, where that row holds the name.
    function rowLabel(g, lane, ex, words, cls) {
      var ry = laneTop(lane) + (narrow ? 13 : present ? 16 : 12) - y(lane);
      var spots = [[9, ry], [-9, ry, "end"]];
      if (narrow) spots.unshift([Math.max(9, 8 + lane.length * 7 + 6 - ex), ry]);
      return place(g, spots, words, cls, ex, y(lane));
    }
    var stuck = false;
    var markers = run.events.map(function (e) {
      var lane = lanes.indexOf(e.actor) >= 0 ? e.actor : lanes[lanes.length - 1];
      var ex = x(e.t_ms);
      var g = el("g", { "class": "marker kind-" + e.kind + (e.stale ? " stale" : "") + " " + colour(clientOf(e)), transform: "translate(" + ex.toFixed(1) + " " + y(lane) + ")" }, svg);
      g.setAttribute("data-t0", e.t_ms);
      // The shape is larger on a projector; the labels have their own sizes.
      shape(present ? el("g", { transform: "scale(1.4)" }, g) : g, e);
      // Its own labels may touch the shape; no later label covers it.
      var half = reach(e).map(function (h) { return present ? h * 1.4 : h; });
      var shapeBox = { x: ex - half[0], y: y(lane) - half[1], width: 2 * half[0], height: 2 * half[1] };
      var onStorage = e.kind === "write-accepted" || e.kind === "write-rejected";
      if (fencing && e.fence && (onStorage || e.kind === "acquire-ok")) {
        if (narrow && !onStorage) rowLabel(g, lane, ex, "#" + e.fence, "fence-label fence-row");
        else {
          var up = present ? -17 : -12, down = present ? 30 : 22;
          place(g, [[0, up, "middle"], [0, down, "middle"]], "#" + e.fence, "fence-label", ex, y(lane));
        }
      }
      if (e.kind === "failover" || e.kind === "restart") rowLabel(g, lane, ex, e.kind === "failover" ? "promoted" : "back up", "event-label");
      if (e.kind === "clock-jump" && e.jump) rowLabel(g, lane, ex, "clock " + e.jump, "jump-label");
      if (e.kind === "stuck") { stuck = true; rowLabel(g, lane, ex, "work hangs", "event-label"); }
      var tip = el("title", {}, g);
      tip.textContent = seconds(e.t_ms) + " " + e.actor + ": " + e.text;
      taken.push(shapeBox);
      g.style.display = "none";
      return g;
    });
    // reach is how far a marker's shape reaches from its centre, across
    // and up, its outline included.
    function reach(e) {
      var k = e.kind;
      if (k === "write-accepted" && e.stale) return [11, 11];
      if (k === "clock-jump") return [6, 13];
      if (k === "extend-ok" || k === "pause-start" || k === "pause-end") return [5, 5];
      return [8, 8];
    }
    function shape(g, e) {
      var k = e.kind;
      if (k === "write-accepted" || k === "write-rejected") {
        el("rect", { x: -7, y: -7, width: 14, height: 14, "class": "m" }, g);
        if (k === "write-rejected") el("path", { d: "M-5 -5L5 5M5 -5L-5 5", "class": "m-x" }, g);
        if (e.stale && k === "write-accepted") el("rect", { x: -10, y: -10, width: 20, height: 20, "class": "m-alarm" }, g);
      } else if (k === "expire") {
        el("path", { d: "M0 -7L7 0L0 7L-7 0Z", "class": "m m-hollow" }, g);
      } else if (k === "crash" || k === "client-crash" || k === "delete-other") {
        el("path", { d: "M-7 -7L7 7M7 -7L-7 7", "class": "m-cross" }, g);
      } else if (k === "clock-jump") {
        el("path", { d: "M0 -12L-5 -4L5 4L0 12", "class": "m-jump" }, g);
      } else if (k === "release-ok" || k === "release-noop" || k === "restart") {
        el("circle", { r: 6, "class": "m m-hollow" + (k === "release-noop" ? " m-dashed" : "") }, g);
      } else if (k === "acquire-fail" || k === "extend-fail" || k === "stop") {
        el("circle", { r: 6, "class": "m m-hollow m-dashed" }, g);
      } else if (k === "extend-ok" || k === "pause-start" || k === "pause-end") {
        el("circle", { r: 4, "class": "m" }, g);
      } else if (k === "stuck" || k === "still-locked") {
        el("rect", { x: -6, y: -6, width: 12, height: 12, "class": "m m-hollow" }, g);
      } else {
        el("circle", { r: 7, "class": "m" }, g);
      }
    }

    // The labels on the lanes, after the markers' own: the key's "no
    // TTL", "down", "paused", then "both think they hold it".
    laneLabels.forEach(function (l) {
      var tx = text(l.t0, l.spots, l.words, l.cls);
      // A pause label fits in its bar, or is left out.
      if (tx && l.within !== undefined && taken[taken.length - 1].x + taken[taken.length - 1].width > l.within + 2) {
        tx.parentNode.removeChild(tx);
        timed.pop();
        taken.pop();
      }
    });
    if (clients.length) {
      // At the head of the first client's lane, above its markers, or
      // at the foot of the last's, below them; inside the span if it can.
      var hy = laneTop(clients[0]) + (present ? 19 : 13), fy = laneTop(clients[clients.length - 1]) + laneH - 5;
      overlapLabels.forEach(function (s) {
        var words = narrow ? "both think so" : "both think they hold it";
        var a = x(s[0]) + 4, b = x(s[1]) - 4, after = x(s[1]) + 4;
        text(s[0], [[a, hy], [b, hy, "end"], [a, fy], [b, fy, "end"], [after, hy], [after, fy]], words, "overlap-label");
      });
    }

    // Outcomes: a flag across the lanes at the event where each happened,
    // with its words in its own row below the lanes.
    flagged.forEach(function (o, i) {
      var fx = x(o.t_ms), ly = lanesEnd + rowH * (i + 1), end = fx > W * 0.6;
      var g = el("g", { "class": "outcome-flag outcome-" + o.id }, svg);
      el("line", { x1: fx, x2: fx, y1: top, y2: ly + 2 }, g);
      if (o.words) place(g, [end ? [fx - 4, ly, "end"] : [fx + 4, ly], end ? [fx + 4, ly] : [fx - 4, ly, "end"]], o.words, "outcome-label");
      part(g, o.t_ms, null);
    });

    // The playhead; on a phone it stops short of the rows that hold the
    // lanes' names. The names go over it.
    var playhead = el("g", { "class": "playhead" }, svg);
    if (narrow) {
      lanes.forEach(function (lane) { el("line", { x1: 0, x2: 0, y1: laneTop(lane) + labelH, y2: laneTop(lane) + laneH }, playhead); });
    } else {
      el("line", { x1: 0, x2: 0, y1: top - 4, y2: lanesEnd + 4 }, playhead);
    }
    svg.appendChild(names);

    // The legend: the same for every run of a scenario, so it tells
    // nothing of what will happen.
    var legend = document.createElement("ul");
    legend.className = "race-legend";
    legend.setAttribute("aria-label", "Legend");
    // Each key is drawn with the timeline's own shapes and classes.
    var key = function (words, paint) {
      var li = document.createElement("li");
      var k = el("svg", { viewBox: "0 0 24 16", width: 24, height: 16, "class": "race-svg", "aria-hidden": "true" }, li);
      paint(k);
      li.append(" " + words);
      legend.appendChild(li);
    };
    var swatch = function (cls, fill) {
      return function (k) { var r = el("rect", { x: 1, y: 3, width: 22, height: 10, "class": cls }, k); if (fill) r.setAttribute("fill", hatchURL); };
    };
    var glyph = function (kind, extra) {
      return function (k) { var g = el("g", { "class": "marker c0 kind-" + kind, transform: "translate(12 8)" }, k); shape(g, Object.assign({ kind: kind }, extra || {})); };
    };
    clients.forEach(function (c) { key(c, swatch("hold " + colour(clientNo(c)))); });
    key("believes it holds the lock", function (k) {
      el("rect", { x: 1, y: 2, width: 22, height: 12, "class": "belief c0" }, k);
      el("rect", { x: 1, y: 12, width: 22, height: 3, "class": "belief-edge c0" }, k);
    });
    key("two believe it at once", swatch("overlap"));
    key("lock key on a node, in its holder's colour", function (k) {
      el("rect", { x: 1, y: 3, width: 11, height: 10, "class": "hold c1" }, k);
      el("rect", { x: 12, y: 3, width: 11, height: 10, "class": "hold c2" }, k);
    });
    if (noTTL) key("lock key with no TTL", swatch("hold no-ttl c0"));
    key("paused", swatch("pause", true));
    var crashes = (run.params && run.params.faults || []).some(function (f) { return /^crash:/.test(f); });
    if (run.nodes > 1 || crashes || clientCrash) {
      key(clientCrash ? "crashed or down" : "node down", function (k) {
        swatch("down", true)(k);
        el("line", { x1: 1, x2: 23, y1: 8, y2: 8, "class": "down-line" }, k);
      });
    }
    key("got the lock", glyph("acquire-ok"));
    key("released", glyph("release-ok"));
    key("asked and got nil", glyph("acquire-fail"));
    key("key expired", glyph("expire"));
    if (stuck) key("work hangs", glyph("stuck"));
    key("write to storage" + (fencing ? ", with its token" : ""), glyph("write-accepted"));
    if (fencing) key("write rejected", glyph("write-rejected"));
    key("an outcome happens", function (k) { el("line", { x1: 12, x2: 12, y1: 0, y2: 16 }, el("g", { "class": "outcome-flag" }, k)); });

    // The state panel: each node's key with its TTL draining, and the
    // storage's highest token when the storage checks tokens.
    var panel = document.createElement("div");
    panel.className = "race-state";
    var rows = nodeLanes.map(function (lane) {
      var row = document.createElement("div");
      row.className = "state-row";
      var name = document.createElement("span");
      name.className = "state-name";
      name.textContent = lane;
      var holder = document.createElement("span");
      holder.className = "state-holder";
      var b = document.createElement("span");
      b.className = "ttl-bar";
      var fill = document.createElement("span");
      fill.className = "ttl-fill";
      b.appendChild(fill);
      row.append(name, holder, b);
      panel.appendChild(row);
      return { holder: holder, fill: fill };
    });
    var storage = document.createElement("p");
    storage.className = "state-storage";
    storage.hidden = !fencing;
    panel.appendChild(storage);

    stage.append(legend, panel);
    var ttlMax = (run.params && run.params.ttl_ms) || 1;

    return {
      x: x,
      playhead: playhead,
      markers: markers,
      reveal: function (now) {
        timed.forEach(function (p) {
          var show = now >= p.t0;
          if (show !== p.shown) { p.node.style.display = show ? "" : "none"; p.shown = show; }
          if (show && p.grow) {
            var to = x(Math.min(now, p.t1));
            if (p.grow === "width") p.node.setAttribute("width", Math.max(0, to - p.x0).toFixed(1));
            else p.node.setAttribute("x2", to.toFixed(1));
          }
        });
      },
      state: function (e) {
        rows.forEach(function (r, k) {
          var st = e && e.nodes ? e.nodes[k] : null;
          if (st && !st.up) r.holder.textContent = "down";
          else if (st && st.holder) r.holder.textContent = "held by " + st.holder + (st.ttl_ms === -1 ? ", no TTL" : "");
          else r.holder.textContent = "free";
          r.fill.className = "ttl-fill " + (st && st.holder ? colour(clientNo(st.holder)) : "c0");
        });
        if (fencing) {
          storage.textContent = e && e.highest_token
            ? "The storage checks fencing tokens; the highest it has seen is #" + e.highest_token + "."
            : "The storage checks fencing tokens; it has seen none yet.";
        }
      },
      drain: function (e, now) {
        rows.forEach(function (r, k) {
          var st = e && e.nodes ? e.nodes[k] : null;
          var held = st && st.up && st.holder;
          // A key with no TTL stays full: nothing drains it.
          var remain = !held ? 0 : st.ttl_ms === -1 ? ttlMax : Math.max(0, st.ttl_ms - (now - e.t_ms));
          r.fill.style.transform = "scaleX(" + Math.min(1, remain / ttlMax).toFixed(4) + ")";
        });
      }
    };
  }

  function niceStep(T, most) {
    var steps = [100, 250, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000];
    for (var i = 0; i < steps.length; i++) if (T / steps[i] <= most) return steps[i];
    return 600000;
  }
})();
