"""``python -m runners.play``: a person plays a seat of a game in the browser, at a page served on
127.0.0.1 (two people: two seats, two pages; a study: a list of games in a row for one
participant). The run directory is a normal run's: reports, the viewer and ``--resume`` read it.

- ``cli``: the command line and the run's plan;
- ``run``: the pages served and the games played on one event loop;
- ``seats``: the front end each seat's page plays through (``engine.policies.seat.FrontEnd``);
- ``server``: the aiohttp application; ``page``, ``play.js``, ``play.css``: the page.
"""
