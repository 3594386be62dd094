"""The live page of a run: watch a hybrid test as it runs, and stop it from the browser.

``rths-ident run TEST --live`` (and ``show RECORD --live``, a replay) serves the page;
docs/live.md says what it shows and how it is built. Imported only with ``--live``:
a run without it pays nothing for it.

* :mod:`.feed` — the run's subscriber on the loop's thread (appends, never blocks);
* :mod:`.state` — the events turned into series and a status (the server's thread);
* :mod:`.server` — Tornado: the page, its files and a WebSocket per tab, on its own thread;
* :mod:`.replay` — a test record's steps as events again, at 1×, 10× or as fast as possible.
"""
