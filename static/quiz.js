// Lock Lab "Check yourself": answers go to the JSON API and the result is
// shown in place. Without this script the same forms post to the server and
// the page comes back with the feedback, so nothing depends on it.
(function () {
  "use strict";
  var quiz = document.querySelector("[data-quiz]");
  if (!quiz || !window.fetch) return;
  var topic = quiz.getAttribute("data-quiz");
  var words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
  var labels = { "not-started": "Not started", "in-progress": "In progress", "completed": "Completed" };

  quiz.addEventListener("submit", function (ev) {
    var form = ev.target;
    var item = form.closest("[data-question]");
    if (!item) return;
    ev.preventDefault();
    var feedback = form.querySelector("[data-feedback]");
    var button = form.querySelector("button[type=submit]");
    var chosen = form.querySelector("input[name=choice]:checked");
    if (!chosen) {
      say(feedback, "feedback-error", "", "Choose one of the answers first.");
      return;
    }
    if (button) button.disabled = true;
    var url = "/api/topics/" + encodeURIComponent(topic) + "/quiz/" + encodeURIComponent(item.getAttribute("data-question"));
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrfToken() },
      body: JSON.stringify({ choice: chosen.value })
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (data) {
        if (!resp.ok) {
          say(feedback, "feedback-error", "", data.error ? sentence(data.error) : "Something went wrong. Please try again.");
          return;
        }
        if (data.correct) {
          say(feedback, "feedback-right", "Right.", data.explanation);
          item.classList.add("solved");
          chosen.closest(".choice").classList.add("right");
          form.querySelectorAll("input[name=choice]").forEach(function (i) { i.disabled = true; });
          if (button) { button.remove(); button = null; }
          feedback.setAttribute("tabindex", "-1");
          feedback.focus();
        } else {
          say(feedback, "feedback-wrong", "Not quite.", data.explanation + " Try again.");
        }
        if (data.not_saved) note(feedback, data.not_saved);
        showProgress(data.progress);
      });
    }).catch(function () {
      say(feedback, "feedback-error", "", "Could not reach the server. Check your connection and try again.");
    }).then(function () {
      if (button) button.disabled = false;
    });
  });

  // say replaces a live region's text; textContent only, never HTML.
  function say(region, cls, lead, text) {
    var p = document.createElement("p");
    p.className = cls;
    if (lead) {
      var strong = document.createElement("strong");
      strong.textContent = lead;
      p.appendChild(strong);
      p.appendChild(document.createTextNode(" "));
    }
    p.appendChild(document.createTextNode(text));
    region.replaceChildren(p);
  }

  // note adds a notice under the feedback: the answer was graded but the
  // server did not save it, and says why.
  function note(region, text) {
    var p = document.createElement("p");
    p.className = "notice";
    p.setAttribute("data-not-saved", "");
    p.textContent = text;
    region.appendChild(p);
  }

  function sentence(s) {
    s = String(s);
    return s.charAt(0).toUpperCase() + s.slice(1) + (/[.!?]$/.test(s) ? "" : ".");
  }

  function csrfToken() {
    var m = document.querySelector("meta[name=csrf-token]");
    return m ? m.getAttribute("content") : "";
  }

  function word(n) { return words[n] || String(n); }

  function showProgress(p) {
    if (!p) return;
    var line = document.querySelector("[data-quiz-progress]");
    if (line) {
      var strong = document.createElement("strong");
      if (p.status === "completed") {
        strong.textContent = "All " + word(p.total) + " right. You have finished this topic.";
        line.replaceChildren(strong);
      } else {
        strong.textContent = p.right + " of " + p.total + " right so far.";
        line.replaceChildren(strong, document.createTextNode(" Answer all " + word(p.total) + " correctly to complete this topic."));
      }
    }
    document.querySelectorAll(".lesson-header [data-status]").forEach(function (badge) {
      badge.className = "status status-" + p.status;
      badge.setAttribute("data-status", p.status);
      var hidden = document.createElement("span");
      hidden.className = "visually-hidden";
      hidden.textContent = "Your status: ";
      badge.replaceChildren(hidden, document.createTextNode(labels[p.status] || p.status));
    });
  }
})();
