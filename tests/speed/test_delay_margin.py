"""``rths-ident bench --only margin``: the report's lines from the figures (written out by
hand: 66 ms one by one over 20 ms per twin in a batch of 8 is 3.30×)."""

from rths_ident.speed import delay_margin


def test_the_report_gives_the_check_and_the_batch_against_one_by_one():
    figures = {"lugre-frame": {"check_first_s": 21.2, "check_min_s": 4.21, "check_median_s": 4.5, "window_s": 10.0,
                               "twin_one_s_min": 0.066, "twin_one_s_median": 0.066,
                               "twin_in_batch_of_8_s_min": 0.020, "twin_in_batch_of_8_s_median": 0.028}}
    assert delay_margin.report(figures) == [
        "lugre-frame check --predict (twin + delay margin): first call 21.2 s, then min 4.2 s (median 4.5)",
        "  margin twin (10 s): one per call 66 ms (median 66), in a vmap batch of 8 20 ms per twin (median 28) "
        "→ 3.30× one by one"]
