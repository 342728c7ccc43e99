// Lock Lab race player: draws a scenario's timeline as SVG and plays it.
// The server renders the settings form, the transcript and the verdict, so
// the page works without this script; with it, the learner can predict the
// outcome, then play, pause, step and scrub through the run. Only transforms
// and opacity change per frame; text changes happen when an event is
// reached. All text goes in with textContent.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var PLAY_SECONDS = 16; // a whole run lasts this long at 1x
  var reduceMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  var scenarioCache = null;

  document.querySelectorAll("[data-race]").forEach(function (root) { setup(root); });

  function setup(root) {
    var $ = function (sel) { return root.querySelector(sel); };
    var stage = $("[data-race-stage]"), player = $("[data-race-player]");
    var narration = $("[data-race-narration]"), transcript = $("[data-race-transcript]");
    var verdictBox = $("[data-race-result]"), predict = $("[data-race-predict]");
    // The verdicts' labels come from the server: each prediction choice
    // is labelled with one.
    var verdicts = {};
    predict.querySelectorAll("input[type=radio]").forEach(function (el) {
      verdicts[el.value] = el.parentNode.textContent.trim();
    });
    var form = $("[data-race-form]"), description = $("[data-race-description]");
    var playBtn = player.querySelector("[data-act=play]");
    var scrub = player.querySelector("[data-act=scrub]");
    var speedSel = player.querySelector("[data-act=speed]");
    var clock = $("[data-race-clock]");
    var error = document.createElement("p");
    error.className = "field-error";
    error.setAttribute("role", "alert");
    error.hidden = true;
    form.parentNode.insertBefore(error, form.nextSibling);

    var run = null, t = 0, T = 1, idx = -1, playing = false, last = 0, lastStep = 0;
    var view = null;

    [stage, player, narration, predict].forEach(function (el) { el.hidden = false; });
    root.classList.add("race-live");

    function load(url) {
      return fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
        .then(function (resp) {
          return resp.json().catch(function () { return {}; }).then(function (data) {
            if (!resp.ok) throw new Error(data.error || "The scenario could not be computed.");
            return data;
          });
        });
    }

    function show(data) {
      run = data;
      var lastT = data.events.length ? data.events[data.events.length - 1].t_ms : 0;
      T = Math.max(1000, Math.ceil(lastT * 1.06));
      view = draw(stage, data, T);
      transcript.replaceChildren();
      data.events.forEach(function (e, i) {
        var li = document.createElement("li");
        li.setAttribute("data-i", i);
        var time = document.createElement("span");
        time.className = "race-time";
        time.textContent = seconds(e.t_ms);
        var actor = document.createElement("span");
        actor.className = "race-actor";
        actor.textContent = e.actor;
        li.append(time, " ", actor, " " + e.text);
        transcript.appendChild(li);
      });
      stop();
      idx = -2; // force enter() on the first seek
      verdictBox.hidden = true;
      seek(0);
      say("Press Play to watch, or step through it. Predict the outcome first if you like.");
    }

    function say(text) { narration.textContent = text; }

    function seek(to) {
      t = Math.max(0, Math.min(T, to));
      var i = -1;
      while (run && i + 1 < run.events.length && run.events[i + 1].t_ms <= t) i++;
      if (i !== idx) enter(i);
      frame();
      if (t >= T) finish();
    }

    // enter updates everything that changes only at an event.
    function enter(i) {
      idx = i;
      transcript.querySelectorAll("li").forEach(function (li, j) {
        li.hidden = j > i;
        if (j === i) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
      });
      var e = i >= 0 ? run.events[i] : null;
      if (e) say(seconds(e.t_ms) + ": " + e.text);
      view.markers.forEach(function (m, j) { m.classList.toggle("past", j <= i); m.classList.toggle("current", j === i); });
      view.state(e);
      verdictBox.hidden = !(i === run.events.length - 1 && t >= T);
    }

    // frame moves what changes continuously: transforms and a clock.
    function frame() {
      var x = view.x(t);
      view.playhead.setAttribute("transform", "translate(" + x.toFixed(1) + " 0)");
      scrub.value = String(Math.round(1000 * t / T));
      var shown = Math.floor(t / 100) / 10;
      if (clock.textContent !== shown + " s") clock.textContent = shown + " s";
      view.drain(run.events[idx] || null, t);
    }

    function finish() {
      stop();
      verdictBox.hidden = false;
      var v = run.verdict;
      var p = verdictBox.querySelector("[data-race-verdict]");
      p.className = "race-verdict verdict-" + v;
      var strong = document.createElement("strong");
      strong.textContent = "Verdict: " + (verdicts[v] || v) + ".";
      p.replaceChildren(strong, " " + run.summary);
      var chosen = predict.querySelector("input:checked");
      if (chosen) {
        var res = document.createElement("p");
        res.className = chosen.value === v ? "prediction prediction-right" : "prediction prediction-wrong";
        res.textContent = chosen.value === v
          ? "You predicted this. Well done."
          : "You predicted: " + verdicts[chosen.value] + ". Watch it again and look for the moment it went differently.";
        p.appendChild(res);
      }
      say("The end. Verdict: " + (verdicts[v] || v) + ". " + run.summary);
      report(chosen ? chosen.value : "");
    }

    // report tells the server a run was played to the end, for workshop
    // dashboards; the server works out the verdict itself.
    function report(prediction) {
      var params = {};
      Object.keys(run.params || {}).forEach(function (k) { params[k] = String(run.params[k]); });
      var meta = document.querySelector("meta[name=csrf-token]");
      fetch("/api/race/done", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": meta ? meta.getAttribute("content") : "" },
        body: JSON.stringify({ scenario: run.id, params: params, prediction: prediction })
      }).catch(function () {});
    }

    function play() {
      if (!run) return;
      if (t >= T) seek(0);
      playing = true;
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
      var speed = parseFloat(speedSel.value) || 1;
      if (reduceMotion) {
        // No gliding: jump from event to event.
        if (now - lastStep >= 1600 / speed) { lastStep = now; step(1); }
      } else {
        seek(t + (now - last) * (T / (PLAY_SECONDS * 1000)) * speed);
      }
      last = now;
      if (playing && t < T) requestAnimationFrame(tick);
    }

    function step(dir) {
      if (!run) return;
      var times = run.events.map(function (e) { return e.t_ms; }).concat([T]);
      var target = dir > 0
        ? times.find(function (x) { return x > t + 0.5; })
        : times.slice().reverse().find(function (x) { return x < t - 0.5; });
      seek(target === undefined ? (dir > 0 ? T : 0) : target);
    }

    player.addEventListener("click", function (ev) {
      var act = ev.target.getAttribute("data-act");
      if (act === "play") { if (playing) stop(); else play(); }
      else if (act === "back") { stop(); step(-1); }
      else if (act === "forward") { stop(); step(1); }
      else if (act === "replay") { seek(0); play(); }
    });
    scrub.addEventListener("input", function () { stop(); seek(T * Number(scrub.value) / 1000); });

    root.addEventListener("keydown", function (ev) {
      var tag = ev.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      if (ev.key === " " && tag !== "BUTTON" && tag !== "SUMMARY") { ev.preventDefault(); if (playing) stop(); else play(); }
      else if (ev.key === "ArrowRight") { ev.preventDefault(); stop(); step(1); }
      else if (ev.key === "ArrowLeft") { ev.preventDefault(); stop(); step(-1); }
      else if (ev.key === "Home") { ev.preventDefault(); stop(); seek(0); }
    });
    root.setAttribute("tabindex", "-1");

    // The settings form runs the scenario in place.
    function settingsURL() {
      var fd = new FormData(form);
      var q = new URLSearchParams();
      ["ttl_ms", "pause_ms", "work_ms", "clock_jump_ms", "restart_delay_ms", "seed", "release"].forEach(function (k) {
        if (fd.get(k) !== null && fd.get(k) !== "") q.set(k, fd.get(k));
      });
      q.set("fencing", fd.get("fencing") ? "true" : "false");
      return "/api/race/" + encodeURIComponent(fd.get("scenario")) + "?" + q.toString();
    }

    function rerun() {
      error.hidden = true;
      load(settingsURL()).then(show).catch(function (err) {
        error.textContent = err.message;
        error.hidden = false;
      });
    }

    form.addEventListener("submit", function (ev) { ev.preventDefault(); rerun(); });
    form.querySelector("select[name=scenario]").addEventListener("change", function (ev) {
      var id = ev.target.value;
      scenarios().then(function (list) {
        var sc = list.find(function (s) { return s.id === id; });
        if (!sc) return;
        var d = sc.defaults;
        Object.keys(d).forEach(function (k) {
          var input = form.elements[k];
          if (!input) return;
          if (input.type === "checkbox") input.checked = !!d[k]; else input.value = d[k];
        });
        form.querySelectorAll("[data-param]").forEach(function (f) {
          f.hidden = sc.applies.indexOf(f.getAttribute("data-param")) < 0;
        });
        description.textContent = sc.summary;
        rerun();
      });
    });

    var resizeTimer = 0, lastWidth = stage.clientWidth;
    window.addEventListener("resize", function () {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(function () {
        if (!run || Math.abs(stage.clientWidth - lastWidth) < 20) return;
        lastWidth = stage.clientWidth;
        var at = t;
        view = draw(stage, run, T);
        idx = -2;
        seek(at);
      }, 200);
    });

    load(root.getAttribute("data-api")).then(show).catch(function (err) {
      error.textContent = err.message;
      error.hidden = false;
    });
  }

  function scenarios() {
    if (!scenarioCache) {
      scenarioCache = fetch("/api/race/scenarios", { headers: { "Accept": "application/json" } }).then(function (r) { return r.json(); });
    }
    return scenarioCache;
  }

  function seconds(ms) { return (Math.round(ms) / 1000) + " s"; }

  function el(name, attrs, parent) {
    var n = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (k) { n.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(n);
    return n;
  }

  // draw builds the SVG for a run and returns what the player updates.
  function draw(stage, run, T) {
    var lanes = ["client 1", "client 2"];
    var nodeLanes = [];
    for (var n = 1; n <= run.nodes; n++) nodeLanes.push(run.nodes === 1 ? "redis" : "redis node " + n);
    lanes = lanes.concat(nodeLanes, ["storage"]);
    run.events.forEach(function (e) { if (lanes.indexOf(e.actor) < 0) lanes.splice(lanes.length - 1, 0, e.actor); });

    // The drawing is as wide as the stage in CSS pixels, so text stays
    // readable on a phone instead of being scaled down.
    var W = Math.max(300, Math.round(stage.clientWidth) || 1000);
    var narrow = W < 560;
    var present = document.documentElement.classList.contains("present");
    var left = narrow ? 74 : present ? 190 : 132, right = 14, top = present ? 40 : 28, laneH = narrow ? 36 : present ? 60 : 40;
    var H = top + lanes.length * laneH + 10;
    var x = function (t) { return left + (W - left - right) * Math.min(t, T) / T; };
    var y = function (lane) { return top + lanes.indexOf(lane) * laneH + laneH / 2; };

    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "class": "race-svg" + (narrow ? " race-narrow" : "") });
    var title = el("title", {}, svg);
    title.textContent = "Timeline of " + run.title + ": " + lanes.join(", ") + " over " + seconds(T) + ".";

    // Lanes and labels.
    lanes.forEach(function (lane, i) {
      el("rect", { x: 0, y: top + i * laneH, width: W, height: laneH, "class": i % 2 ? "lane lane-odd" : "lane" }, svg);
      var label = el("text", { x: 8, y: y(lane) + 5, "class": "lane-label" }, svg);
      label.textContent = lane;
    });
    // Time axis.
    var stepMs = niceStep(T, narrow ? 4 : 8);
    for (var tt = 0; tt <= T; tt += stepMs) {
      el("line", { x1: x(tt), x2: x(tt), y1: top - 4, y2: H - 10, "class": "tick" }, svg);
      var lbl = el("text", { x: x(tt), y: top - 10, "class": "tick-label" }, svg);
      lbl.textContent = (tt / 1000) + " s";
    }

    // Lock holders on each node, from the state after each event; a run
    // of events with the same holder is one bar.
    nodeLanes.forEach(function (lane, k) {
      var bar = null;
      var flush = function () {
        if (bar && bar.end > bar.start) {
          el("rect", {
            x: x(bar.start), y: y(lane) - 11, width: Math.max(1, x(bar.end) - x(bar.start)), height: 22,
            "class": "hold " + holderClass(bar.holder)
          }, svg);
        }
        bar = null;
      };
      run.events.forEach(function (e, i) {
        var st = e.nodes && e.nodes[k];
        var next = i + 1 < run.events.length ? run.events[i + 1].t_ms : T;
        if (!st || !st.holder || !st.up) { flush(); return; }
        var end = Math.min(next, e.t_ms + st.ttl_ms);
        if (bar && bar.holder === st.holder && bar.end >= e.t_ms) bar.end = end;
        else { flush(); bar = { holder: st.holder, start: e.t_ms, end: end }; }
      });
      flush();
    });
    // Pauses on client lanes.
    var pauseStart = {};
    run.events.forEach(function (e) {
      if (e.kind === "pause-start") pauseStart[e.actor] = e.t_ms;
      if (e.kind === "pause-end" && pauseStart[e.actor] !== undefined) {
        el("rect", { x: x(pauseStart[e.actor]), y: y(e.actor) - 9, width: Math.max(1, x(e.t_ms) - x(pauseStart[e.actor])), height: 18, "class": "pause" }, svg);
        var pl = el("text", { x: x(pauseStart[e.actor]) + 6, y: y(e.actor) + 4, "class": "pause-label" }, svg);
        pl.textContent = "paused";
        delete pauseStart[e.actor];
      }
    });

    // Event markers.
    var markers = run.events.map(function (e) {
      var g = el("g", { "class": "marker kind-" + e.kind + (e.stale ? " stale" : ""), transform: "translate(" + x(e.t_ms).toFixed(1) + " " + y(e.actor) + ")" }, svg);
      el("circle", { r: 6 }, g);
      if (e.fence && (e.kind === "write-accepted" || e.kind === "write-rejected" || e.kind === "acquire-ok")) {
        var ft = el("text", { y: -10, "class": "fence-label" }, g);
        ft.textContent = "#" + e.fence;
      }
      var tip = el("title", {}, g);
      tip.textContent = seconds(e.t_ms) + " " + e.actor + ": " + e.text;
      return g;
    });

    var playhead = el("g", { "class": "playhead" }, svg);
    el("line", { x1: 0, x2: 0, y1: top - 4, y2: H - 6 }, playhead);

    // The state panel: each node's key with its TTL draining, and the
    // storage's highest token.
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
      var bar = document.createElement("span");
      bar.className = "ttl-bar";
      var fill = document.createElement("span");
      fill.className = "ttl-fill";
      bar.appendChild(fill);
      row.append(name, holder, bar);
      panel.appendChild(row);
      return { holder: holder, fill: fill };
    });
    var storage = document.createElement("p");
    storage.className = "state-storage";
    panel.appendChild(storage);

    stage.replaceChildren(svg, panel);
    var ttlMax = run.params.ttl_ms || 1;

    return {
      x: x,
      playhead: playhead,
      markers: markers,
      state: function (e) {
        rows.forEach(function (r, k) {
          var st = e && e.nodes ? e.nodes[k] : null;
          if (st && !st.up) r.holder.textContent = "down";
          else if (st && st.holder) r.holder.textContent = "held by " + st.holder;
          else r.holder.textContent = "free";
          r.fill.className = "ttl-fill " + (st && st.holder ? holderClass(st.holder) : "");
        });
        storage.textContent = "Storage: highest fencing token seen " + (e && e.highest_token ? "#" + e.highest_token : "none yet") + ".";
      },
      drain: function (e, now) {
        rows.forEach(function (r, k) {
          var st = e && e.nodes ? e.nodes[k] : null;
          var left = st && st.up && st.holder ? Math.max(0, st.ttl_ms - (now - e.t_ms)) : 0;
          r.fill.style.transform = "scaleX(" + (left / ttlMax).toFixed(4) + ")";
        });
      }
    };
  }

  function holderClass(h) { return /2/.test(h) ? "holder-2" : "holder-1"; }

  function niceStep(T, most) {
    var steps = [100, 250, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000];
    for (var i = 0; i < steps.length; i++) if (T / steps[i] <= most) return steps[i];
    return 600000;
  }
})();
