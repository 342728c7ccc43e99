// Lock Lab workshop, the learner's side: in a browser that joined a
// workshop, every learner page says whom it joined as (with a way to
// leave) and shows the workshop's poll as soon as the instructor opens
// it: the run's setup, "pick all that apply", then each outcome judged
// after the reveal. It listens to the server-sent events of
// /api/workshop/events and, where those are missing or keep failing,
// asks /api/workshop every two seconds. Text goes in with textContent
// only. Without this script, /workshop shows the same with forms.
(function () {
  "use strict";
  if (document.cookie.indexOf("locklab_ws_joined=1") < 0) return;
  if (document.querySelector("[data-dashboard],[data-ws-present]")) return;
  var main = document.getElementById("main");
  if (!main || !window.fetch) return;

  var page = document.querySelector("[data-ws-learner]");
  var slot, banner, who;
  if (page) {
    slot = page.querySelector("[data-ws-poll-slot]");
  } else {
    banner = el("aside", "ws-banner");
    banner.setAttribute("aria-label", "Workshop");
    var inner = el("div", "wrap");
    who = el("p", "ws-who");
    inner.appendChild(who);
    slot = el("div", "ws-banner-poll");
    inner.appendChild(slot);
    banner.appendChild(inner);
    banner.hidden = true;
    main.insertBefore(banner, main.firstChild);
  }
  var live = el("p", "visually-hidden");
  live.setAttribute("role", "status");
  main.appendChild(live);

  var last = null;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  function csrf() {
    var m = document.querySelector("meta[name=csrf-token]");
    return m ? m.getAttribute("content") : "";
  }

  function leaveForm() {
    var f = el("form", "ws-leave");
    f.method = "post";
    f.action = "/workshop/leave";
    var t = el("input");
    t.type = "hidden";
    t.name = "_csrf";
    t.value = csrf();
    f.appendChild(t);
    f.appendChild(el("button", "button button-secondary", "Leave"));
    f.lastChild.type = "submit";
    return f;
  }

  function drawWho(st) {
    if (!who) return;
    while (who.firstChild) who.removeChild(who.firstChild);
    who.appendChild(document.createTextNode("You joined "));
    who.appendChild(el("strong", "", st.title));
    if (st.nickname) {
      who.appendChild(document.createTextNode(" as "));
      who.appendChild(el("strong", "", st.nickname));
    }
    who.appendChild(document.createTextNode(". "));
    var a = el("a", "", "Workshop page");
    a.href = "/workshop";
    who.appendChild(a);
    who.appendChild(leaveForm());
  }

  function setup(lines) {
    var ul = el("ul", "ws-setup");
    (lines || []).forEach(function (l) { ul.appendChild(el("li", "", l)); });
    return ul;
  }

  function label(p, id) {
    for (var i = 0; i < p.choices.length; i++) if (p.choices[i].id === id) return p.choices[i].label;
    return id;
  }

  function drawPoll(p) {
    var sec = el("section", "ws-lpoll");
    sec.id = "poll";
    var h = el("h2", "", (p.revealed ? "Revealed: " : "Predict: ") + p.title);
    h.id = "lpoll-h";
    sec.setAttribute("aria-labelledby", "lpoll-h");
    sec.appendChild(h);
    if (!p.revealed) {
      sec.appendChild(setup(p.setup));
      var f = el("form");
      f.method = "post";
      f.action = "/workshop/poll/" + encodeURIComponent(p.id) + "/predict";
      var fs = el("fieldset");
      fs.appendChild(el("legend", "", "What will happen? Pick all that apply."));
      p.choices.forEach(function (c) {
        var l = el("label", "ws-pick");
        var box = el("input");
        box.type = "checkbox";
        box.name = "outcome";
        box.value = c.id;
        box.checked = p.prediction.indexOf(c.id) >= 0;
        l.appendChild(box);
        l.appendChild(document.createTextNode(" " + c.label));
        fs.appendChild(l);
      });
      f.appendChild(fs);
      var err = el("p", "field-error");
      err.setAttribute("role", "alert");
      f.appendChild(err);
      var b = el("button", "button", p.prediction.length ? "Change my prediction" : "Send my prediction");
      b.type = "submit";
      f.appendChild(b);
      if (p.prediction.length) {
        var ok = el("p", "ws-hint", "Your prediction is in. You can change it until the reveal.");
        ok.setAttribute("role", "status");
        f.appendChild(ok);
      }
      f.addEventListener("submit", function (ev) {
        ev.preventDefault();
        var picked = [];
        f.querySelectorAll("input[name=outcome]:checked").forEach(function (x) { picked.push(x.value); });
        if (!picked.length) { err.textContent = "Pick at least one outcome."; return; }
        b.disabled = true;
        fetch(f.action.replace("/workshop/poll/", "/api/workshop/poll/"), {
          method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf() },
          body: JSON.stringify({ prediction: picked })
        }).then(function (r) {
          if (r.ok) return r.json().then(function (np) { draw(Object.assign({}, last, { poll: np })); });
          b.disabled = false;
          return r.json().then(function (e) { err.textContent = e.error || "That did not work."; refresh(); }, function () { refresh(); });
        }, function () { b.disabled = false; err.textContent = "No connection; try again."; });
      });
      sec.appendChild(f);
      return sec;
    }
    var judged = p.judged || [];
    if (!p.prediction.length) {
      sec.appendChild(el("p", "", "You did not predict this one. What happened:"));
    } else if (p.right) {
      var r = el("p", "ws-verdict ws-right");
      r.appendChild(el("strong", "", "You were right"));
      r.appendChild(document.createTextNode(" about every outcome."));
      sec.appendChild(r);
    } else {
      var w = el("p", "ws-verdict ws-wrong");
      w.appendChild(el("strong", "", "Not quite."));
      w.appendChild(document.createTextNode(" Outcome by outcome:"));
      sec.appendChild(w);
    }
    var ul = el("ul", "ws-judged");
    ul.setAttribute("role", "list");
    p.choices.forEach(function (c) {
      var happened = p.outcomes.indexOf(c.id) >= 0;
      var li = el("li", happened ? "ws-happened" : "");
      li.appendChild(el("span", "", label(p, c.id) + ":"));
      li.appendChild(document.createTextNode(" "));
      if (happened) li.appendChild(el("strong", "", "happened"));
      else li.appendChild(document.createTextNode("did not happen"));
      var j = judged.filter(function (x) { return x.outcome === c.id; })[0];
      if (j) {
        li.appendChild(document.createTextNode(" "));
        li.appendChild(el("span", j.right ? "ws-right" : "ws-wrong",
          "· " + (j.right ? "you were right" : (j.expected ? "you expected it" : "you did not expect it"))));
      }
      ul.appendChild(li);
    });
    sec.appendChild(ul);
    var a = el("a", "", "Watch the run");
    a.href = p.run;
    var pa = el("p");
    pa.appendChild(a);
    sec.appendChild(pa);
    return sec;
  }

  function draw(st) {
    var key = JSON.stringify(st);
    if (key === JSON.stringify(last)) return;
    var was = last && last.poll;
    last = st;
    drawWho(st);
    while (slot.firstChild) slot.removeChild(slot.firstChild);
    if (st.poll) {
      slot.appendChild(drawPoll(st.poll));
      if (!was || was.id !== st.poll.id) live.textContent = "A poll is open: " + st.poll.title;
      else if (!was.revealed && st.poll.revealed) live.textContent = "The poll is revealed.";
    } else if (page) {
      var sec = el("section", "ws-lpoll");
      sec.appendChild(el("h2", "", "Poll"));
      sec.appendChild(el("p", "ws-hint", "No poll is open. When your instructor opens one, it shows up here."));
      slot.appendChild(sec);
    }
    if (banner) banner.hidden = false;
  }

  function gone() {
    if (banner) banner.remove();
    stopped = true;
  }

  var stopped = false, timer = null;
  function refresh() {
    return fetch("/api/workshop", { credentials: "same-origin", headers: { "Accept": "application/json" } }).then(function (r) {
      if (r.status === 404) { gone(); return; }
      if (r.ok) return r.json().then(draw);
    }, function () {});
  }
  function poll() {
    if (timer || stopped) return;
    refresh();
    timer = setInterval(function () { if (stopped) clearInterval(timer); else refresh(); }, 2000);
  }

  if (!window.EventSource) { poll(); return; }
  var src = new EventSource("/api/workshop/events");
  var fails = 0;
  src.addEventListener("state", function (ev) {
    fails = 0;
    try { draw(JSON.parse(ev.data)); } catch (e) { /* a broken event: wait for the next */ }
  });
  src.onerror = function () {
    // A closed stream (404: not joined, or the server refused it), or
    // one that keeps dropping: ask instead.
    if (src.readyState === 2 || ++fails >= 3) {
      src.close();
      poll();
    }
  };
})();
