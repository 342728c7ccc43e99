// Lock Lab playground: sends redis-cli lines to the learner's sandbox
// through the JSON API and shows the replies in place, keeps a history,
// counts TTLs down in the key inspector, and puts a Run button on every
// redis-cli example of the lesson. Without this script the same forms post
// to the server and the page comes back with the transcript. Replies are
// inserted with textContent only.
(function () {
  "use strict";
  var root = document.querySelector("[data-playground]");
  if (!root || !window.fetch) return;

  var $ = function (sel) { return root.querySelector(sel); };
  var form = $("[data-pg-form]"), input = form.querySelector("input[name=line]");
  // The keys that recall and clear lines work only with this script.
  var jsHint = $("[data-pg-js-hint]");
  if (jsHint) jsHint.hidden = false;
  var transcript = $("[data-pg-transcript]"), prompt = $("[data-pg-prompt]");
  var keysBody = $("[data-pg-keys] tbody"), empty = $("[data-pg-empty]");
  var clockEl = $("[data-pg-clock]");
  var history = [], histPos = 0, draft = "";
  var clock = { base: Number(clockEl.getAttribute("data-ms")) || 0, at: performance.now() };
  var keys = [], keysAt = performance.now(), refetchPending = false;

  function api(path, body) {
    var opts = { method: body === undefined ? "GET" : "POST", credentials: "same-origin", headers: { "Accept": "application/json" } };
    if (body !== undefined) {
      var meta = document.querySelector("meta[name=csrf-token]");
      if (meta) opts.headers["X-CSRF-Token"] = meta.getAttribute("content");
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    return fetch(path, opts).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (data) {
        if (!resp.ok) throw new Error(data.error || "The playground did not answer (" + resp.status + ").");
        return data;
      });
    }, function () { throw new Error("Could not reach the server. Check your connection and try again."); });
  }

  function client() {
    var r = form.querySelector("input[name=client]:checked");
    return r ? r.value : "A";
  }

  function scrollDown() { transcript.scrollTop = transcript.scrollHeight; }

  function addNotice(text, cls) {
    var li = document.createElement("li");
    li.className = cls || "pg-notice";
    li.textContent = text;
    transcript.appendChild(li);
    scrollDown();
  }

  // addEntry shows a line and its reply; a Redis error reply, or the
  // server's refusal of the line (cls), shows as an error.
  function addEntry(who, line, output, cls) {
    var li = document.createElement("li");
    li.className = "pg-entry pg-from-" + who;
    var cmd = document.createElement("span");
    cmd.className = "pg-cmd";
    var w = document.createElement("span");
    w.className = "pg-who";
    w.textContent = who + ">";
    // As the server's transcript does: a long line is cut at 1 KiB.
    var shown = line.length > 1024 ? line.slice(0, 1024) + "\u2026 (" + line.length + " characters in all)" : line;
    cmd.append(w, " " + shown);
    var out = document.createElement("pre");
    out.className = "pg-out";
    if (cls || output.indexOf("(error)") === 0) out.className += " " + (cls || "pg-out-error");
    out.textContent = output;
    li.append(cmd, out);
    transcript.appendChild(li);
    scrollDown();
  }

  // run sends one line as a client and shows the reply; it resolves to the
  // reply text so Run buttons can show it by their example too.
  function run(who, line) {
    return api("/api/playground/exec", { line: line, client: who }).then(function (res) {
      if (res.notice) addNotice(res.notice);
      if (res.clear) transcript.replaceChildren();
      else addEntry(who, line, res.output);
      setClock(res.clock_ms);
      refreshKeys();
      return res.output;
    }, function (err) {
      // The line was not run (too many at once, a body too large): show it
      // with the reason, so the learner sees which line and can recall it.
      addEntry(who, line, err.message, "pg-out-refused");
      throw err;
    });
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var line = input.value;
    if (line.trim() === "") return;
    if (history[history.length - 1] !== line) history.push(line);
    if (history.length > 200) history.shift();
    histPos = history.length;
    draft = "";
    input.value = "";
    run(client(), line).catch(function () {});
  });

  input.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowUp" && histPos > 0) {
      if (histPos === history.length) draft = input.value;
      histPos--;
      input.value = history[histPos];
      ev.preventDefault();
    } else if (ev.key === "ArrowDown" && histPos < history.length) {
      histPos++;
      input.value = histPos === history.length ? draft : history[histPos];
      ev.preventDefault();
    } else if ((ev.key === "l" || ev.key === "L") && ev.ctrlKey) {
      transcript.replaceChildren();
      ev.preventDefault();
    }
  });

  form.addEventListener("change", function (ev) {
    if (ev.target.name === "client") {
      prompt.textContent = client();
      input.focus();
    }
  });

  $("[data-pg-advance]").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var ms = Number(ev.submitter ? ev.submitter.value : 1000);
    api("/api/playground/advance", { ms: ms }).then(function (res) {
      setClock(res.clock_ms);
      addNotice("The sandbox clock moved forward " + (ms / 1000) + " s.");
      refreshKeys();
    }, function (err) { addNotice(err.message, "pg-notice pg-error"); });
  });

  $("[data-pg-reset]").addEventListener("submit", function (ev) {
    ev.preventDefault();
    api("/api/playground/reset", {}).then(function (res) {
      transcript.replaceChildren();
      addNotice("The sandbox was reset: no keys, no scripts.");
      setClock(res.clock_ms);
      refreshKeys();
    }, function (err) { addNotice(err.message, "pg-notice pg-error"); });
  });

  // The clock and the TTLs run in real time between answers from the
  // server; the server's values win whenever they arrive.
  function setClock(ms) {
    if (ms) { clock.base = ms; clock.at = performance.now(); }
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  function tick() {
    if (clock.base) {
      var d = new Date(clock.base + (performance.now() - clock.at));
      var text = pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds()) + " UTC";
      if (clockEl.textContent !== text) clockEl.textContent = text;
    }
    var elapsed = performance.now() - keysAt, expired = false;
    keys.forEach(function (k) {
      if (k.pttl_ms < 0) return;
      var left = k.pttl_ms - elapsed;
      if (left <= 0) { expired = true; return; }
      var text = (Math.floor(left / 100) / 10).toFixed(1) + " s";
      if (k.cell.textContent !== text) k.cell.textContent = text;
    });
    if (expired && !refetchPending) refreshKeys();
  }

  function refreshKeys() {
    refetchPending = true;
    api("/api/playground/keys").then(function (list) {
      keysAt = performance.now();
      keys = [];
      keysBody.replaceChildren();
      list.forEach(function (k) {
        var tr = document.createElement("tr");
        [k.key, k.type, k.value].forEach(function (v) {
          var td = document.createElement("td");
          td.textContent = v;
          tr.appendChild(td);
        });
        var ttl = document.createElement("td");
        ttl.textContent = k.pttl_ms < 0 ? "no TTL" : (k.pttl_ms / 1000).toFixed(1) + " s";
        tr.appendChild(ttl);
        keysBody.appendChild(tr);
        keys.push({ pttl_ms: k.pttl_ms, cell: ttl });
      });
      empty.hidden = list.length > 0;
    }, function () {}).then(function () { refetchPending = false; });
  }

  setInterval(tick, 250);
  refreshKeys();

  // Run buttons on the lesson's redis-cli examples.
  document.querySelectorAll("[data-redis-cli]").forEach(function (block) {
    var result = document.createElement("p");
    result.className = "cli-result";
    result.setAttribute("aria-live", "polite");
    result.hidden = true;
    block.appendChild(result);
    block.querySelectorAll(".cli-cmd").forEach(function (cmd) {
      var who = cmd.getAttribute("data-client") || "A";
      var line = cmd.querySelector(".cli-input").textContent;
      var btn = document.createElement("button");
      btn.type = "button";
      btn.className = "cli-run";
      btn.textContent = "Run";
      btn.setAttribute("aria-label", "Run as client " + who + ": " + line);
      btn.addEventListener("click", function () {
        btn.disabled = true;
        run(who, line).then(function (out) {
          result.hidden = false;
          result.textContent = "Your sandbox, client " + who + ": " + out;
        }, function (err) {
          result.hidden = false;
          result.textContent = err.message;
        }).then(function () { btn.disabled = false; });
      });
      cmd.appendChild(document.createTextNode(" "));
      cmd.appendChild(btn);
    });
  });
})();
