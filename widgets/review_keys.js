// The browser side of the npc_nb review panel (an anywidget ES module).
//
// ipywidgets' Button has no hotkeys, so this small view sits at the top of the panel,
// draws the current card and owns the panel's keyboard and clicks:
//
// - It marks the panel data-lm-suppress-shortcuts="true" (JupyterLab then ignores keys
//   inside it) and stops single keys from propagating (VS Code listens higher up).
// - Every decision, by key or by a click on a panel button, is one message to Python
//   carrying the id of the card on screen: {type: "key", key, card},
//   {type: "button", name, card}, {type: "submit_edit", text, card},
//   {type: "cancel_edit", card}. Python ignores a decision meant for another card.
// - From a message until Python's answer the panel is busy: further decisions are
//   dropped here, so a double click or a held key is one decision. Python answers with
//   one update holding the new card, its id and a new `revision`, so the card a key acts
//   on is always the card on screen.
// - Focus stays in the panel across re-renders; Esc leaves it for the notebook.
// - While the panel is live, a style hides its static summary (shown once it is gone).

const KEYS = new Set(["a", "r", "e", "s", "d", "u", "?", "x", ..."123456789"]);
const WAITING_MS = 1500;
const GONE_MS = 15000; // no answer for this long: the kernel was probably restarted
const FIND_PANEL_FRAMES = 600;
const liveStyles = new Map(); // panel id -> [style element, views using it]

function isTyping(target) {
  if (!target || !target.tagName) return false;
  const tag = target.tagName.toLowerCase();
  return tag === "textarea" || tag === "input" || tag === "select" || target.isContentEditable;
}

function hideStaticSummary(panelId) {
  const entry = liveStyles.get(panelId);
  if (entry) {
    entry[1] += 1;
    return;
  }
  const style = document.createElement("style");
  style.textContent = `.npc-static-${panelId} { display: none !important; }`;
  document.head.appendChild(style);
  liveStyles.set(panelId, [style, 1]);
}

function showStaticSummary(panelId) {
  const entry = liveStyles.get(panelId);
  if (!entry) return;
  entry[1] -= 1;
  if (entry[1] === 0) {
    entry[0].remove();
    liveStyles.delete(panelId);
  }
}

// What a click on a panel button asks for, from the button's classes.
function buttonMessage(button) {
  for (const name of button.classList) {
    if (name.startsWith("npc-key-")) return { type: "key", key: name.slice(8) };
    if (name.startsWith("npc-button-")) return { type: "button", name: name.slice(11) };
  }
  return null;
}

function render({ model, el }) {
  el.classList.add("npc-review-keys");
  const hint = document.createElement("div");
  hint.className = "npc-hint";
  const card = document.createElement("div");
  card.className = "npc-card";
  el.append(hint, card);

  let panel = null;
  let busy = false;
  let waitingTimer = null;
  let goneTimer = null;
  let summaryShown = false;
  let hadFocus = false;
  let expectEdit = false;
  let removed = false;

  const drawHint = (text) => {
    hint.textContent = text || model.get("hint");
  };
  const drawCard = () => {
    card.innerHTML = model.get("card_html");
  };

  const setBusy = (value) => {
    busy = value;
    clearTimeout(waitingTimer);
    clearTimeout(goneTimer);
    el.classList.remove("npc-waiting");
    if (panel) {
      panel.classList.toggle("npc-busy", value);
      panel.setAttribute("aria-busy", value ? "true" : "false");
    }
    drawHint();
    if (!value) return;
    // No time-out that re-enables decisions: a late answer would apply to a card the
    // reviewer has not seen. Say that the kernel is slow; after a long silence, that it
    // may be gone (and show the static summary again).
    waitingTimer = setTimeout(() => {
      el.classList.add("npc-waiting");
      drawHint("Waiting for the kernel…");
    }, WAITING_MS);
    goneTimer = setTimeout(() => {
      drawHint("No answer from the kernel. If it was restarted, run the cell again.");
      if (!summaryShown) {
        summaryShown = true;
        showStaticSummary(panelId);
      }
    }, GONE_MS);
  };

  const send = (content) => {
    if (busy) return false;
    setBusy(true);
    model.send({ ...content, card: model.get("card_id") });
    return true;
  };

  const focusPanel = () => panel && panel.focus({ preventScroll: true });

  const leavePanel = () => {
    const notebook = panel.closest(".jp-Notebook");
    hadFocus = false;
    if (notebook) notebook.focus();
    else document.activeElement.blur();
  };

  const onKeydown = (event) => {
    const mod = event.ctrlKey || event.metaKey || event.altKey;
    if (isTyping(event.target)) {
      if (!event.target.closest(".npc-edit")) {
        // The reason box, the date: typing stays there; Esc leaves the panel.
        if (event.key === "Escape") {
          event.preventDefault();
          event.stopPropagation();
          leavePanel();
        }
        return;
      }
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        event.stopPropagation();
        if (send({ type: "submit_edit", text: event.target.value })) focusPanel();
      } else if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        if (send({ type: "cancel_edit" })) focusPanel();
      }
      return; // typing: the key goes to the box, never to a decision
    }
    if (mod) return; // Ctrl/Cmd/Alt combinations are not the panel's
    event.stopPropagation();
    if (event.key === "Escape") {
      leavePanel();
      return;
    }
    if (event.key === "Enter" || event.key === " ") {
      // A focused button would turn these into clicks (and a held key into many):
      // the panel decides with its own keys only.
      event.preventDefault();
      return;
    }
    const key = event.key.toLowerCase();
    if (!KEYS.has(key)) return;
    event.preventDefault();
    if (event.repeat) return;
    if (send({ type: "key", key }) && key === "e") expectEdit = true;
  };

  // Bubble phase: whatever a text box let through stops here too.
  const stopHere = (event) => {
    if (!(event.ctrlKey || event.metaKey || event.altKey)) event.stopPropagation();
  };

  // Capture phase: a click on a panel button becomes one message naming the card.
  const onClick = (event) => {
    const button = event.target.closest("button.npc-send");
    if (!button) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    const message = buttonMessage(button);
    if (message === null) return;
    if (message.type === "button" && message.name === "save_edit") {
      const box = panel.querySelector(".npc-edit textarea");
      if (send({ type: "submit_edit", text: box ? box.value : "" })) focusPanel();
      return;
    }
    if (send(message) && message.type === "key" && message.key === "e") expectEdit = true;
    focusPanel(); // not the button: Enter or Space on it would click again
  };

  const onFocusIn = () => {
    hadFocus = true;
  };
  const onFocusOut = (event) => {
    // Focus that leaves for somewhere else on the page was the reviewer's choice; focus
    // dropped to nothing (a hidden box, a re-render) comes back on the next answer.
    if (event.relatedTarget && !panel.contains(event.relatedTarget)) hadFocus = false;
  };

  const onAnswer = () => {
    setBusy(false);
    expectEdit = false; // an edit box this view asked for has been focused by now
    if (summaryShown) {
      summaryShown = false; // the kernel answered after all: the panel is live
      hideStaticSummary(panelId);
    }
    if (hadFocus && panel && !panel.contains(document.activeElement)) focusPanel();
  };

  const onFocusEdit = () => {
    if (!expectEdit) return; // another view of this panel asked for the edit
    expectEdit = false;
    requestAnimationFrame(() => {
      const box = panel && panel.querySelector(".npc-edit textarea");
      if (box) {
        box.focus();
        box.setSelectionRange(box.value.length, box.value.length);
      }
    });
  };

  const attach = (found) => {
    panel = found;
    panel.setAttribute("data-lm-suppress-shortcuts", "true");
    panel.tabIndex = 0;
    panel.addEventListener("keydown", onKeydown, true);
    panel.addEventListener("keydown", stopHere);
    panel.addEventListener("click", onClick, true);
    panel.addEventListener("focusin", onFocusIn);
    panel.addEventListener("focusout", onFocusOut);
  };

  let frames = 0;
  const findPanel = () => {
    if (removed) return;
    const found = el.closest(".npc-review-panel");
    if (found) attach(found);
    else if (++frames < FIND_PANEL_FRAMES) requestAnimationFrame(findPanel);
  };

  drawHint();
  drawCard();
  findPanel();
  const panelId = model.get("panel_id");
  hideStaticSummary(panelId);
  model.on("change:card_html", drawCard);
  model.on("change:revision", onAnswer);
  model.on("change:focus_edit", onFocusEdit);

  return () => {
    removed = true;
    clearTimeout(waitingTimer);
    clearTimeout(goneTimer);
    if (!summaryShown) showStaticSummary(panelId);
    model.off("change:card_html", drawCard);
    model.off("change:revision", onAnswer);
    model.off("change:focus_edit", onFocusEdit);
    if (panel) {
      panel.removeEventListener("keydown", onKeydown, true);
      panel.removeEventListener("keydown", stopHere);
      panel.removeEventListener("click", onClick, true);
      panel.removeEventListener("focusin", onFocusIn);
      panel.removeEventListener("focusout", onFocusOut);
    }
  };
}

export default { render };
