// Lock Lab workshop, the learner's side: in a browser that joined a
// workshop, every learner page says whom it joined as (with a way to
// leave) and shows the workshop's poll as soon as the instructor opens
// it. The server renders both: /workshop?fragment=poll is the workshop
// page's poll, /workshop?fragment=banner the banner of every other page,
// and this script puts the one its page needs in place whenever the
// state of the workshop changes. It learns of changes from the
// server-sent events of /api/workshop/events and, where those are
// missing or keep failing, asks every two seconds. The poll's form posts
// in place, and is answered with the same fragment. Without this script,
// /workshop shows the same with forms.
(function () {
  "use strict";
  if (document.cookie.indexOf("locklab_ws_joined=1") < 0) return;
  if (document.querySelector("[data-dashboard],[data-ws-present]")) return;
  var main = document.getElementById("main");
  if (!main || !window.fetch || !window.DOMParser) return;

  // The workshop page has the poll; every other page gets the banner.
  var kind = document.querySelector("[data-ws-learner]") ? "poll" : "banner";
  var sel = kind === "poll" ? "[data-ws-poll-slot]" : "[data-ws-banner]";
  var live = document.createElement("p");
  live.className = "visually-hidden";
  live.setAttribute("role", "status");
  live.setAttribute("data-ws-said", "");
  main.appendChild(live);

  // asked counts the requests, so that an older answer is not shown over
  // a newer; while the form is being sent, the page does not ask.
  var stopped = false, timer = null, asked = 0, sending = false;

  // place puts the fragment html in place of the page's, unless they are
  // the same (boxes the learner is ticking stay ticked), and says so when
  // a poll opens or is revealed: its heading.
  function place(html, focus) {
    var next = new DOMParser().parseFromString(html, "text/html").querySelector(sel);
    if (!next) return;
    next = document.importNode(next, true);
    var now = document.querySelector(sel);
    if (now && now.outerHTML === next.outerHTML && !focus) return;
    var was = now && now.querySelector(".ws-lpoll[data-lpoll]");
    if (now) now.replaceWith(next); else main.insertBefore(next, main.firstChild);
    var poll = next.querySelector(".ws-lpoll[data-lpoll]");
    if (poll && (!was || was.getAttribute("data-lpoll") !== poll.getAttribute("data-lpoll") ||
        was.getAttribute("data-lpoll-revealed") !== poll.getAttribute("data-lpoll-revealed"))) {
      live.textContent = poll.querySelector("h2").textContent;
    }
    if (focus) focus(next);
  }

  // refresh asks for the fragment; a browser no longer in a workshop
  // (404) loses its banner and stops asking.
  function refresh() {
    if (sending) return;
    var mine = ++asked;
    return fetch("/workshop?fragment=" + kind, { credentials: "same-origin", headers: { "Accept": "text/html" } }).then(function (r) {
      if (r.status === 404) { gone(); return; }
      if (r.ok) return r.text().then(function (html) { if (mine === asked) place(html); });
    }, function () {});
  }

  function gone() {
    stopped = true;
    var banner = document.querySelector("[data-ws-banner]");
    if (banner) banner.remove();
  }

  // The poll's form: sent in place, answered with the fragment; the focus
  // goes to the form's button, or to what the server says is missing.
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.closest || !form.closest(sel) || !/\/predict$/.test(form.getAttribute("action") || "")) return;
    ev.preventDefault();
    var btn = form.querySelector("button[type=submit]");
    btn.disabled = true;
    sending = true;
    asked++;
    fetch(form.getAttribute("action") + "?fragment=" + kind, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Accept": "text/html" },
      body: new URLSearchParams(new FormData(form))
    }).then(function (r) {
      return r.text().then(function (html) {
        sending = false;
        if (!r.ok && r.status !== 400) { btn.disabled = false; refresh(); return; }
        place(html, function (box) {
          // A refusal is said aloud (role=alert); the learner picks again.
          var target = box.querySelector(".ws-lpoll [role=alert]") ? box.querySelector(".ws-lpoll input[type=checkbox]")
            : box.querySelector(".ws-lpoll button[type=submit]") || box.querySelector(".ws-lpoll");
          if (target) target.focus();
        });
      });
    }, function () { sending = false; btn.disabled = false; });
  });

  function poll() {
    if (timer || stopped) return;
    refresh();
    timer = setInterval(function () { if (stopped) clearInterval(timer); else refresh(); }, 2000);
  }

  refresh();
  if (!window.EventSource) { poll(); return; }
  var src = new EventSource("/api/workshop/events");
  var fails = 0, seen = null;
  src.addEventListener("state", function (ev) {
    fails = 0;
    // The event says what changed; the page shows it as the server renders it.
    if (ev.data !== seen) { seen = ev.data; refresh(); }
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
