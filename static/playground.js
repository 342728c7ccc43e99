// Lock Lab playground: sends redis-cli lines to the learner's sandbox
// through the JSON API and shows the replies in place, keeps a history,
// counts TTLs down in the key inspector, and puts Run and Edit buttons on
// every redis-cli example of the lesson, checking each reply against the
// one the lesson prints. Without this script the same forms post to the
// server, which redirects back to the page with the transcript. Replies
// are inserted with textContent only; the markup the server renders for
// the page (the key inspector's rows, a clock advance's notices) comes
// with the API's answers and is put in place as it is, so that a typed
// line or an advance costs one request.
(function () {
  "use strict";
  var root = document.querySelector("[data-playground]");
  if (!root || !window.fetch) return;

  var $ = function (sel) { return root.querySelector(sel); };
  var form = $("[data-pg-form]"), input = form.querySelector("input[name=line]");
  var transcript = $("[data-pg-transcript]"), scroller = $("[data-pg-scroll]");
  var prompt = $("[data-pg-prompt]"), promptLabel = $("[data-pg-prompt-label]");
  var keysBody = $("[data-pg-keys-rows]"), empty = $("[data-pg-empty]");
  var keysToggle = $("[data-pg-keys-toggle]"), keysPanel = $("[data-pg-keys-panel]");
  var clockEl = $("[data-pg-clock]");
  var target = $("[data-pg-target]"), nodeList = $("[data-pg-nodes]"), nodeForm = $("[data-pg-node-form]");
  var history = [], histPos = 0, draft = "";
  var clock = { base: Number(clockEl.getAttribute("data-ms")) || 0, at: performance.now() };
  var keys = [], keysAt = performance.now();
  // listeners hear of everything the sandbox did that examples care about.
  var listeners = [];
  function tell(ev) { listeners.forEach(function (f) { f(ev); }); }

  // Touch screens have no arrow keys or Ctrl+L: they get buttons for the
  // history, and a hint that names those instead.
  var touch = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;
  var hint = $(touch ? "[data-pg-touch-hint]" : "[data-pg-js-hint]");
  if (hint) hint.hidden = false;
  if (touch) $("[data-pg-history]").hidden = false;

  var placeholders = {
    A: "SET lock:invoice:7 3f9a1c NX PX 30000",
    B: "SET lock:invoice:7 other NX PX 30000"
  };

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

  // setClient makes the prompt, its colour and the placeholder follow the
  // client the input sends as.
  function setClient(who) {
    var r = form.querySelector("input[name=client][value=" + who + "]");
    if (r) r.checked = true;
    prompt.textContent = who;
    promptLabel.classList.toggle("pg-prompt-A", who !== "B");
    promptLabel.classList.toggle("pg-prompt-B", who === "B");
    input.placeholder = placeholders[who] || placeholders.A;
  }

  function scrollDown() { scroller.scrollTop = scroller.scrollHeight; }

  // markup parses HTML the server rendered for the element parent (its
  // rows or list items) into nodes to put there. A parsed document runs
  // no scripts and loads nothing.
  function markup(html, parent) {
    var tag = parent.tagName.toLowerCase();
    var doc = new DOMParser().parseFromString((tag === "tbody" ? "<table><tbody>" : "<" + tag + ">") + (html || ""), "text/html");
    return Array.prototype.slice.call(doc.querySelector(tag).childNodes);
  }

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
  // server's answer so examples can check it against the lesson.
  function run(who, line, from) {
    return api("/api/playground/exec", { line: line, client: who }).then(function (res) {
      if (res.notice) {
        addNotice(res.notice);
        tell({ kind: "reset" }); // an idle sandbox was emptied
      }
      if (res.clear) transcript.replaceChildren();
      else addEntry(who, line, res.output);
      setClock(res.clock_ms);
      // Without rows (the sandbox could not list its keys) the inspector
      // keeps those it has.
      if (res.keys_html !== undefined) setKeys(markup(res.keys_html, keysBody));
      if (res.nodes_html !== undefined) setNodes(res.nodes_html);
      if (from !== "example") tell({ kind: "typed" });
      return res;
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
    // The node selector is a shorthand for the line's @ word, which the
    // transcript shows as the server reads it.
    var to = target ? target.value : "1";
    if (to !== "1" && line.trim().charAt(0) !== "@") line = "@" + to + " " + line;
    run(client(), line).catch(function () {});
  });

  // setNodes puts the node panel's items, as the server rendered them,
  // in place.
  function setNodes(html) {
    if (nodeList) nodeList.replaceChildren.apply(nodeList, markup(html, nodeList));
  }

  if (nodeForm) nodeForm.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var b = ev.submitter, body = { action: "clock" };
    if (b && b.name === "node_action") {
      body = { action: b.value, persist: nodeForm.querySelector("input[name=persist]").checked };
      if (b.value === "stop") delete body.persist;
    } else {
      body.ms = Number(b ? b.value : 10000);
    }
    var n = nodeForm.querySelector("select[name=node]").value;
    api("/api/playground/nodes/" + encodeURIComponent(n), body).then(function (res) {
      setClock(res.clock_ms);
      transcript.append.apply(transcript, markup(res.transcript_html, transcript));
      scrollDown();
      setKeys(markup(res.keys_html, keysBody));
      setNodes(res.nodes_html);
      tell({ kind: "typed" });
    }, function (err) { addNotice(err.message, "pg-notice pg-error"); });
  });

  function recall(step) {
    if (step < 0 && histPos > 0) {
      if (histPos === history.length) draft = input.value;
      histPos--;
      input.value = history[histPos];
      return true;
    }
    if (step > 0 && histPos < history.length) {
      histPos++;
      input.value = histPos === history.length ? draft : history[histPos];
      return true;
    }
    return false;
  }

  input.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowUp" || ev.key === "ArrowDown") {
      if (recall(ev.key === "ArrowUp" ? -1 : 1)) ev.preventDefault();
    } else if ((ev.key === "l" || ev.key === "L") && ev.ctrlKey) {
      transcript.replaceChildren();
      ev.preventDefault();
    }
  });
  $("[data-pg-prev]").addEventListener("click", function () { recall(-1); });
  $("[data-pg-next]").addEventListener("click", function () { recall(1); });

  form.addEventListener("change", function (ev) {
    if (ev.target.name === "client") setClient(client());
  });

  // The key inspector sits beside the terminal on wide screens; on narrow
  // ones it is below, and this button folds it away.
  keysToggle.hidden = false;
  function toggleLabel() {
    var open = keysToggle.getAttribute("aria-expanded") === "true";
    keysToggle.textContent = open ? "Hide keys" : "Show keys (" + keysBody.rows.length + ")";
  }
  keysToggle.addEventListener("click", function () {
    var open = keysToggle.getAttribute("aria-expanded") !== "true";
    keysToggle.setAttribute("aria-expanded", String(open));
    keysPanel.classList.toggle("pg-folded", !open);
    toggleLabel();
  });

  $("[data-pg-advance]").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var ms = Number(ev.submitter ? ev.submitter.value : 1000);
    api("/api/playground/advance", { ms: ms }).then(function (res) {
      setClock(res.clock_ms);
      transcript.append.apply(transcript, markup(res.transcript_html, transcript));
      scrollDown();
      setKeys(markup(res.keys_html, keysBody));
    }, function (err) { addNotice(err.message, "pg-notice pg-error"); });
  });

  $("[data-pg-reset]").addEventListener("submit", function (ev) {
    ev.preventDefault();
    api("/api/playground/reset", {}).then(function (res) {
      transcript.replaceChildren.apply(transcript, markup(res.transcript_html, transcript));
      scrollDown();
      setClock(res.clock_ms);
      setKeys([]);
      if (res.nodes_html !== undefined) setNodes(res.nodes_html);
      tell({ kind: "reset" });
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
    var elapsed = performance.now() - keysAt, gone = false;
    keys.forEach(function (k) {
      if (k.pttl_ms < 0 || !k.row.parentNode) return;
      var left = k.pttl_ms - elapsed;
      if (left <= 0) {
        // Its TTL ran out on the sandbox clock: the server lists it no
        // more, so the row goes without asking.
        k.row.remove();
        gone = true;
        return;
      }
      var text = (Math.floor(left / 100) / 10).toFixed(1) + " s";
      if (k.cell.textContent !== text) k.cell.textContent = text;
    });
    if (gone) shown();
  }

  // setKeys puts the inspector's rows, as the server rendered them, in
  // place, and notes each key's TTL to count it down.
  function setKeys(rows) {
    keysBody.replaceChildren.apply(keysBody, rows);
    readKeys();
  }

  // readKeys reads the rows in the inspector: each key's name and TTL.
  function readKeys() {
    keysAt = performance.now();
    keys = [];
    keysBody.querySelectorAll("tr").forEach(function (tr) {
      keys.push({ key: tr.cells[0].textContent, pttl_ms: Number(tr.getAttribute("data-pttl-ms")), cell: tr.cells[3], row: tr });
    });
    shown();
  }

  // shown updates what depends on how many rows there are.
  function shown() {
    empty.hidden = keysBody.rows.length > 0;
    toggleLabel();
  }

  // ttlLeft is the TTL the inspector shows for key now, in ms: -1 for
  // none, undefined for a key it does not list.
  function ttlLeft(key) {
    var elapsed = performance.now() - keysAt;
    for (var i = 0; i < keys.length; i++) {
      if (keys[i].key === key && keys[i].row.parentNode) return keys[i].pttl_ms < 0 ? -1 : keys[i].pttl_ms - elapsed;
    }
    return undefined;
  }

  setInterval(tick, 250);
  readKeys(); // the page came with the rows

  // ---- The lesson's examples ----
  //
  // The redis-cli blocks of one section of the lesson are one example: a
  // story told in order (A takes the lock, B is turned away, A releases
  // it). Pressing their Run buttons in order, at any pace, shows the
  // replies the lesson prints, or, when the sandbox has moved on (a TTL
  // ran out, a line ran twice or out of order, something typed in the
  // terminal), the actual reply with a one-line reason and a control that
  // runs the example from the start: it deletes the keys the example uses
  // and runs its lines again, back to back, in the learner's own sandbox,
  // so the replies are the sandbox's, not the page's. The keys each line
  // names come with the lesson (data-keys), read by the server with the
  // playground's own tokenizer and command table; the TTL a key had after
  // a line ran is the one the inspector listed with the reply.

  function seconds(ms) { return (Math.round(ms / 100) / 10) + " s"; }

  function short(line) { return line.length > 40 ? line.slice(0, 38) + "\u2026" : line; }

  // show asks the room to bring the terminal into view (it opens the
  // drawer on a narrow screen) before a line runs or is put in the input.
  function showTerminal() {
    document.dispatchEvent(new CustomEvent("room:show"));
  }

  // The forms that run the examples without this script give way to the
  // Run and Edit buttons on the commands.
  document.querySelectorAll("[data-cli-forms]").forEach(function (f) { f.remove(); });

  var examples = [], current = null;
  document.querySelectorAll(".prose h3, [data-redis-cli]").forEach(function (el) {
    if (el.tagName === "H3") { current = null; return; }
    if (!current) {
      current = { lines: [], off: -1, typed: false, busy: false };
      examples.push(current);
    }
    setUpBlock(current, el);
  });

  listeners.push(function (ev) {
    examples.forEach(function (ex) {
      if (ev.kind === "reset") forget(ex);
      if (ev.kind === "typed") ex.typed = true;
    });
  });

  function setUpBlock(ex, block) {
    var result = document.createElement("div");
    result.className = "cli-result";
    result.setAttribute("aria-live", "polite");
    result.hidden = true;
    block.appendChild(result);
    var cmds = block.querySelectorAll(".cli-cmd");
    cmds.forEach(function (cmd) {
      var l = {
        who: cmd.getAttribute("data-client") || "A",
        line: cmd.querySelector(".cli-input").textContent,
        keys: keysOf(cmd),
        expect: printedReply(cmd),
        // Set when the printed reply has numbers that vary from run to
        // run (the server's rule, playground.ReplyPattern).
        pattern: cmd.getAttribute("data-expect-pattern"),
        result: result,
        many: cmds.length > 1,
        index: ex.lines.length,
        ran: false, // in this pass through the example
        at: 0, // the sandbox clock after it ran
        ttls: {} // the TTL its keys had then, in ms, as the inspector listed them
      };
      ex.lines.push(l);
      l.runButton = button("Run", "Run as client " + l.who + ": " + l.line, function () { runLine(ex, l); });
      var edit = button("Edit", "Edit in the terminal, as client " + l.who + ": " + l.line, function () {
        showTerminal();
        setClient(l.who);
        input.value = l.line;
        input.focus();
        input.setSelectionRange(l.line.length, l.line.length);
      });
      edit.classList.add("cli-edit");
      cmd.append(" ", l.runButton, " ", edit);
    });
  }

  function keysOf(cmd) {
    try {
      var k = JSON.parse(cmd.getAttribute("data-keys") || "[]");
      return Array.isArray(k) ? k : [];
    } catch (e) { return []; }
  }

  function button(text, label, onClick) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "cli-run";
    b.textContent = text;
    b.setAttribute("aria-label", label);
    b.addEventListener("click", onClick);
    return b;
  }

  // printedReply is what the lesson prints under a command: its reply
  // lines up to the next command, notes left out.
  function printedReply(cmd) {
    var lines = [];
    for (var n = cmd.nextSibling; n; n = n.nextSibling) {
      if (n.nodeType !== 1) continue;
      if (n.classList.contains("cli-cmd")) break;
      if (n.classList.contains("cli-reply")) lines.push(n.textContent);
    }
    return lines.length ? lines.join("\n") : null;
  }

  // busy keeps one request of an example at a time; buttons stay enabled
  // (a disabled button drops the focus to the page) but say they wait.
  function setBusy(ex, on) {
    ex.busy = on;
    ex.lines.forEach(function (l) {
      if (on) l.runButton.setAttribute("aria-disabled", "true");
      else l.runButton.removeAttribute("aria-disabled");
    });
  }

  function runLine(ex, l) {
    if (ex.busy) return;
    showTerminal();
    setBusy(ex, true);
    var why = reasonBefore(ex, l);
    run(l.who, l.line, "example").then(function (res) {
      check(ex, l, res, why);
    }, function (err) {
      show(l, null, err.message, false);
    }).then(function () { setBusy(ex, false); });
  }

  // forget starts a new pass through the example: none of its lines ran.
  function forget(ex) {
    ex.off = -1;
    ex.typed = false;
    ex.lines.forEach(function (l) { l.ran = false; l.at = 0; l.ttls = {}; });
  }

  // reasonBefore notes, before a line runs, what may make its reply differ
  // from the lesson's; the clock is read from the reply after.
  function reasonBefore(ex, l) {
    if (l.ran) return { twice: true };
    var lines = ex.lines;
    for (var j = 0; j < l.index; j++) if (!lines[j].ran) return { early: lines[j] };
    for (var k = l.index + 1; k < lines.length; k++) if (lines[k].ran) return { later: lines[k] };
    if (ex.off >= 0) return { off: lines[ex.off] };
    return {};
  }

  function check(ex, l, res, why) {
    var ok = l.expect === null || (l.pattern ? new RegExp(l.pattern).test(res.output) : res.output === l.expect);
    var reason = "";
    if (!ok) {
      reason = explain(ex, l, res, why);
      if (ex.off < 0) ex.off = l.index;
    }
    l.ran = true;
    l.at = res.clock_ms;
    l.ttls = {};
    l.keys.forEach(function (k) {
      var left = ttlLeft(k);
      if (left > 0) l.ttls[k] = Math.round(left);
    });
    show(l, res.output, reason, ok, ex);
  }

  // explain is the one-sentence reason a reply differs from the lesson's.
  function explain(ex, l, res, why) {
    if (res.output === "QUEUED") return "Client " + l.who + " has a MULTI open, so the line was queued, not run: type DISCARD or EXEC as " + l.who + ".";
    if (why.twice) return "This line ran already; its first run changed the sandbox.";
    if (why.early) return "Run the lines above first: this one expects what " + why.early.who + "> " + short(why.early.line) + " does.";
    if (why.later) return why.later.who + "> " + short(why.later.line) + " ran before it, out of order, and changed the sandbox.";
    if (why.off) return "An earlier line (" + why.off.who + "> " + short(why.off.line) + ") answered differently, so this one does too.";
    for (var j = l.index - 1; j >= 0; j--) {
      var p = ex.lines[j];
      for (var i = 0; i < p.keys.length; i++) {
        var k = p.keys[i], ttl = p.ttls[k];
        if (ttl > 0 && p.at && res.clock_ms - p.at >= ttl) {
          return k + " had expired: " + seconds(res.clock_ms - p.at) + " passed since " + p.who + "> " + short(p.line) +
            ", when it had " + seconds(ttl) + " to live.";
        }
      }
    }
    var names = [];
    ex.lines.slice(0, l.index + 1).forEach(function (p) {
      p.keys.forEach(function (k) { if (names.indexOf(k) < 0) names.push(k); });
    });
    var what = names.length ? names.join(", ") : "the sandbox";
    if (ex.typed) return "A command typed in the terminal may have changed " + what + ".";
    return "Something outside this example changed " + what + " (an earlier visit, another tab, or the sandbox sat idle).";
  }

  // show writes a line's actual reply under its block: as printed, or
  // different, with the reason and the way back to the lesson's replies.
  function show(l, output, reason, ok, ex) {
    var r = l.result;
    r.replaceChildren();
    r.hidden = false;
    r.classList.toggle("cli-result-off", !ok);
    var p = document.createElement("p");
    p.className = "cli-actual";
    var label = document.createElement("span");
    label.className = "cli-label";
    label.textContent = (l.many ? "Your sandbox, " + l.who + "> " + short(l.line) : "Your sandbox") + ": ";
    p.appendChild(label);
    if (output !== null) {
      var out = document.createElement("span");
      out.className = "cli-out";
      out.textContent = output;
      p.appendChild(out);
    }
    if (output !== null && l.expect !== null) {
      var same = document.createElement("span");
      same.className = "cli-same";
      same.textContent = ok ? " \u2713 as printed" : " \u00b7 the lesson prints " + l.expect.split("\n").join(" ");
      p.appendChild(same);
    }
    r.appendChild(p);
    if (!ok) {
      var why = document.createElement("p");
      why.className = "cli-why";
      why.textContent = reason;
      r.appendChild(why);
      if (ex) {
        var again = document.createElement("button");
        again.type = "button";
        again.className = "cli-restart";
        again.textContent = "Run this example from the start";
        again.addEventListener("click", function () { restart(ex, l.index, again); });
        r.appendChild(again);
      }
    }
  }

  // restart deletes the keys the example uses and runs its lines again,
  // back to back, up to the one that went off; each shows its reply. The
  // lines run in one go, so no TTL of the example runs out between them.
  function restart(ex, upTo, from) {
    if (ex.busy) return;
    showTerminal();
    setBusy(ex, true);
    from.setAttribute("aria-disabled", "true");
    var names = [];
    ex.lines.forEach(function (l) {
      l.keys.forEach(function (k) { if (names.indexOf(k) < 0) names.push(k); });
    });
    // Replies shown for the lines after upTo are from the pass that went
    // off; the lines up to it show their new ones.
    ex.lines.forEach(function (l) { if (l.index > upTo) l.result.hidden = true; });
    forget(ex);
    addNotice("Running the example from the start: its keys deleted, then its lines again.");
    var chain = names.length ? run("A", "DEL " + names.map(quote).join(" "), "example").then(function (res) {
      // A MULTI the learner opened as A would queue the DEL, not run it.
      if (res.output === "QUEUED") throw new Error("Client A has a MULTI open: type DISCARD as client A, then run the example from the start again.");
    }) : Promise.resolve();
    ex.lines.slice(0, upTo + 1).forEach(function (l) {
      chain = chain.then(function () {
        var why = reasonBefore(ex, l);
        return run(l.who, l.line, "example").then(function (res) { check(ex, l, res, why); });
      });
    });
    chain.then(function () {
      // The control is gone once the replies match: the focus goes to
      // the Run button of the line it fixed, not to the page.
      if (!document.activeElement || document.activeElement === document.body) ex.lines[upTo].runButton.focus();
    }, function (err) {
      show(ex.lines[upTo], null, err.message, false, ex);
    }).then(function () { setBusy(ex, false); });
  }

  function quote(k) { return /^[^\s"'\\]+$/.test(k) ? k : JSON.stringify(k); }
})();
