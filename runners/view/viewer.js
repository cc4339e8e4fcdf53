// The run viewer (runners/view): the summary, the games list with filters and pages, and one game
// turn by turn. Hand-written and dependency-free so the page works offline as one file. Text from the
// run only ever goes in through textContent.
"use strict";
(() => {
  let run = JSON.parse(document.getElementById("run").textContent);
  const PAGE = 50;
  const OUT = { s: "success", f: "failure", e: "error" };
  const filter = { condition: "", outcome: "", error: "", model: "", person: "", min: "", max: "" };
  let page = 0;
  let drawnChoices = null;
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const kid of kids) if (kid !== null && kid !== undefined && kid !== "") node.append(kid instanceof Node ? kid : String(kid));
    return node;
  }
  const pct = (n, d) => (d ? (100 * n / d).toFixed(1) + "%" : "–");
  const money = (c) => (c === null || c === undefined ? "" : "$" + c.toFixed(c < 0.01 ? 6 : 4));

  function renderSummary() {
    const state = run.state || (run.finished ? "finished" : "running or stopped");
    const head = el("div", { class: "title" }, el("h1", {}, run.name),
      el("span", { class: "dim" }, `${run.recorded} of ${run.total} games recorded · ${state}` +
        (run.cost !== null ? ` · ${money(run.cost)}` : "") +
        (run.transcripts ? "" : " · no transcripts: turns show from the turn log")));
    const table = el("table", { id: "conditions" }, el("thead", {}, el("tr", {},
      ...["condition", "games", "success", "failure", "error", "success rate"].map((h) => el("th", {}, h)))));
    const body = el("tbody");
    run.conditions.forEach((name, i) => {
      const [s, f, e] = run.counts[i];
      body.append(el("tr", {}, el("td", { class: "cond" }, name), el("td", {}, s + f + e), el("td", {}, s), el("td", {}, f),
        el("td", {}, e), el("td", {}, pct(s, s + f))));
    });
    table.append(body);
    $("summary").replaceChildren(head, el("details", { open: "" }, el("summary", {}, `${run.conditions.length} condition${run.conditions.length === 1 ? "" : "s"}`), table));
  }

  function matches(row) {
    const [, cond, outcome, error, turns, policies, , people] = row;
    if (filter.condition !== "" && cond !== +filter.condition) return false;
    if (filter.outcome !== "" && outcome !== filter.outcome) return false;
    if (filter.error !== "" && error !== +filter.error) return false;
    if (filter.model !== "" && !policies.includes(+filter.model)) return false;
    if (filter.person !== "" && (filter.person === "yes") !== !!people) return false;
    if (filter.min !== "" && turns < +filter.min) return false;
    if (filter.max !== "" && turns > +filter.max) return false;
    return true;
  }

  function select(id, label, options) {
    const node = el("select", { id, onchange: (e) => { filter[id.slice(2)] = e.target.value; page = 0; renderList(); } },
      el("option", { value: "" }, "any " + label), ...options.map(([value, text]) => el("option", { value }, text)));
    node.value = filter[id.slice(2)];
    return el("label", {}, label + " ", node);
  }

  function number(id, label) {
    const node = el("input", { id, type: "number", min: "0", size: "4", oninput: (e) => { filter[id.slice(2)] = e.target.value; page = 0; renderList(); } });
    node.value = filter[id.slice(2)];
    return el("label", {}, label + " ", node);
  }

  function renderList() {
    const rows = run.rows.filter(matches);
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    page = Math.min(page, pages - 1);
    // The filters are drawn again only when a live run brings new choices, so typing keeps its focus.
    // Games with a person in a seat get a filter and a column, in runs that have any.
    const people = run.rows.some((row) => row[7]);
    const choices = JSON.stringify([run.conditions, run.errors, run.policies, people]);
    if (choices !== drawnChoices) {
      drawnChoices = choices;
      const filters = [
        select("f-condition", "condition", run.conditions.map((c, i) => [i, c])),
        select("f-outcome", "outcome", Object.entries(OUT)),
        select("f-error", "error kind", run.errors.map((e, i) => [i, e])),
        select("f-model", "model", run.policies.map((p, i) => [i, p])),
        people ? select("f-person", "seats", [["yes", "with a person"], ["no", "agents only"]]) : null,
        number("f-min", "turns from"), number("f-max", "to")];
      $("filters").replaceChildren(...filters.filter((f) => f !== null));  // replaceChildren would write a null as the text "null"
    }
    const heads = ["game", "condition", "outcome", "error", "turns", "cost"].concat(people ? ["person"] : []);
    const table = el("table", { id: "games" }, el("thead", {}, el("tr", {}, ...heads.map((h) => el("th", {}, h)))));
    const body = el("tbody");
    for (const [id, cond, outcome, error, turns, , cost, who] of rows.slice(page * PAGE, (page + 1) * PAGE)) {
      body.append(el("tr", { class: OUT[outcome] },
        el("td", {}, el("a", { href: "#game=" + id }, id)), el("td", { class: "cond" }, run.conditions[cond]),
        el("td", {}, OUT[outcome]), el("td", {}, error >= 0 ? run.errors[error] : ""), el("td", {}, turns), el("td", {}, money(cost)),
        people ? el("td", { class: "person" }, who || "") : null));
    }
    table.append(body);
    const pager = el("div", { class: "pager" },
      el("button", { id: "prev", onclick: () => { page -= 1; renderList(); } }, "◀"),
      el("span", { id: "count" }, `${rows.length} games · page ${page + 1} of ${pages}`),
      el("button", { id: "next", onclick: () => { page += 1; renderList(); } }, "▶"));
    pager.children[0].disabled = page === 0;
    pager.children[2].disabled = page >= pages - 1;
    $("rows").replaceChildren(pager, table);
  }

  function spans(line) {
    return el("div", { class: "line" }, ...line.map(([text, mark]) => el("span", { class: mark }, text)));
  }

  function board(data, caption) {
    const table = el("table", { class: "board" }, el("caption", {}, caption),
      el("thead", {}, el("tr", {}, ...data.columns.map((c) => el("th", {}, c)))));
    const body = el("tbody");
    for (const row of data.rows) body.append(el("tr", {}, ...row.map(([text, mark]) => el("td", { class: mark }, text))));
    table.append(body);
    return table;
  }

  function usageText(usage, latency) {
    const parts = [];
    if (usage) {
      parts.push(`${usage.model || ""}: ${usage.prompt_tokens || 0} prompt + ${usage.completion_tokens || 0} reply tokens`);
      if (usage.cached_tokens) parts.push(`${usage.cached_tokens} cached`);
      if ((usage.calls || 1) > 1) parts.push(`${usage.calls} calls`);
      if (usage.latency !== undefined) latency = usage.latency;
      if (usage.cost_usd !== undefined && usage.cost_usd !== null) parts.push(money(usage.cost_usd));
      if (latency !== null && latency !== undefined) parts.push(latency.toFixed(3) + " s");
    }
    return parts.join(", ");
  }

  // A person's turn: how long they took to answer, or that their time ran out.
  function humanText(human) {
    if (!human) return "";
    const seconds = human.seconds === null || human.seconds === undefined ? "" : human.seconds.toFixed(1) + " s";
    return human.timed_out ? `timed out${seconds ? " after " + seconds : ""}` : seconds;
  }

  // "Bob · person P07 · browser · 2 timeouts" for a seat a person played, "Alice: policy" for the others.
  function seatText(role, policy, seat) {
    if (!seat) return `${role}: ${policy}`;
    const parts = [role, "person" + (seat.participant ? " " + seat.participant : "")];
    if (seat.front) parts.push(seat.front);
    if (seat.timeouts) parts.push(`${seat.timeouts} timeout${seat.timeouts === 1 ? "" : "s"}`);
    return parts.join(" · ");
  }

  function folded(label, text) {
    return el("details", {}, el("summary", {}, label), el("pre", {}, text));
  }

  function turnCard(step, agents, roles) {
    const side = roles.indexOf(step.name) % 4;
    const card = el("article", { class: "turn r" + side },
      el("h3", {}, `turn ${step.turn} · ${step.name}`, el("span", { class: "progress" }, step.progress || "")));
    if (step.view !== null && step.view !== undefined) card.append(folded("view", JSON.stringify(step.view, null, 1)));
    if (step.feedback) card.append(el("div", { class: "feedback" }, "feedback: " + step.feedback));
    for (const notice of step.notices) card.append(el("div", { class: "notice" }, notice));
    if (step.format_error !== null) card.append(el("div", { class: "wrong" }, `format error: ${step.format_error}; nothing applied`));
    if (step.message) {
      const to = step.heard.length && step.heard.length < agents - 1 ? ` (to ${step.heard.join(", ")})` : "";
      card.append(el("blockquote", { class: "message" }, step.message, el("span", { class: "dim" }, to)));
    }
    for (const [who, text] of step.delivered) card.append(el("div", { class: "delivered" }, `${who} received: “${text}”`));
    step.candidates.forEach((c, i) => card.append(el("div", { class: c.chosen ? "strong" : "dim" }, `${c.chosen ? "▶" : " "} candidate ${i + 1}: ${c.text}`)));
    if (step.actions) card.append(el("div", { class: "actions" }, "actions: " + step.actions));
    for (const [action, reason] of step.rejected) card.append(el("div", { class: "wrong" }, `rejected ${action}: ${reason}`));
    for (const line of step.after) card.append(spans(line));
    for (const note of step.notes) card.append(el("div", { class: "wrong strong" }, note));
    const usage = usageText(step.usage, step.latency);
    if (usage) card.append(el("div", { class: "usage dim" }, usage));
    if (step.human) card.append(el("div", { class: "human" + (step.human.timed_out ? " wrong" : "") }, "person: " + humanText(step.human)));
    if (step.prompt !== null && step.prompt !== undefined) {
      const text = typeof step.prompt === "object" ? Object.entries(step.prompt).map(([k, v]) => `[${k}]\n${v}`).join("\n") : String(step.prompt);
      card.append(folded("prompt", text));
    }
    if (step.reply) card.append(folded("raw reply", step.reply));
    return card;
  }

  function logTable(log) {
    const table = el("table", { class: "log" }, el("caption", {}, "turn log (the run kept no transcripts)"),
      el("thead", {}, el("tr", {}, ...["turn", "agent", "message chars", "applied", "rejected", "format error", "progress", "model call or person"].map((h) => el("th", {}, h)))));
    const body = el("tbody");
    for (const t of log) body.append(el("tr", {}, el("td", {}, t.turn), el("td", {}, t.name), el("td", {}, t.message_chars), el("td", {}, t.applied),
      el("td", {}, t.rejected.map((r) => r[1]).join("; ")), el("td", {}, t.format_error || ""), el("td", {}, t.progress), el("td", {}, t.human ? "person: " + humanText(t.human) : usageText(t.usage, null))));
    table.append(body);
    return table;
  }

  function renderGame(id, d) {
    const back = el("a", { href: "#", class: "back" }, "◀ all games");
    if (!d) {
      const why = run.served ? "no such game" : `its turns are not in this file (it holds the first ${run.embedded} games by id): python -m runners.view RUN_DIR --serve, or --embed N`;
      return [back, el("h2", {}, `Game ${id}`), el("p", { class: "dim" }, why)];
    }
    if (d.failed) return [back, el("h2", {}, `Game ${id}`), el("p", { class: "wrong" }, "cannot be shown: " + d.failed)];
    const parts = [back, el("h2", {}, `Game ${d.id}: `, el("span", { class: d.outcome === "success" ? "right" : "wrong" }, d.outcome_text)),
      el("div", { class: "cond" }, `${d.condition}  seed=${d.seed}`),
      el("div", { class: "dim seats" }, Object.entries(d.agents).map(([r, p]) => seatText(r, p, (d.humans || {})[r])).join(", "))];
    if (d.error) parts.push(el("div", { class: "wrong strong" }, `error (${d.error.kind}) in ${d.error.actor}: ${d.error.type}: ${d.error.message}`));
    for (const [name, u] of Object.entries(d.usage || {})) {
      parts.push(el("div", { class: "dim" }, `${name}: ${u.calls || 0} calls, ${u.prompt_tokens || 0} prompt + ${u.completion_tokens || 0} reply tokens, ` +
        `${(u.latency || 0).toFixed(2)} s, ${u.cost_usd === null ? "cost unknown" : money(u.cost_usd || 0)}`));
    }
    for (const line of d.header) parts.push(spans(line));
    for (const note of d.notes) parts.push(el("div", { class: "wrong strong" }, note));
    if (d.board) parts.push(board(d.board, "the game at the start"));
    if (d.steps) {
      const roles = Object.keys(d.agents);
      parts.push(el("div", { class: "dim" }, d.detail === "full" ? "full transcript" : "messages kept; views rebuilt from the seed; prompts and raw replies only with --transcripts"));
      const turns = el("div", { id: "turns" }, ...d.steps.map((s) => turnCard(s, roles.length, roles)));
      const o = d.original;
      if (o && o.detail && o.detail.steps) {  // a branch: the game it branches beside it, the point marked
        parts.push(el("div", { class: "strong" }, `branch at ${o.point}: beside it, game ${o.game} of ${o.run} as it was played`));
        const original = el("div", { id: "original" }, el("h3", {}, `game ${o.game}: `,
          el("span", { class: o.detail.outcome === "success" ? "right" : "wrong" }, o.detail.outcome_text)),
          ...o.detail.steps.map((s) => turnCard(s, roles.length, roles)));
        for (const side of [turns, original]) {
          for (const card of side.querySelectorAll("article")) {
            if (card.firstChild.textContent.startsWith(`turn ${o.turn} · ${o.role[0].toUpperCase() + o.role.slice(1)}`)) card.classList.add("branched");
          }
        }
        parts.push(el("div", { class: "beside" }, turns, original));
      } else parts.push(turns);
      if (d.final_board) parts.push(board(d.final_board, "the game at the end"));
    } else parts.push(logTable(d.log));
    return parts;
  }

  async function detail(id) {
    const block = $("g" + id);
    if (block) return JSON.parse(block.textContent);
    if (!run.served) return null;
    const response = await fetch("game/" + id + ".json");
    return response.ok ? response.json() : null;
  }

  async function route() {
    const match = location.hash.match(/^#game=(\d+)$/);
    $("list").hidden = !!match;
    $("game").hidden = !match;
    if (!match) { renderList(); return; }
    const id = +match[1];
    $("game").replaceChildren(...renderGame(id, await detail(id)));
    window.scrollTo(0, 0);
  }

  renderSummary();
  window.addEventListener("hashchange", route);
  route();
  if (run.served && !run.finished) {
    const timer = setInterval(async () => {
      const response = await fetch("run.json");
      if (!response.ok) return;
      run = Object.assign(await response.json(), { served: true, embedded: 0 });
      renderSummary();
      if (!$("list").hidden) renderList();
      if (run.finished) clearInterval(timer);
    }, 3000);
  }
})();
