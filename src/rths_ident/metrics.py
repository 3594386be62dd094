"""Performance indices of a real-time hybrid simulation and of an online identification.

NumPy only. Signals are 1-D arrays sampled at the fast rate ``fs`` [Hz] unless said
otherwise; percentages are returned as numbers in % (not fractions).

Sources and what is defined where
---------------------------------
* Seed 000 Table 4.1 (digest 000 §10) and digest 003 §9 define **J2** (normalised RMS
  tracking error), **J4** (normalised RMS error against the reference structure),
  **τ** (delay at the equivalent frequency, Guo et al. 2014) and **MT** (missed
  ticks). The repository's ``Output.m`` (digest 000 §12.4) adds the delay alignment of
  J4 and **J4,Force**. Those two sources define no J1, J3, J5–J10.
* Digest 004 §6 (the maRTHS benchmark, Condori Uribe et al. 2023, Eqs. 9–18) defines
  a full **J1–J10** set. Its J4 is a *delay* (of the estimated response), not the
  thesis' global error: here the thesis index is :func:`j4_global_error` and the
  benchmark set is :func:`marths_indices` (keys ``"J1"``…``"J10"``).
* Digest 001 §4.5 (Eqs. 4.18–4.20): parameter errors E_σ0, E_FC, E_σ3
  (:func:`parameter_error_percent`).
* Convergence time and missed-deadline statistics are this library's definitions
  (stated in the docstrings).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = [
    "nrms_error_percent",
    "peak_error_percent",
    "j2_tracking_error",
    "j2_measured_at_step_start",
    "FrequencyEvaluation",
    "frequency_evaluation_index",
    "fei_delay",
    "cross_correlation_delay",
    "delay_alignment_shift",
    "j4_global_error",
    "thesis_indices",
    "marths_indices",
    "parameter_error_percent",
    "convergence_time",
    "missed_deadline_stats",
    "missed_tick_summary",
    "command_smoothness",
]


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def _signal(name: str, values, ndim: int | tuple = 1) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if a.ndim not in allowed:
        raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimension(s); got shape {a.shape}")
    if a.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 samples; got {a.shape[0]}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    return a


def _same_shape(name_a, a, name_b, b):
    if a.shape != b.shape:
        raise ValueError(f"{name_a} and {name_b} must have the same shape; got {a.shape} and {b.shape}")


def _positive(name, value):
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")


def nrms_error_percent(reference, signal, convention: str = "rms") -> np.ndarray | float:
    """Normalised RMS error ``sqrt(Σ(s − r)² / Σ r²)·100`` [%] along axis 0.

    ``convention="std"`` uses ``std(s − r)/std(r)·100`` instead (mean removed), as the
    maRTHS official scorer ``S5_Evaluation.m`` does (digest 004 §6). For zero-mean
    signals the two agree.
    """
    r = _signal("reference", reference, (1, 2))
    s = _signal("signal", signal, (1, 2))
    _same_shape("reference", r, "signal", s)
    if convention == "rms":
        num, den = np.sqrt(np.mean((s - r) ** 2, axis=0)), np.sqrt(np.mean(r**2, axis=0))
    elif convention == "std":
        num, den = np.std(s - r, axis=0), np.std(r, axis=0)
    else:
        raise ValueError(f"convention must be 'rms' or 'std'; got {convention!r}")
    if np.any(den == 0):
        raise ValueError("the reference signal is identically zero (or constant for 'std'): "
                         "the normalised error is undefined")
    out = num / den * 100.0
    return float(out) if np.ndim(out) == 0 else out


def peak_error_percent(reference, signal) -> np.ndarray | float:
    """``max|s − r| / max|r| · 100`` [%] along axis 0 (digest 004 Eqs. 11, 14, 17, 18)."""
    r = _signal("reference", reference, (1, 2))
    s = _signal("signal", signal, (1, 2))
    _same_shape("reference", r, "signal", s)
    den = np.max(np.abs(r), axis=0)
    if np.any(den == 0):
        raise ValueError("the reference signal is identically zero: the peak error is undefined")
    out = np.max(np.abs(s - r), axis=0) / den * 100.0
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------------------------------
# Table 4.1 (seed 000) / Table 2 (digest 003)
# --------------------------------------------------------------------------------------
def j2_tracking_error(target, measured) -> float:
    """J2 = sqrt( Σ_i [x_m(i) − x_t(i)]² / Σ_i x_t(i)² ) · 100 [%]  (Table 4.1).

    Identical to the repository's ``rms(x_t − x_m)/rms(x_t)*100``.
    """
    return nrms_error_percent(_signal("target", target), _signal("measured", measured))


def j2_measured_at_step_start(target, measured_at_step_end) -> float:
    """J2 [%] (Table 4.1) with x_m(i) sampled at the *start* of fast step i, from a log
    whose ``measured_at_step_end[i]`` is the displacement at the *end* of step i.

    The fast side here logs, beside the target x_t(i) of step i, the displacement at the
    end of that step (the response to the command issued with x_t(i)). A Simulink model
    samples the output of a continuous block at the step's start t_i instead, before the
    step's command has acted: there x_m(i) = x(t_i) is the end of step i − 1. This pairs
    ``target[1:]`` with ``measured_at_step_end[:-1]`` (the first sample, without a
    predecessor, is dropped) and applies :func:`j2_tracking_error`.
    """
    target = _signal("target", target)
    measured = _signal("measured_at_step_end", measured_at_step_end)
    _same_shape("target", target, "measured_at_step_end", measured)
    if target.size < 2:
        raise ValueError(f"target: at least 2 samples needed to pair x_t(i) with x_m(i − 1); got {target.size}")
    return j2_tracking_error(target[1:], measured[:-1])


class FrequencyEvaluation(NamedTuple):
    """Result of the frequency evaluation index (Guo et al. 2014)."""

    amplitude: float  # A = |FEI| [-]
    phase: float  # φ0 = atan(Im FEI / Re FEI) [rad]
    equivalent_frequency: float  # f_eq [Hz]
    delay: float  # τ = −φ0 / (2π f_eq) [s]; positive = output lags input


def frequency_evaluation_index(input_signal, output_signal, fs: float, exponent: float = 2.0) -> FrequencyEvaluation:
    """Frequency evaluation index and delay τ of ``output`` w.r.t. ``input``
    (Table 4.1: τ = −φ0/(2π f_eq); algorithm of ``Freq_Resp_Tong.m``, digest 000 §12.4).

    1. FI = FFT(input), FO = FFT(output); keep bins 0…ceil(L/2)−1 and double the
       interior ones (all but the first and last kept bin);
    2. f_k = fs·k/L; weights w_k = |FI_k|^l with l = ``exponent`` (2);
    3. f_eq = Σ w_k f_k / Σ w_k;
    4. FEI = Σ_k FO_k |FI_k|^l / FI_k / Σ_k |FI_k|^l;
    5. A = |FEI|, φ0 = atan(Im FEI / Re FEI) — ``atan``, not ``atan2``, as in the source,
       so |φ0| < π/2 and delays beyond a quarter period of f_eq fold;
    6. τ = −φ0/(2π f_eq).

    Bins with FI_k = 0 contribute 0 (MATLAB would give NaN there). Multiply τ by 1000
    for ms. For a pure delay of d samples of a periodic signal, τ = d/fs.
    """
    x = _signal("input_signal", input_signal)
    y = _signal("output_signal", output_signal)
    _same_shape("input_signal", x, "output_signal", y)
    _positive("fs", fs)
    length = x.size
    kept = int(math.ceil(length / 2))
    fi = np.fft.fft(x)[:kept]
    fo = np.fft.fft(y)[:kept]
    fi[1:-1] *= 2.0
    fo[1:-1] *= 2.0
    freqs = fs * np.arange(kept) / length
    weights = np.abs(fi) ** exponent
    total = np.sum(weights)
    if total == 0:
        raise ValueError("input_signal is identically zero: the FEI is undefined")
    f_eq = float(np.sum(weights * freqs) / total)
    if f_eq == 0:
        raise ValueError("input_signal has only a DC component: f_eq = 0, the delay is undefined")
    nonzero = fi != 0
    terms = np.zeros(kept, dtype=complex)
    terms[nonzero] = fo[nonzero] * weights[nonzero] / fi[nonzero]
    fei = np.sum(terms) / total
    amplitude = float(abs(fei))
    phase = float(np.arctan(fei.imag / fei.real)) if fei.real != 0 else math.copysign(math.pi / 2, fei.imag)
    delay = -phase / (2.0 * math.pi * f_eq)
    return FrequencyEvaluation(amplitude, phase, f_eq, delay)


def fei_delay(target, measured, fs: float) -> float:
    """τ [s] of ``measured`` w.r.t. ``target`` by :func:`frequency_evaluation_index`."""
    return frequency_evaluation_index(target, measured, fs).delay


def cross_correlation_delay(target, measured, max_lag: int | None = None) -> int:
    """Delay [samples] of ``measured`` w.r.t. ``target``: the lag r maximising
    ``Σ_k target[k] · measured[k + r]`` (digest 004 Eq. 9; positive = measured lags,
    the convention of MATLAB ``finddelay(target, measured)``). Ties go to the smallest
    |r|. Computed by FFT (O(N log N)); ``max_lag`` bounds |r| (default N − 1).
    """
    x = _signal("target", target)
    y = _signal("measured", measured)
    _same_shape("target", x, "measured", y)
    n = x.size
    max_lag = n - 1 if max_lag is None else int(max_lag)
    if not 0 <= max_lag <= n - 1:
        raise ValueError(f"max_lag must be in [0, {n - 1}]; got {max_lag}")
    size = 1 << int(math.ceil(math.log2(2 * n)))
    corr = np.fft.irfft(np.fft.rfft(y, size) * np.conj(np.fft.rfft(x, size)), size)
    lags = np.concatenate([np.arange(0, max_lag + 1), np.arange(-max_lag, 0)])
    values = corr[lags % size]
    best = np.max(values)
    tol = 1e-12 * max(abs(best), np.max(np.abs(values)))
    candidates = lags[values >= best - tol]
    return int(candidates[np.argmin(np.abs(candidates))])


def delay_alignment_shift(reference, measured, fs: float, method: str = "fei",
                          delay_rounding: float | None = 0.01) -> int:
    """Signed shift [samples] used to align ``reference`` and ``measured`` before J4.

    Positive = the measured signal lags the reference (compare ``reference[k]`` with
    ``measured[k + shift]``).

    * ``"fei"``: τ = :func:`fei_delay`(reference, measured), rounded to a multiple of
      ``delay_rounding`` seconds (0.01 s, as ``round(δ, 2)`` in ``Output.m``; ``None``
      rounds to the nearest sample), times fs;
    * ``"output_m"``: as ``Output.m`` literally: ``−|round(δ, 2)·fs|`` (it always
      shifts the reference forward, i.e. treats the measured signal as *leading*; only
      right when it does);
    * ``"xcorr"``: :func:`cross_correlation_delay`(reference, measured);
    * ``"none"``: 0.
    """
    _positive("fs", fs)
    if method == "none":
        return 0
    if method == "xcorr":
        return cross_correlation_delay(reference, measured)
    if method not in ("fei", "output_m"):
        raise ValueError(f"method must be 'none', 'fei', 'output_m' or 'xcorr'; got {method!r}")
    delay = fei_delay(reference, measured, fs)
    if delay_rounding is not None:
        _positive("delay_rounding", delay_rounding)
        delay = round(delay / delay_rounding) * delay_rounding
    shift = int(round(delay * fs))
    return -abs(shift) if method == "output_m" else shift


def j4_global_error(reference, measured, shift: int = 0) -> float:
    """J4 = sqrt( Σ_i [x_m(i) − x_ref(i)]² / Σ_i x_ref(i)² ) · 100 [%]  (Table 4.1),
    after aligning by ``shift`` samples (see :func:`delay_alignment_shift`):

    * shift ≥ 0: ``x_ref[0 : N−shift]`` against ``x_m[shift : N]``;
    * shift < 0: ``x_ref[|shift| : N]`` against ``x_m[0 : N−|shift|]`` (``Output.m``:
      ``Referencia(aux:end)`` vs ``x_m(1:end−(aux−1))`` with ``aux = |shift| + 1``).

    ``shift = 0`` is the formula as printed. The same function gives J4,Force with
    restoring forces (``Output.m`` applies the displacement shift to the forces).
    """
    r = _signal("reference", reference)
    m = _signal("measured", measured)
    _same_shape("reference", r, "measured", m)
    shift = int(shift)
    if abs(shift) >= r.size - 1:
        raise ValueError(f"shift = {shift} leaves fewer than 2 overlapping samples of {r.size}")
    if shift >= 0:
        r, m = r[: r.size - shift], m[shift:]
    else:
        r, m = r[-shift:], m[: m.size + shift]
    return nrms_error_percent(r, m)


def thesis_indices(target, measured, fs: float, reference=None, restoring_force=None,
                   reference_restoring_force=None, alignment: str = "fei",
                   delay_rounding: float | None = 0.01) -> dict:
    """The indices of the thesis results tables (seed 000 Tables 4.8–4.15).

    Returns ``{"J2": %, "delay_ms": τ_FEI(target, measured)·1000}`` and, with a
    ``reference`` displacement, ``"J4_disp"`` (and ``"J4_force"`` when both restoring
    forces are given), aligned by :func:`delay_alignment_shift`(reference, measured,
    fs, alignment, delay_rounding) — one shift for both, as in ``Output.m``.
    """
    out = {"J2": j2_tracking_error(target, measured), "delay_ms": fei_delay(target, measured, fs) * 1000.0}
    if reference is not None:
        shift = delay_alignment_shift(reference, measured, fs, alignment, delay_rounding)
        out["alignment_shift"] = shift
        out["J4_disp"] = j4_global_error(reference, measured, shift)
        if restoring_force is not None and reference_restoring_force is not None:
            out["J4_force"] = j4_global_error(reference_restoring_force, restoring_force, shift)
    return out


# --------------------------------------------------------------------------------------
# maRTHS benchmark J1–J10 (digest 004 §6, Eqs. 9–18)
# --------------------------------------------------------------------------------------
def marths_indices(
    fs: float,
    actuator_target,
    actuator_measured,
    interface_target,
    interface_estimated,
    interface_reference,
    upper_numerical,
    upper_reference,
    actuator_estimated=None,
    nrms: str = "rms",
    j4_source: str = "estimated",
) -> dict:
    """J1–J10 of the maRTHS benchmark (digest 004, Eqs. 9–18). Arrays are (N,) or
    (N, channels); every index is returned per channel.

    Tracking and estimation (η: actuator strokes, ψ: frame DOFs; ns = numerical target,
    m = measured, hat = estimated, no subscript = reference structure)::

        J1  = argmax_r Σ_k η_ns[k] η_m[k+r] · 1000/fs                     [ms]  (9)
        J2  = sqrt(Σ (η_m − η_ns)² / Σ η_ns²) · 100                       [%]   (10)
        J3  = max|η_m − η_ns| / max|η_ns| · 100                           [%]   (11)
        J4  = argmax_r Σ_k η_ns[k] η̂_m[k+r] · 1000/fs                    [ms]  (12)
        J5  = sqrt(Σ (ψ̂_m − ψ_ns)² / Σ ψ_ns²) · 100   (interface)         [%]   (13)
        J6  = max|ψ̂_m − ψ_ns| / max|ψ_ns| · 100                           [%]   (14)

    Global performance against the reference structure::

        J7  = sqrt(Σ (ψ̂_m − ψ)² / Σ ψ²) · 100          (interface)        [%]   (15)
        J8  = sqrt(Σ (ψ_ns − ψ)² / Σ ψ²) · 100          (upper stories)    [%]   (16)
        J9  = max|ψ̂_m − ψ| / max|ψ| · 100               (interface)        [%]   (17)
        J10 = max|ψ_ns − ψ| / max|ψ| · 100              (upper stories)    [%]   (18)

    ``nrms="std"`` reproduces the official scorer (mean-removed J2, J5, J7, J8);
    ``j4_source="measured"`` its use of η_m instead of η̂_m in J4 (digest 004 §6, flag).
    Delays: positive = measured lags (``finddelay`` convention).
    """
    _positive("fs", fs)

    def cols(name, a):
        a = _signal(name, a, (1, 2))
        return a[:, None] if a.ndim == 1 else a

    eta_ns, eta_m = cols("actuator_target", actuator_target), cols("actuator_measured", actuator_measured)
    _same_shape("actuator_target", eta_ns, "actuator_measured", eta_m)
    if j4_source == "estimated":
        if actuator_estimated is None:
            raise ValueError("j4_source='estimated' needs actuator_estimated (η̂_m)")
        eta_j4 = cols("actuator_estimated", actuator_estimated)
    elif j4_source == "measured":
        eta_j4 = eta_m
    else:
        raise ValueError(f"j4_source must be 'estimated' or 'measured'; got {j4_source!r}")
    _same_shape("actuator_target", eta_ns, "η for J4", eta_j4)
    psi_ns, psi_hat = cols("interface_target", interface_target), cols("interface_estimated", interface_estimated)
    psi_ref = cols("interface_reference", interface_reference)
    _same_shape("interface_target", psi_ns, "interface_estimated", psi_hat)
    _same_shape("interface_target", psi_ns, "interface_reference", psi_ref)
    up_ns, up_ref = cols("upper_numerical", upper_numerical), cols("upper_reference", upper_reference)
    _same_shape("upper_numerical", up_ns, "upper_reference", up_ref)

    def delays(a, b):
        return np.array([cross_correlation_delay(a[:, i], b[:, i]) * 1000.0 / fs for i in range(a.shape[1])])

    def as_array(v):
        return np.atleast_1d(np.asarray(v, dtype=float))

    return {
        "J1": delays(eta_ns, eta_m),
        "J2": as_array(nrms_error_percent(eta_ns, eta_m, nrms)),
        "J3": as_array(peak_error_percent(eta_ns, eta_m)),
        "J4": delays(eta_ns, eta_j4),
        "J5": as_array(nrms_error_percent(psi_ns, psi_hat, nrms)),
        "J6": as_array(peak_error_percent(psi_ns, psi_hat)),
        "J7": as_array(nrms_error_percent(psi_ref, psi_hat, nrms)),
        "J8": as_array(nrms_error_percent(up_ref, up_ns, nrms)),
        "J9": as_array(peak_error_percent(psi_ref, psi_hat)),
        "J10": as_array(peak_error_percent(up_ref, up_ns)),
    }


# --------------------------------------------------------------------------------------
# Identification: parameter errors and convergence time
# --------------------------------------------------------------------------------------
def parameter_error_percent(true_value, estimates) -> np.ndarray | float:
    """E_p = ||p − p̂|| / ||p|| · 100 [%] over the whole history (digest 001 Eqs.
    4.18–4.20: E_σ0, E_FC, E_σ3), 2-norm (the source leaves the norm unstated)::

        E_p = sqrt( Σ_k (p − p̂_k)² ) / sqrt( Σ_k p² ) · 100 = rms_k(p̂_k − p) / |p| · 100

    ``true_value``: scalar or (n_params,); ``estimates``: (N,) or (N, n_params).
    Returns one error per parameter.
    """
    p = np.asarray(true_value, dtype=float)
    est = _signal("estimates", estimates, (1, 2))
    if est.ndim == 1:
        if p.ndim != 0:
            raise ValueError(f"estimates of shape {est.shape} need a scalar true_value; got shape {p.shape}")
    elif p.shape != (est.shape[1],):
        raise ValueError(f"true_value must have shape ({est.shape[1]},) for estimates {est.shape}; got {p.shape}")
    if np.any(p == 0) or not np.all(np.isfinite(p)):
        raise ValueError(f"true_value must be finite and non-zero (relative error); got {true_value!r}")
    return nrms_error_percent(np.broadcast_to(p, est.shape), est)


def convergence_time(times, estimates, true_value, tol: float = 0.05) -> float:
    """First time t_c after which every parameter stays within ``tol`` of its true
    value: ``|p̂_i(t)/p_i − 1| < tol`` for all t ≥ t_c and all i.

    Returns ``times[0]`` if the estimates start (and stay) inside, and ``inf`` if the
    last sample is outside (not converged by the end of the record).
    """
    t = _signal("times", times)
    est = _signal("estimates", estimates, (1, 2))
    if est.shape[0] != t.size:
        raise ValueError(f"estimates must have {t.size} rows (one per time); got {est.shape}")
    _positive("tol", tol)
    p = np.asarray(true_value, dtype=float)
    if np.any(p == 0):
        raise ValueError("true_value must be non-zero (relative tolerance)")
    ratio = est / p if est.ndim == 2 else (est / p)[:, None]
    inside = np.all(np.abs(ratio - 1.0) < tol, axis=1)
    outside = np.flatnonzero(~inside)
    if outside.size == 0:
        return float(t[0])
    last_out = int(outside[-1])
    if last_out == t.size - 1:
        return math.inf
    return float(t[last_out + 1])


# --------------------------------------------------------------------------------------
# Real-time deadlines (MT, Table 4.1)
# --------------------------------------------------------------------------------------
def missed_deadline_stats(step_durations, period: float, startup_time: float = 4.0) -> dict:
    """Missed deadlines of a paced loop from its per-tick durations [s].

    A tick i (nominal start ``i·period``) misses its deadline when its duration exceeds
    ``period`` — the analogue of a Simulink Desktop Real-Time missed tick (Table 4.1
    "MT"). Returns ``missed`` (count), ``missed_after_startup`` (ticks starting at or
    after ``startup_time``; the thesis/paper report t > 4 s), ``fraction``,
    ``max_overrun`` [s] (largest duration − period, 0 if none), ``median_duration`` [s]
    and ``missed_history`` (cumulative count per tick, like the SLDRT MT signal).
    """
    d = np.asarray(step_durations, dtype=float).ravel()
    if d.size == 0 or not np.all(np.isfinite(d)) or np.any(d < 0):
        raise ValueError("step_durations must be a non-empty array of finite durations ≥ 0 [s]")
    _positive("period", period)
    missed = d > period
    starts = np.arange(d.size) * period
    return {
        "missed": int(np.sum(missed)),
        "missed_after_startup": int(np.sum(missed & (starts >= startup_time))),
        "fraction": float(np.mean(missed)),
        "max_overrun": float(max(np.max(d - period), 0.0)),
        "median_duration": float(np.median(d)),
        "missed_history": np.cumsum(missed),
    }


def missed_tick_summary(counts_per_run) -> dict:
    """Across repeated runs (the thesis uses 40): ``max`` and ``median`` missed ticks,
    and ``within_limit`` against the experimenter's limit of 500 (digest 000 §9)."""
    c = np.asarray(counts_per_run, dtype=float).ravel()
    if c.size == 0 or np.any(c < 0):
        raise ValueError("counts_per_run must be a non-empty array of counts ≥ 0")
    return {"max": float(np.max(c)), "median": float(np.median(c)), "within_limit": bool(np.max(c) <= 500)}


def command_smoothness(slow_target, command, samples_per_step: int, fast_target=None) -> dict:
    """What a servo-valve receives, against what the numerical substructure asked for.

    ``slow_target``: the interface target u_k the NS sent for each slow step [m] (N,);
    ``command``: the actuator command x_c at every fast sample (N·samples_per_step,) [m];
    ``fast_target`` (optional): the rate transition's output x_t at the same samples.

    * ``command_peak_ratio`` = max|x_c| / max|u_k|;
    * ``command_jump_ratio`` = max|Δx_c| per fast step / (max|Δu_k| / samples_per_step):
      the command's largest jump against the largest the target makes per fast step
      when it is drawn straight from one slow sample to the next (u_0 = 0 at rest);
    * ``command_jump_max_m`` = max|Δx_c| [m]; ``target_jump_ratio``: the same ratio for
      ``fast_target`` (what the rate transition itself adds), when given.

    A non-moving target (max|Δu| = 0) gives ratios of inf when the command moves, 1 when
    it does not.
    """
    u = _signal("slow_target", slow_target)
    x_c = _signal("command", command)
    if int(samples_per_step) != samples_per_step or samples_per_step < 1:
        raise ValueError(f"samples_per_step must be an integer ≥ 1; got {samples_per_step!r}")
    if x_c.size != u.size * int(samples_per_step):
        raise ValueError(f"command has {x_c.size} samples; expected {u.size} slow steps × {samples_per_step}")
    target_step = np.max(np.abs(np.diff(np.concatenate([[0.0], u])))) / samples_per_step
    command_jump = float(np.max(np.abs(np.diff(np.concatenate([[0.0], x_c])))))
    peak = float(np.max(np.abs(u)))

    def ratio(value, reference):
        if reference > 0:
            return float(value / reference)
        return 1.0 if value == 0 else float("inf")

    out = {"command_peak_ratio": ratio(float(np.max(np.abs(x_c))), peak),
           "command_jump_ratio": ratio(command_jump, target_step),
           "command_jump_max_m": command_jump}
    if fast_target is not None:
        x_t = _signal("fast_target", fast_target)
        _same_shape("command", x_c, "fast_target", x_t)
        out["target_jump_ratio"] = ratio(float(np.max(np.abs(np.diff(np.concatenate([[0.0], x_t]))))), target_step)
    return out
