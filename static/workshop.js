// Lock Lab workshop dashboard and presenter view: listen to the server-
// sent events of the workshop and update the numbers and bars in place
// (textContent and attributes only). A poll opened or revealed elsewhere
// (another tab, another replica) reloads the page, which draws it whole.
// Without this script the page shows the numbers as they were when it was
// loaded.
(function () {
  "use strict";
  var root = document.querySelector("[data-dashboard],[data-ws-present]");
  if (!root || !window.EventSource) return;
  var code = root.getAttribute("data-dashboard") || root.getAttribute("data-ws-present");
  var source = new EventSource("/admin/workshops/" + encodeURIComponent(code) + "/events");

  function set(el, value) {
    if (el && el.textContent !== String(value)) el.textContent = String(value);
  }

  source.addEventListener("stats", function (ev) {
    var d;
    try { d = JSON.parse(ev.data); } catch (e) { return; }
    ["joined", "active", "completions", "commands", "races", "predictions", "predictions_right", "lab_solves"].forEach(function (k) {
      set(root.querySelector("[data-tile=" + k + "]"), d[k]);
    });
    (d.questions || []).forEach(function (q) {
      var sec = root.querySelector('[data-question-stat="' + q.id + '"]');
      if (!sec) return;
      set(sec.querySelector("[data-first-right]"), q.first_right);
      set(sec.querySelector("[data-first-tries]"), q.first_tries);
      q.choices.forEach(function (ch) {
        var bar = sec.querySelector('progress[data-choice="' + ch.id + '"]');
        if (bar) {
          bar.max = Math.max(q.answers, 1);
          bar.value = ch.count;
          set(bar, ch.count);
        }
        set(sec.querySelector('[data-choice-count="' + ch.id + '"]'), ch.count);
      });
    });
    var list = root.querySelector("[data-misc-list]");
    if (list && d.misconceptions) {
      while (list.firstChild) list.removeChild(list.firstChild);
      d.misconceptions.forEach(function (m) {
        var li = document.createElement("li");
        var b = document.createElement("strong");
        b.textContent = m.choice;
        var s = document.createElement("span");
        s.className = "ws-hint";
        s.textContent = m.count + (m.count === 1 ? " answer, " : " answers, ") + Math.round(m.share * 100) + "% of \u201c" + m.question + "\u201d";
        li.appendChild(b);
        li.appendChild(document.createTextNode(" "));
        li.appendChild(s);
        list.appendChild(li);
      });
      var none = root.querySelector("[data-misc-none]");
      if (none) none.hidden = d.misconceptions.length > 0;
    }
    if (!d.running) {
      set(root.querySelector("[data-ws-status]"), "This workshop has ended; its results are kept.");
    }
  });

  source.addEventListener("poll", function (ev) {
    var p;
    try { p = JSON.parse(ev.data); } catch (e) { return; }
    var box = root.querySelector("[data-poll]");
    var shown = box ? box.getAttribute("data-poll") : "";
    var revealed = !!(box && box.hasAttribute("data-revealed"));
    if ((p ? p.id : "") !== shown || (p && p.revealed !== revealed)) {
      source.close();
      location.reload();
      return;
    }
    if (!p) return;
    set(box.querySelector("[data-poll-answered]"), p.answered);
    set(box.querySelector("[data-poll-joined]"), p.joined);
    Object.keys(p.counts).forEach(function (id) {
      var bar = box.querySelector('progress[data-poll-bar="' + id + '"]');
      if (bar) {
        bar.max = Math.max(p.answered, 1);
        bar.value = p.counts[id];
        set(bar, p.counts[id]);
      }
      set(box.querySelector('[data-poll-count="' + id + '"]'), p.counts[id]);
    });
  });
})();
