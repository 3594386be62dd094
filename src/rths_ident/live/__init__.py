"""The live page of a run: watch a hybrid test as it runs, and stop it from the browser.

``rths-ident run TEST --live`` (and ``show RECORD --live``, a replay) serves the page;
docs/live.md says what it shows and how it is built. Imported only with ``--live``:
a run without it pays nothing for it.

* :mod:`.page_process` — the page served by a process of its own, and the run's handle on it;
* :mod:`.channel` — the run's subscriber: each event one frame, one non-blocking write
  to the page's process (drops step frames rather than wait);
* :mod:`.model_loop` — the identified model's loop, computed in the run's process off the loop's thread;
* :mod:`.feed` — in the page's process, the events waiting for the server's thread;
* :mod:`.state` — the events turned into series and a status (the server's thread);
* :mod:`.server` — Tornado: the page, its files and a WebSocket per tab, on its own thread;
* :mod:`.replay` — a test record's steps as events again, at 1×, 10× or as fast as possible.
"""
