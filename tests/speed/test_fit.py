"""``rths-ident bench --only fit``: the report's lines from figures written out by hand
(first call 41.26 s printed as 41.3, the min 18.04 s as 18.0, the median 19.96 s as 20.0),
and the fit's options against the command's own parser."""

from rths_ident.speed import fit


def test_the_report_gives_the_first_call_the_repeats_and_the_fit():
    figures = {"method": "nls", "options": {"seed": 0, "free_A": False, "global_generations": 40}, "cases": [
        {"test": "kunnath", "model": "asymmetric-boucwen", "n_samples": 1321, "repeats": 2, "first_s": 41.26,
         "first_cpu_s": 30.0, "wall_min_s": 18.04, "wall_median_s": 19.96, "cpu_min_s": 12.34, "cpu_median_s": 13.0,
         "nrmse_rms_percent": 10.21, "fitted_model": "asymmetric-boucwen"},
        {"test": "gill", "model": "auto", "n_samples": 800, "repeats": 2, "first_s": 250.0, "first_cpu_s": 150.0,
         "wall_min_s": 120.0, "wall_median_s": 121.0, "cpu_min_s": 80.0, "cpu_median_s": 81.0,
         "nrmse_rms_percent": 11.96, "fitted_model": "asymmetric-boucwen"}]}
    assert fit.report(figures) == [
        "fit --dataset NAME (nls, seed 0, 40 global generations):  first call s   min s  median s   cpu min s"
        "   rms/rms %",
        "  kunnath --model asymmetric-boucwen         41.3    18.0      20.0        12.3        10.2  "
        "(1321 samples, 2 repeats)",
        "  gill --model auto                         250.0   120.0     121.0        80.0        12.0  "
        "(800 samples, 2 repeats; chose asymmetric-boucwen)"]


def test_the_bench_fits_with_the_options_the_fit_command_parses_by_default():
    from rths_ident.cli import build_parser

    args = build_parser("fit").parse_args(["fit", "--dataset", "kunnath", "--model", fit.MODEL])
    assert fit.COMMAND_DEFAULTS["seed"] == args.seed and fit.COMMAND_DEFAULTS["free_A"] == args.free_A
    assert args.method == "nls" and args.form == "auto"
    # --global-generations has no parser default: run_fit sets 40 for nls (its help says "default 40")
    assert args.global_generations is None and fit.COMMAND_DEFAULTS["global_generations"] == 40
