"""``rths-ident bench`` refuses bad options in one line, before any figure."""

from rths_ident.cli import main


def test_zero_repeats_are_refused_before_the_fit_figure(capsys):
    assert main(["bench", "--only", "fit", "--repeats", "0"]) == 1
    err = capsys.readouterr().err
    assert "--repeats = 0: expected an integer ≥ 1" in err and err.count("\n") == 1


def test_fit_is_a_figure_of_the_bench():
    from rths_ident.cli.bench import FIGURES

    assert "fit" in FIGURES
