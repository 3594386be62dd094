"""The lines ``rths-ident run`` prints for a hybrid test (a kind may print its own):
the test, its tracking and response indices, the parameters identified (or used), the
speed, and the pacing statistics of a paced run."""

from __future__ import annotations

from pathlib import Path

__all__ = ["hybrid_test_report", "realtime_lines", "parameter_lines", "mass_text"]


def hybrid_test_report(result: dict) -> str:
    """The report of a frame-like hybrid test's result (module doc)."""
    v = result["variants"]
    mass = f", floor mass {mass_text(result['floor_mass_kg'])}" if "floor_mass_kg" in result else ""
    roof = list(next(iter(v.values()))["J4_percent"])[-1]
    name = result.get("test") or result["scenario"]
    kind = f" ({result['scenario']})" if name != result["scenario"] else ""
    site = result.get("site", "virtual")
    lines = [
        f"{name}{kind} — {Path(str(result['record'])).name}{mass}, "
        f"{result['sim_duration_s']:.2f} s simulated, engine {result['engine']}",
        (f"  fast {result['fast_rate_hz']:g} Hz / slow {result['slow_rate_hz']:g} Hz, "
         f"{result['compensation']} compensation, {result['transition']} transition" if site == "virtual" else
         f"  on the rig ({site}): read once per slow step at {result['slow_rate_hz']:g} Hz; the comparison runs "
         "virtual"),
        f"  J2 (tracking) {result['J2_percent']:.3f} %   τ {result['tau_ms']:.3f} ms   "
        f"J4 force {result['J4_force_percent']:.3f} %",
        *([f"  command: peak {result['command_peak_ratio']:.3f}× the target's, largest jump per fast step "
            f"{result['command_jump_ratio']:.2f}× the target's ({1e3 * result['command_jump_max_m']:.3g} mm)"]
          if "command_peak_ratio" in result else []),
        "  roof J4 [%]: "
        + "   ".join(f"{m} {v[m]['J4_percent'][roof]:.3f}" for m in v),
    ]
    lines += parameter_lines(result)
    lines.append(f"  wall {result['wall_s']:.2f} s → {result['realtime_factor']:.1f}× real time "
                 f"(total with set-up, compile and comparison runs {result['total_wall_s']:.1f} s)")
    if "realtime" in result:
        lines += realtime_lines(result["realtime"])
    return "\n".join(lines)


def realtime_lines(rt: dict) -> list[str]:
    """The pacing statistics of a paced run (``result["realtime"]``)."""
    def ms(figures: dict | None) -> str:
        if not figures or figures.get("p50") is None:
            return "—"
        return (f"p50 {figures['p50']:.3f} / p99 {figures['p99']:.3f} / p99.9 {figures['p99.9']:.3f} / "
                f"max {figures['max']:.3f} ms")

    lines = [f"  paced at {rt['slow_step_ms']:g} ms per slow step: missed deadlines {rt['missed_deadlines']} "
             f"({rt['missed_after_startup']} after the {rt['startup_steps']}-step start-up, longest run "
             f"{rt['longest_missed_run']}), late targets (> 0.6 Δt) {rt['late_targets']}",
             f"  latency per slow step {ms(rt['latency_ms'])}",
             f"    site {ms(rt.get('site_step_ms'))}; numerical substructure {ms(rt['ns_step_ms'])}; "
             f"loop's own {ms(rt.get('loop_own_ms'))}"]
    shares = rt.get("latency_share") or {}
    if shares:
        lines.append("    shares of the latency: " + ", ".join(
            f"{name} {100 * value:.0f} %" for name, value in shares.items() if value is not None))
    host = rt.get("host_counters")
    if host:
        lines.append(f"    the host over the run: steal {host['steal_cpu_ms']:.0f} ms on the loop's CPU "
                     f"({host['steal_all_ms']:.0f} ms on all), the loop thread waited {host['thread_cpu_wait_ms']:.1f} ms "
                     f"for a CPU and ran {100 * (host['thread_cpu_share'] or 0):.0f} % of the time, involuntary "
                     f"switches {host['thread_involuntary_switches']} (thread) / "
                     f"{host['process_involuntary_switches']} (process)")
    return lines


def parameter_lines(result: dict) -> list[str]:
    """The parameters of the configured variant: with updating, what was identified
    (and pushed into the numerical substructure); with ``none``/``oracle``, what the
    numerical substructure used — the identifier only watched, and says so."""
    true_values = result["params_true"]
    if not true_values:
        return []
    width = max([7] + [len(name) for name in true_values])
    if "ns_params_final" in result and result["updating"] in ("none", "oracle"):
        lines = [f"  numerical substructure used / true ({result['updating']}: not updated):"]
        for name, true in true_values.items():
            used = result["ns_params_final"][name]
            lines.append(f"    {name:{width}s} {used:14.6g} / {true:<12.6g} error {100 * abs(used / true - 1):6.3f} %")
        watched = ", ".join(f"{n} {result['params_final'][n]:.6g}" for n in true_values)
        return lines + [f"  (the identifier, watching only, ended at {watched})"]
    lines = ["  identified / true:"]
    for name, true in true_values.items():
        est = result["params_final"][name]
        tc = result["convergence_time_s"][name]
        error = result["param_error_percent"][name]
        lines.append(f"    {name:{width}s} {est:14.6g} / {true:<12.6g} error {error:6.3f} %"
                     f"   converged (±2 %) at {'—' if tc is None else f'{tc:.2f} s'}")
    return lines


def mass_text(kg: float) -> str:
    """A mass as a person writes it: tonnes from 1 t, else kg."""
    return f"{kg / 1e3:g} t" if kg >= 1e3 else f"{kg:g} kg"
