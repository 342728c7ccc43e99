// Lock Lab workshop dashboard: listens to the server-sent events of the
// workshop and updates the numbers and bars in place (textContent and
// attributes only). Without this script the page shows the numbers as they
// were when it was loaded.
(function () {
  "use strict";
  var root = document.querySelector("[data-dashboard]");
  if (!root || !window.EventSource) return;
  var code = root.getAttribute("data-dashboard");
  var source = new EventSource("/admin/workshops/" + encodeURIComponent(code) + "/events");

  function set(el, value) {
    if (el && el.textContent !== String(value)) el.textContent = String(value);
  }

  source.addEventListener("stats", function (ev) {
    var d;
    try { d = JSON.parse(ev.data); } catch (e) { return; }
    ["joined", "active", "completions", "commands", "races", "predictions", "predictions_right"].forEach(function (k) {
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
    if (!d.running) {
      set(root.querySelector("[data-ws-status]"), "This workshop has ended; its results are kept.");
      source.close();
    }
  });
})();
