"""The operator's stop request: set here, or written into a pipe by another process (the
live page's server) and read where the loop asks, once per slow step."""

import os

from rths_ident.hybrid.loop.stop_request import StopRequest


def test_a_request_written_into_the_pipe_is_read_where_the_loop_asks_and_the_first_how_counts():
    read, write = os.pipe()
    stop = StopRequest()
    stop.listen(read)
    assert not stop.is_set() and not stop.is_set()  # nothing written: the loop goes on
    os.write(write, "STOP on the live page".encode())
    assert stop.is_set() and stop.how == "STOP on the live page"
    assert not stop.set("Ctrl-C")  # already asked for: the first one counts
    assert stop.how == "STOP on the live page"
    os.close(write)


def test_a_pipe_whose_writer_has_gone_stops_nothing_and_is_closed():
    read, write = os.pipe()
    stop = StopRequest()
    stop.listen(read)
    os.close(write)  # the page's process ended
    assert not stop.is_set()
    try:
        os.fstat(read)
    except OSError:
        closed = True
    else:
        closed = False
    assert closed and not stop.is_set()
    assert stop.set("Ctrl-C") and stop.is_set() and stop.how == "Ctrl-C"
