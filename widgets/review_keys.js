// Keyboard front end of the npc_nb review panel (an anywidget ES module).
//
// ipywidgets' Button has no hotkeys, so this small view sits inside the panel and owns
// the keyboard for it. It finds the panel element around it, marks it
// data-lm-suppress-shortcuts="true" (JupyterLab then ignores keys inside it) and stops
// every key event from propagating (VS Code's notebook listens higher up). Single keys
// are sent to Python as {type: "key", key, card}; the card id lets Python drop a key
// meant for a card that has already gone. Ctrl/Cmd+Enter in the edit box sends the
// edited text; Escape cancels the edit. While a decision is in flight (from a key or a
// click on a decision button) further keys and clicks are dropped here, in the browser,
// so a double click or a held key is one decision; Python ends it by bumping
// `revision` after every message it handles.

const KEYS = new Set(["a", "r", "e", "s", "d", "u", "?"]);
const BUSY_TIMEOUT_MS = 5000;

function isTyping(target) {
  if (!target || !target.tagName) return false;
  const tag = target.tagName.toLowerCase();
  return tag === "textarea" || tag === "input" || tag === "select" || target.isContentEditable;
}

function findPanel(el, found) {
  const panel = el.closest(".npc-review-panel");
  if (panel) {
    found(panel);
    return;
  }
  requestAnimationFrame(() => findPanel(el, found));
}

function render({ model, el }) {
  el.classList.add("npc-review-keys");
  el.textContent = model.get("hint");
  let panel = null;
  let busy = false;
  let busyTimer = null;

  const setBusy = (value) => {
    busy = value;
    clearTimeout(busyTimer);
    if (panel) panel.classList.toggle("npc-busy", value);
    if (value) busyTimer = setTimeout(() => setBusy(false), BUSY_TIMEOUT_MS);
  };

  const send = (content) => {
    setBusy(true);
    model.send({ ...content, card: model.get("card_id") });
  };

  // Back to the panel when the keyboard is outside it or in the edit box being closed.
  const focusPanel = () => {
    const active = document.activeElement;
    if (panel && (!panel.contains(active) || active.closest(".npc-edit"))) {
      panel.focus({ preventScroll: true });
    }
  };

  // Capture phase: the panel sees a key before its inputs do (ipywidgets' text boxes
  // stop keydown from bubbling, which would hide Ctrl+Enter and Escape from us).
  const onKeydown = (event) => {
    const mod = event.ctrlKey || event.metaKey;
    if (isTyping(event.target)) {
      const inEdit = event.target.closest(".npc-edit");
      if (inEdit && event.key === "Enter" && mod) {
        event.preventDefault();
        event.stopPropagation();
        if (!busy) send({ type: "submit_edit", text: event.target.value });
        panel.focus({ preventScroll: true });
      } else if (inEdit && event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        send({ type: "cancel_edit" });
        panel.focus({ preventScroll: true });
      }
      return; // typing: the key goes to the box, never to a decision
    }
    // Nothing pressed in the panel may reach the notebook's own shortcuts.
    event.stopPropagation();
    if (mod || event.altKey) return;
    const key = event.key.toLowerCase();
    if (!KEYS.has(key)) return;
    event.preventDefault();
    if (busy || event.repeat) return;
    send({ type: "key", key });
  };

  // Bubble phase: whatever a text box let through stops here too (VS Code listens above).
  const stopHere = (event) => event.stopPropagation();

  const onClick = (event) => {
    const button = event.target.closest("button.npc-decision");
    if (!button) return;
    if (busy) {
      event.preventDefault();
      event.stopImmediatePropagation();
      return;
    }
    setBusy(true);
  };

  const onRevision = () => {
    setBusy(false);
    el.textContent = model.get("hint");
  };

  const onFocusEdit = () => {
    requestAnimationFrame(() => {
      const box = panel && panel.querySelector(".npc-edit textarea");
      if (box) {
        box.focus();
        box.setSelectionRange(box.value.length, box.value.length);
      }
    });
  };

  const onFocusPanel = () => requestAnimationFrame(focusPanel);

  findPanel(el, (found) => {
    panel = found;
    panel.setAttribute("data-lm-suppress-shortcuts", "true");
    panel.tabIndex = 0;
    panel.addEventListener("keydown", onKeydown, true);
    panel.addEventListener("keydown", stopHere);
    panel.addEventListener("click", onClick, true);
  });
  model.on("change:revision", onRevision);
  model.on("change:focus_edit", onFocusEdit);
  model.on("change:focus_panel", onFocusPanel);

  return () => {
    clearTimeout(busyTimer);
    model.off("change:revision", onRevision);
    model.off("change:focus_edit", onFocusEdit);
    model.off("change:focus_panel", onFocusPanel);
    if (panel) {
      panel.removeEventListener("keydown", onKeydown, true);
      panel.removeEventListener("keydown", stopHere);
      panel.removeEventListener("click", onClick, true);
    }
  };
}

export default { render };
