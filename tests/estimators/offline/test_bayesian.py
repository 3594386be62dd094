"""NUTS posterior on a small LuGre problem: truth within 2 posterior sd, r_hat < 1.05."""

import numpy as np
import pytest

from rths_ident.estimators.offline import FitData, fit_bayes
from rths_ident.estimators.offline.report import plot_posterior

from offline_synthetic import growing_triangle_wave, lugre_closed_form

TRUTH = {"sigma0": 2.0e6, "Fc": 2.0e4, "sigma3": 1.0e5}


@pytest.mark.slow
def test_lugre_posterior_covers_the_truth(rng, tmp_path):
    x = growing_triangle_wave(150, 0.05, cycles=2)
    clean = lugre_closed_form(x, **TRUTH)  # independent closed form (seed 001 Eq. 2.10)
    noise_std = 0.02 * np.max(np.abs(clean))
    data = FitData.from_arrays(x, clean + noise_std * rng.normal(size=x.size), source="synthetic")
    result = fit_bayes(data, "lugre", draws=200, warmup=200, chains=2, seed=1)
    for name, value in TRUTH.items():
        post = result.posterior[name]
        assert abs(post["mean"] - value) < 2.0 * post["sd"], (name, post)
        assert post["r_hat"] < 1.05, (name, post)
        assert post["ess_bulk"] > 50
        assert post["hdi_3%"] < post["mean"] < post["hdi_97%"]
    # the noise level is identified too (in N)
    assert result.posterior["noise_std"]["mean"] == pytest.approx(noise_std, rel=0.2)
    assert set(result.to_json_dict()["posterior"]) >= set(TRUTH)
    # trace and pair plots (what --plot writes for bayes)
    plot_posterior(result, tmp_path / "trace.png", tmp_path / "pair.png")
    for name in ("trace.png", "pair.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
