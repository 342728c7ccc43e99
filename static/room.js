// Lock Lab room: the lesson with its playground. From 1100 px the
// playground stays beside the lesson (CSS alone); narrower, this script
// docks it at the bottom of the screen as a drawer, which its toggle, a
// Run or an Edit button opens and Escape closes. Whatever the width, a
// Run or Edit makes sure the terminal's input is in view. playground.js
// asks for that with a "room:show" event on the document, sent before it
// runs or focuses anything, so the drawer is open by then.
(function () {
  "use strict";
  var room = document.querySelector("[data-room]");
  if (!room) return;
  var side = room.querySelector("[data-room-side]");
  var toggle = room.querySelector("[data-room-toggle]");
  var panel = room.querySelector("[data-room-panel]");
  if (!side || !toggle || !panel) return;
  var input = panel.querySelector("input[name=line]");
  var narrow = window.matchMedia("(max-width: 1099.98px)");

  room.classList.add("room-js");
  toggle.hidden = false;

  function isOpen() { return toggle.getAttribute("aria-expanded") === "true"; }

  // setOpen opens or closes the drawer. While it is open the page keeps
  // what has the focus above it: the browser scrolls with the drawer's
  // height as padding at the bottom.
  function setOpen(open) {
    toggle.setAttribute("aria-expanded", String(open));
    side.classList.toggle("room-open", open);
    document.documentElement.style.scrollPaddingBottom = open && narrow.matches ? side.offsetHeight + "px" : "";
  }

  function keepFocusInView() {
    var el = document.activeElement;
    if (el && el !== document.body && !side.contains(el) && el.scrollIntoView) el.scrollIntoView({ block: "nearest" });
  }

  toggle.addEventListener("click", function () {
    var open = !isOpen();
    setOpen(open);
    // Opened from its toggle, the learner means to type.
    if (open && input) input.focus();
  });

  // Escape closes the drawer from anywhere in it, or from the page while
  // it is open; the focus, if it was in the drawer, goes back to the
  // toggle.
  document.addEventListener("keydown", function (ev) {
    if (ev.key !== "Escape" || !narrow.matches || !isOpen() || ev.defaultPrevented) return;
    var inside = side.contains(document.activeElement);
    setOpen(false);
    if (inside) toggle.focus();
  });

  document.addEventListener("room:show", function () {
    if (narrow.matches) {
      if (!isOpen()) setOpen(true);
      keepFocusInView();
      return;
    }
    showTerminal();
  });

  // Beside the lesson the playground is sticky, as tall as the screen; on
  // a short screen it scrolls within itself. showTerminal brings the
  // terminal (transcript and input) into view, within the column and, at
  // the very top of the page, where the header is above the column, in
  // the window; it moves nothing that is in view already.
  var terminal = panel.querySelector(".pg-terminal");
  function showTerminal() {
    if (terminal && !narrow.matches) terminal.scrollIntoView({ block: "nearest" });
  }

  // A reply, a notice or a cleared screen changes the terminal's height
  // (the transcript shows once it has a line): the terminal is brought
  // into view again.
  var transcript = panel.querySelector("[data-pg-transcript]");
  if (transcript && window.MutationObserver) {
    new MutationObserver(showTerminal).observe(transcript, { childList: true });
  }

  // A link to the playground opens the drawer rather than jumping to it.
  room.addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest('a[href="#playground"]');
    if (!a || !narrow.matches) return;
    ev.preventDefault();
    setOpen(true);
    if (input) input.focus();
  });

  // Across the breakpoint the drawer's state is dropped: a wide screen
  // has no drawer, and a narrow one starts with it closed.
  narrow.addEventListener("change", function () { setOpen(false); });
  setOpen(false);
})();
