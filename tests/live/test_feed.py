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


def test_an_armed_feed_wakes_the_server_once_and_at_once_when_events_wait():
    feed, woken = LiveFeed(capacity=10), []
    feed.arm(lambda: woken.append("wake"))
    feed(StepDone(0, 3))
    feed(StepDone(1, 3))
    assert woken == ["wake"]  # once per arming, whatever the loop's rate
    feed.arm(lambda: woken.append("again"))  # events wait (not drained): woken now
    assert woken == ["wake", "again"]
    feed.drain()
    feed.arm(lambda: woken.append("later"))
    assert woken == ["wake", "again"]
    feed(StepDone(2, 3))
    assert woken == ["wake", "again", "later"]
