"""Bayesian posterior of a model's parameters through the simulated force (NumPyro NUTS).

Model (normalised units of :mod:`.fit_data`)::

    q_i ~ Uniform(lower_i, upper_i)          each fitted coordinate (log or plain) in its
                                             physical box (:mod:`.model_specs`): a flat,
                                             weakly-informative prior — log-uniform for
                                             stiffnesses/forces, uniform for ratios
    σ   ~ HalfNormal(0.1)                    noise standard deviation, in units of max|F|
    F̃_k ~ Normal(F̃_model(q)_k, σ)           independent Gaussian force noise

F̃_model is the models' own ``step`` scanned over the record (one implementation). NUTS
(NumPyro) samples the unconstrained transform of q; chains start at the NLS optimum
(``fit_nls`` with a few starts) jittered slightly, so warm-up is short. Summary and
diagnostics come from ArviZ (``az.summary``: mean, sd, 94 % HDI ``hdi_3%``/``hdi_97%``,
``r_hat``, ``ess_bulk``), computed on the physical (SI) parameter values.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.fit_data import FitData
from rths_ident.estimators.offline.model_specs import model_spec
from rths_ident.estimators.offline.nonlinear_least_squares import fit_nls, result_from_coordinates
from rths_ident.estimators.offline.result import FitResult
from rths_ident.estimators.offline.simulation import normalised_record, simulate_normalised

__all__ = ["fit_bayes", "POSTERIOR_COLUMNS"]

#: the ArviZ summary columns reported per parameter
POSTERIOR_COLUMNS = ("mean", "sd", "hdi_3%", "hdi_97%", "r_hat", "ess_bulk")


def fit_bayes(
    data: FitData,
    model: str,
    *,
    draws: int = 300,
    warmup: int = 300,
    chains: int = 2,
    seed: int = 0,
    free_A: bool = False,
    substeps: int | None = None,
    fixed: dict[str, float] | None = None,
    n_starts: int = 2,
    form: str = "auto",
    progress: Callable[[str], None] | None = None,
    progress_bar: bool = False,
    max_tree_depth: int = 8,
) -> FitResult:
    """Posterior of ``model``'s parameters given ``data`` (module docstring).

    ``posterior`` holds the ArviZ summary of every estimated parameter in SI (plus
    ``noise_std`` [N]); ``params`` and the fitted force are the parameters at the
    posterior mean of the fitted coordinates (a consistent set; see the code comment);
    ``inference_data`` (ArviZ, not in JSON) serves the trace and pair plots.
    """
    for name, value, low in (("draws", draws, 1), ("warmup", warmup, 1), ("chains", chains, 1)):
        if int(value) != value or value < low:
            raise ParameterError(f"{name} must be an integer ≥ {low}; got {value!r}")
    from rths_ident.estimators.offline._arviz import import_arviz

    az = import_arviz()
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS, init_to_value

    if progress is not None:
        progress(f"{model} bayes: NLS start point ({n_starts} starts)")
    start = fit_nls(data, model, n_starts=n_starts, n_screen=32, seed=seed, free_A=free_A, substeps=substeps,
                    fixed=fixed, form=form)
    # the pinching model: sample the form the NLS stage chose (its other coordinates held)
    spec = model_spec(model, data, free_A=free_A, substeps=substeps, fixed=fixed, form=start.details.get("form"))
    record = normalised_record(data)
    measured = record[3]
    lower, upper = spec.bounds()
    names = [p.name for p in spec.free]
    scales = data.scales()
    start_fields = spec.to_normalised(start.params, scales)
    start_coordinates = spec.coordinates_of(start_fields)  # e.g. γ/β from γ and β
    q_start = [p.to_coordinate(start_coordinates[p.name]) for p in spec.free]
    # keep the start strictly inside the box (the prior's support)
    width = upper - lower
    q_start = np.clip(np.array(q_start), lower + 1e-3 * width, upper - 1e-3 * width)
    residual_std = float(np.std(np.asarray(simulate_normalised(spec, jnp.asarray(q_start), record)) - np.asarray(measured)))

    def probabilistic_model():
        q = jnp.stack([numpyro.sample(n, dist.Uniform(lo, hi)) for n, lo, hi in zip(names, lower, upper)])
        noise = numpyro.sample("noise_std", dist.HalfNormal(0.1))
        predicted = simulate_normalised(spec, q, record)
        numpyro.sample("force", dist.Normal(predicted, noise), obs=measured)

    init_values = {n: float(v) for n, v in zip(names, q_start)}
    init_values["noise_std"] = max(residual_std, 1e-6)
    # dense mass matrix: the parameters of hysteresis models are strongly correlated
    # (e.g. Bouc–Wen β, γ, n), and a diagonal metric then needs very long trajectories
    kernel = NUTS(probabilistic_model, init_strategy=init_to_value(values=init_values), target_accept_prob=0.85,
                  dense_mass=True, max_tree_depth=max_tree_depth)
    mcmc = MCMC(kernel, num_warmup=int(warmup), num_samples=int(draws), num_chains=int(chains),
                chain_method="sequential", progress_bar=progress_bar)
    if progress is not None:
        progress(f"{model} bayes: NUTS {chains} chain(s) × ({warmup} warm-up + {draws} draws)")
    mcmc.run(jax.random.PRNGKey(seed))
    samples = mcmc.get_samples(group_by_chain=True)  # name -> (chains, draws)
    q_samples = jnp.stack([samples[n] for n in names], axis=-1)  # (chains, draws, p)

    fields_of = jax.vmap(jax.vmap(spec.fields))
    normalised_fields = {k: np.asarray(v) for k, v in fields_of(q_samples).items()}
    physical = {}
    for name, values in normalised_fields.items():
        if name in spec.held:
            continue
        a, b, c = spec.dimensions[name]
        if b == "-n":
            b = -normalised_fields["n"]
        physical[name] = values * scales.force**a * scales.displacement**b * scales.time**c
    physical["noise_std"] = np.asarray(samples["noise_std"]) * scales.force
    idata = az.from_dict(posterior=physical)
    summary = az.summary(idata, hdi_prob=0.94, round_to="none")
    posterior = {
        name: {column: float(summary.loc[name, column]) for column in POSTERIOR_COLUMNS}
        for name in physical
    }
    divergences = int(np.sum(np.asarray(mcmc.get_extra_fields()["diverging"])))
    # point estimate: the parameters at the posterior mean of the fitted coordinates (log
    # coordinates for scale parameters, i.e. their posterior geometric mean). Unlike the
    # per-parameter means of the summary it is one consistent parameter set (the SI value
    # of Bouc–Wen β depends on n, so averaging β across draws with different n is not).
    q_mean = np.asarray(jnp.mean(q_samples.reshape(-1, len(names)), axis=0))
    details = {"draws": draws, "warmup": warmup, "chains": chains, "divergences": divergences,
               "nls_start_nrmse_percent": start.nrmse_percent, "nls_start_params": dict(start.params),
               "point_estimate": "parameters at the posterior mean of the fitted (log/bounded) coordinates"}
    if start.details.get("form") is not None:  # the form sampled (the bound check reads it)
        details["form"] = start.details["form"]
    result = result_from_coordinates(spec, data, q_mean, "bayes", record=record, posterior=posterior, details=details)
    result.inference_data = idata
    return result
