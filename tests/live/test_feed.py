"""The loop's side of the live page: a bounded queue that drops the oldest events."""

from rths_ident.live.feed import LiveFeed
from rths_ident.runner.events import StepDone, TestStarted


def test_a_feed_nobody_drains_keeps_the_newest_events_and_the_description():
    feed = LiveFeed(capacity=100)
    started = TestStarted("t", {"steps": 1000})
    feed(started)
    for k in range(1000):
        feed(StepDone(k, 1000))
    assert len(feed) == 100
    taken = feed.drain()
    assert [e.step for _, e in taken] == list(range(900, 1000))
    assert feed.started[1] is started and feed.drain() == []
