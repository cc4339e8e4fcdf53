"""The seat's one HTML page: a skeleton with the hand-written style and script inlined, so the page
needs nothing but itself (no network, no CDN). The script (``play.js``) fills it from
``/seat/TOKEN/state`` (a study's: ``/p/TOKEN/state``) and writes game text only as text, never as
markup. A study's pages also show its screens between games (``#screen``) and a button to leave."""

from __future__ import annotations

import html
from pathlib import Path

ASSETS = Path(__file__).parent

BODY = """
<header id=top>
  <h1><span id=heading>Seat</span> <span id=role></span></h1>
  <span id=game class=chip></span><span id=turn class=chip></span><span id=clock class=chip></span>
  <span id=status></span>
  <button id=leave type=button hidden>Leave the study</button>
</header>
<section id=screen class=card hidden>
  <h2 id=screen-title></h2>
  <div id=screen-text></div>
  <button id=screen-go type=button class=primary hidden></button>
</section>
<section id=participant class=card hidden>
  <h2>Before the first game</h2>
  <p>Type the participant code you were given (letters, digits, '_', '.', '-'; never your name).</p>
  <input id=participant-id autocomplete=off spellcheck=false> <button id=participant-send>Start</button>
  <p id=participant-error class=error></p>
</section>
<section id=last class=card hidden></section>
<section id=over class=card hidden></section>
<main id=play hidden>
  <div id=view>
    <details id=rules><summary>Rules</summary><pre id=rules-text></pre></details>
    <div id=sections></div>
  </div>
  <div id=side>
    <section id=talk class=card><h2>Conversation</h2><ol id=chat></ol></section>
    <ul id=notices></ul>
    <section id=answer class=card>
      <h2>Your turn</h2>
      <div id=message-box>
        <label for=message>Message</label>
        <span id=to-box hidden><label for=to>to</label> <select id=to></select></span>
        <textarea id=message rows=3></textarea>
      </div>
      <div id=builder>
        <label for=kind>Action</label> <select id=kind></select>
        <p id=form-help class=dim></p>
        <div id=fields></div>
        <button id=add-action type=button>Add action</button> <span id=limit class=dim></span>
        <p id=check-error class=error></p>
      </div>
      <ol id=actions></ol>
      <button id=send type=button class=primary>Send turn</button>
      <p id=send-error class=error></p>
    </section>
  </div>
</main>
"""


def page_html(title: str) -> str:
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1"><link rel=icon href="data:,">'
        f"<title>{html.escape(title)}</title><style>{(ASSETS / 'play.css').read_text()}</style></head>\n"
        f"<body>{BODY}<script>{(ASSETS / 'play.js').read_text()}</script>\n</body></html>\n"
    )
