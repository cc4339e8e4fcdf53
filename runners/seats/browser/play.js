// The seat's page: asks /state for what the seat sees (a long poll: the server answers when
// something changed), draws it, and builds the person's turn from the game's action forms.
// Game text is only ever written as text (textContent), never as markup.
(() => {
  "use strict";
  const base = location.pathname.replace(/\/+$/, "");
  const $ = (id) => document.getElementById(id);
  let version = -1;
  let state = null;
  let shown = null; // "game:turn" of the turn drawn
  let chosen = []; // actions added this turn: {kind, values, text}
  let deadline = null; // when the turn's time runs out (Date.now() ms)
  let running = false; // the turn's clock runs (the server heard this page showed the turn)
  let sent = false; // this turn's answer was accepted

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v);
    for (const kid of kids) if (kid !== undefined && kid !== null) node.append(kid instanceof Node ? kid : String(kid));
    return node;
  }
  const clear = (node) => node.replaceChildren();
  const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

  async function post(path, data) {
    try {
      const r = await fetch(base + path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(data) });
      return await r.json();
    } catch (e) {
      return { error: "Cannot reach the server just now; try again in a moment." };
    }
  }

  async function poll() {
    for (;;) {
      let next;
      try {
        const r = await fetch(`${base}/state?since=${version}`, { cache: "no-store" });
        if (!r.ok) { $("status").textContent = r.status === 404 ? "There is no such seat." : `The server answered ${r.status}.`; return; }
        next = await r.json();
      } catch (e) {
        $("status").textContent = "Cannot reach the study's server; trying again…";
        await sleep(1000);
        continue;
      }
      if (next.version !== version) { version = next.version; draw(next); }
      if (next.status === "done") return;
    }
  }

  // ---- drawing the state ----

  const STATUS = {
    need_participant: "Waiting for your participant code", waiting: "Waiting for your partner…",
    your_turn: "Your turn", game_over: "Game over", done: "The study is over",
  };

  function draw(s) {
    state = s;
    const screen = s.screen || null;
    const p = screen ? null : s.prompt;
    document.body.dataset.status = s.status;
    document.body.dataset.screen = screen ? screen.kind : "";
    if (s.study) {
      $("heading").textContent = s.study;
      $("role").textContent = p ? `· you play ${s.role}` : "";
    } else $("role").textContent = s.role;
    $("game").textContent = !s.games ? "" : s.game ? `game ${s.game} of ${s.games}` : `${s.games} game${s.games === 1 ? "" : "s"}`;
    $("turn").textContent = p ? `turn ${p.turn} of ${p.max_turns}` : "";
    $("status").textContent = screen ? "" : !p && s.status === "waiting" ? "Waiting for the game to start…" : STATUS[s.status];
    $("participant").hidden = s.status !== "need_participant";
    $("leave").hidden = !s.can_leave;
    drawScreen(screen);
    drawLast(s);
    drawOver(s);
    $("play").hidden = !p || s.status === "need_participant" || s.status === "done";
    if (p) {
      const key = `${p.game_id}:${p.turn}`;
      if (key !== shown) { shown = key; newTurn(p); }
      drawChat(s.conversation);
      drawNotices([...p.notices, ...s.notes]);
    }
    deadline = s.seconds_left === null ? null : Date.now() + s.seconds_left * 1000;
    running = Boolean(s.clock_running);
    if (s.status === "your_turn" && !s.clock_running) markShown();
    enable();
    tick();
  }

  // The turn's clock starts when this page first shows it (and the page is in view): tell the server.
  let shownKey = null;
  async function markShown() {
    if (document.hidden) return; // told when the page comes into view
    const key = shown;
    if (shownKey === key) return;
    shownKey = key;
    const r = await post("/shown", stamp());
    if (r.ok && shown === key) { deadline = Date.now() + r.seconds_left * 1000; running = true; tick(); }
  }
  document.addEventListener("visibilitychange", () => { if (state && state.status === "your_turn" && !state.clock_running) markShown(); });

  // A study's screen between games: its title, its text in paragraphs, and the button that goes on.
  function drawScreen(screen) {
    const box = $("screen");
    box.hidden = !screen;
    if (!screen) return;
    $("screen-title").textContent = screen.title;
    const text = $("screen-text");
    clear(text);
    for (const para of (screen.text || "").split(/\n\s*\n/)) if (para.trim()) text.append(el("p", {}, para.trim()));
    if (screen.code) {
      const at = [...text.children].find((p) => p.textContent.includes(screen.code));
      const code = el("b", { id: "code" }, screen.code);
      if (at) { const [before, ...after] = at.textContent.split(screen.code); at.replaceChildren(before, code, after.join(screen.code)); }
      else text.append(el("p", {}, "Completion code: ", code));
    }
    const go = $("screen-go");
    go.hidden = !screen.button;
    go.disabled = false;
    go.textContent = screen.button || "";
    go.dataset.step = screen.step || "";
  }

  function drawLast(s) {
    const box = $("last");
    const last = s.screen && !s.screen.last ? null : s.last;
    box.hidden = !last;
    if (!last) return;
    clear(box);
    const previous = s.game > last.game;
    box.classList.toggle("previous", previous);
    box.append(el("h2", {}, `Game ${last.game} of ${s.games} is over: `,
      el("span", { class: last.outcome === "success" ? "right" : "wrong", id: "outcome", "data-outcome": last.outcome }, last.headline)));
    const list = el("ul", { id: "scores" });
    for (const [label, value] of last.scores) list.append(el("li", {}, `${label}: `, el("b", {}, scoreText(value))));
    list.append(el("li", {}, `turns played: ${last.turns}`));
    box.append(list);
    if (last.error) box.append(el("p", { class: "wrong" }, last.error));
    if (previous) box.append(el("p", { class: "dim" }, `Game ${s.game} has started.`));
    else if (s.status === "game_over" && last.game < s.games) box.append(el("p", { class: "dim" }, "The next game starts in a moment…"));
  }

  const scoreText = (v) => (v === true ? "yes" : v === false ? "no" : typeof v === "number" ? String(Math.round(v * 1000) / 1000) : String(v));

  function drawOver(s) {
    const box = $("over");
    box.hidden = s.status !== "done" || Boolean(s.screen);
    if (box.hidden) return;
    clear(box);
    box.append(el("h2", {}, "The study is over. Thank you!"),
      el("p", {}, s.games === 1 ? "The game is played; you can close this page." : `All ${s.games} games are played; you can close this page.`));
  }

  function newTurn(p) {
    $("rules-text").textContent = p.rules;
    drawSections(p.sections);
    $("message-box").hidden = !p.messages;
    $("message").value = "";
    const to = $("to");
    clear(to);
    $("to-box").hidden = !p.directed;
    for (const partner of p.partners) to.append(el("option", { value: partner }, partner));
    const kind = $("kind");
    clear(kind);
    for (const form of p.forms) kind.append(el("option", { value: form.kind }, form.label));
    $("builder").hidden = p.forms.length === 0;
    chosen = [];
    sent = false;
    drawFields();
    drawChosen();
    for (const id of ["check-error", "send-error"]) $(id).textContent = "";
  }

  function drawSections(sections) {
    const box = $("sections");
    clear(box);
    for (const section of sections) {
      const card = el("section", { class: "card part", "data-title": section.title }, el("h2", {}, section.title));
      for (const line of section.lines || []) card.append(el("div", { class: "line" }, line));
      if (section.board) card.append(board(section.board));
      box.append(card);
    }
  }

  function board(b) {
    const head = el("tr", {}, ...b.columns.map((c) => el("th", {}, c)));
    const body = el("tbody");
    for (const row of b.rows) {
      body.append(el("tr", {}, ...row.map((cell) => {
        const [text, mark] = Array.isArray(cell) ? cell : [cell.text, cell.mark];
        return el("td", {}, el("span", { class: mark || null }, text));
      })));
    }
    return el("table", { class: "board" }, el("thead", {}, head), body);
  }

  function drawChat(lines) {
    const list = $("chat");
    clear(list);
    for (const line of lines) {
      const mine = line.sender === state.role;
      list.append(el("li", { class: mine ? "chat mine" : "chat", "data-sender": line.sender },
        el("span", { class: "sender" }, mine ? "you" : line.sender), el("span", { class: "dim" }, ` · turn ${line.turn}`),
        el("div", { class: "text" }, line.text)));
    }
    if (!lines.length) list.append(el("li", { class: "dim empty" }, "No messages yet."));
    list.scrollTop = list.scrollHeight;
  }

  function drawNotices(notices) {
    const list = $("notices");
    clear(list);
    for (const n of notices) list.append(el("li", { class: "notice" }, n));
  }

  // ---- the turn being built ----

  function form() {
    return (state && state.prompt ? state.prompt.forms : []).find((f) => f.kind === $("kind").value);
  }

  function drawFields() {
    const box = $("fields");
    clear(box);
    const f = form();
    $("form-help").textContent = f ? f.help || "" : "";
    if (!f) return;
    for (const field of f.fields || []) box.append(fieldControl(field));
    enable();
  }

  function fieldControl(field) {
    const kind = field.kind || "text";
    const id = `field-${field.name}`;
    const wrap = el("div", { class: "field", "data-field": field.name, "data-kind": kind, "data-min": field.minimum, "data-max": field.maximum },
      el("label", { for: id }, field.label));
    if (kind === "choice") {
      const select = el("select", { id }, el("option", { value: "" }, "choose…"));
      for (const c of field.choices || []) select.append(el("option", { value: c }, c));
      wrap.append(select);
    } else if (kind === "number") {
      wrap.append(el("input", { id, type: "number", min: field.minimum, max: field.maximum, step: 1 }));
    } else if (kind === "sequence") {
      wrap.seq = [];
      const picked = el("span", { class: "seq", id }, "");
      const picks = el("span", { class: "picks" });
      const redraw = () => {
        picked.textContent = wrap.seq.length ? wrap.seq.join(" → ") : "(nothing yet)";
        for (const b of picks.children) b.classList.toggle("used", wrap.seq.includes(b.dataset.choice));
      };
      for (const c of field.choices || []) {
        const b = el("button", { type: "button", class: "pick", "data-choice": c }, c);
        b.addEventListener("click", () => {
          if (!field.repeats && wrap.seq.includes(c)) return;
          wrap.seq.push(c);
          redraw();
        });
        picks.append(b);
      }
      const clearButton = el("button", { type: "button", class: "clear" }, "clear");
      clearButton.addEventListener("click", () => { wrap.seq = []; redraw(); });
      wrap.append(picks, el("div", {}, picked, " ", clearButton));
      redraw();
    } else {
      wrap.append(el("input", { id, type: "text", autocomplete: "off" }));
    }
    if (field.help) wrap.append(el("span", { class: "dim help" }, field.help));
    return wrap;
  }

  function values() {
    const out = {};
    for (const wrap of $("fields").querySelectorAll(".field")) {
      out[wrap.dataset.field] = wrap.dataset.kind === "sequence" ? [...wrap.seq] : wrap.querySelector("input, select").value;
    }
    return out;
  }

  const stamp = () => ({ game: state.prompt.game_id, turn: state.prompt.turn });

  async function addAction() {
    const kind = $("kind").value;
    const vals = values();
    const r = await post("/check", { ...stamp(), kind, values: vals });
    $("check-error").textContent = r.error || "";
    if (r.error) return;
    chosen.push({ kind, values: vals, text: r.text });
    drawChosen();
  }

  function drawChosen() {
    const list = $("actions");
    clear(list);
    chosen.forEach((action, i) => {
      const remove = el("button", { type: "button", class: "remove", title: "remove" }, "remove");
      remove.addEventListener("click", () => { chosen.splice(i, 1); drawChosen(); });
      list.append(el("li", { class: "action", "data-kind": action.kind }, el("span", { class: "text" }, action.text), " ", remove));
    });
    enable();
  }

  async function send() {
    const p = state.prompt;
    const answer = {
      ...stamp(), message: p.messages ? $("message").value : "", to: p.directed ? $("to").value : null,
      actions: chosen.map(({ kind, values }) => ({ kind, values })),
    };
    const r = await post("/answer", answer);
    $("send-error").textContent = r.error || "";
    if (r.ok) {
      sent = true;
      document.body.dataset.answered = Number(document.body.dataset.answered || 0) + 1; // turns sent from this page
      $("status").textContent = "Sent. Waiting for your partner…";
      enable();
    }
  }

  function enable() {
    const mine = state && state.status === "your_turn" && !sent && (deadline === null || deadline > Date.now());
    document.body.classList.toggle("mine", Boolean(mine));
    for (const node of $("answer").querySelectorAll("input, select, textarea, button")) node.disabled = !mine;
    const limit = state && state.prompt ? state.prompt.max_actions : null;
    const full = limit !== undefined && limit !== null && chosen.length >= limit;
    if (mine && full) $("add-action").disabled = true;
    $("limit").textContent = full ? `at most ${limit} action${limit === 1 ? "" : "s"} a turn` : "";
  }

  function tick() {
    if (deadline === null) { $("clock").textContent = ""; return; }
    if (!running) deadline = Date.now() + state.seconds_left * 1000; // the clock waits for the page to show the turn
    const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    $("clock").textContent = `time left ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
    $("clock").classList.toggle("short", left <= 30);
    if (left === 0 && state.status === "your_turn") { $("status").textContent = "Time is up"; enable(); }
  }

  // ---- wiring ----

  $("kind").addEventListener("change", drawFields);
  $("add-action").addEventListener("click", addAction);
  $("send").addEventListener("click", send);
  const name = async () => {
    const r = await post("/participant", { participant: $("participant-id").value });
    $("participant-error").textContent = r.error || "";
  };
  $("participant-send").addEventListener("click", name);
  $("screen-go").addEventListener("click", async () => {
    $("screen-go").disabled = true;
    const r = await post("/go", { step: $("screen-go").dataset.step });
    if (r.error) { $("screen-go").disabled = false; $("status").textContent = r.error; }
  });
  $("leave").addEventListener("click", async () => {
    if (!confirm("Leave the study? A game you are playing ends, and you cannot come back.")) return;
    await post("/leave", {});
  });
  $("participant-id").addEventListener("keydown", (e) => { if (e.key === "Enter") name(); });
  setInterval(() => { if (state) tick(); }, 250);
  poll();
})();
