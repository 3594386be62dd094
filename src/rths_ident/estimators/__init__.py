"""Online and offline estimators.

Online (each a pure ``init``/``update`` core usable in ``lax.scan``/``vmap`` plus a small
stateful wrapper, filterpy-style):

* :class:`RLS` — recursive least squares (forgetting, covariance guards, dead zone);
* :class:`ConstrainedRLS` — RLS + exact projection onto ``lb ≤ θ ≤ ub, Aθ ≤ b`` in the
  metric of P⁻¹ (:func:`project`);
* :class:`LMS` — LMS, NLMS and leaky LMS with the step-size stability bound;
* :class:`UnscentedKalmanFilter` + :class:`MerweScaledSigmaPoints` — a drop-in for
  filterpy's, with ``fx``/``hx`` in ``jax.numpy``; :func:`ukf_scan` for whole records;
* :class:`ExtendedKalmanFilter` — Jacobians from ``jax.jacfwd``.

Online-identifier protocol (:mod:`rths_ident.estimators.online_identifier`): an
:class:`OnlineIdentifier` with ``init``/``step``/``estimate``; a record is one scan,
:func:`run_identifier`. Constructors: :func:`lugre_rls_online_identifier` (constrained
RLS on the LuGre LIP form), :func:`joint_ukf_online_identifier` (the joint UKF over any
model class of :mod:`rths_ident.models`) and its named presets, :func:`joint_ukf_preset`
(:data:`JOINT_UKF_PRESETS`: ``lugre-column`` = :func:`lugre_ukf_online_identifier`,
``degrading-bouc-wen``).

Wrappers for scripts (one base, :class:`IdentifierWrapper`: ``update``, ``run``,
``theta``, ``relative_std``, ``converged``, ``P``): :class:`LuGreIdentifier` (RLS),
:class:`JointUKFIdentifier`, its presets :class:`LuGreUKFIdentifier` and
:class:`DegradingBoucWenUKFIdentifier`, and :class:`BoucWenUKFIdentifier` (a force-driven
Bouc–Wen SDOF, a different problem).

Offline fitting of logged tests: :mod:`rths_ident.estimators.offline`.
"""

from rths_ident.estimators import joint_ukf_identifier, joint_ukf_presets, lms, lugre_identifier, qp_projection, rls
from rths_ident.estimators.boucwen_ukf_identifier import BoucWenUKFIdentifier
from rths_ident.estimators.ekf import ExtendedKalmanFilter, ekf_init, ekf_predict, ekf_scan, ekf_step, ekf_update
from rths_ident.estimators.lms import LMS, LMSParams, LMSStabilityWarning, delay_line_regressors, lms_stability_bound
from rths_ident.estimators.lugre_identifier import (
    LuGreIdentifier,
    LuGreIdentifierOutput,
    LuGreIdentifierParams,
    identification_errors,
)
from rths_ident.estimators.qp_projection import ConstrainedRLS, ConstrainedRLSParams, clip_to_box, project
from rths_ident.estimators.rls import RLS, RLSParams, RLSState
from rths_ident.estimators.sigma_points import MerweScaledSigmaPoints
from rths_ident.estimators.ukf import UnscentedKalmanFilter, ukf_init, ukf_predict, ukf_scan, ukf_step, ukf_update

from rths_ident.estimators.online_identifier import Estimate, IdentifierInputs, OnlineIdentifier, run_identifier
from rths_ident.estimators.identifier_wrapper import IdentifierWrapper
from rths_ident.estimators.lugre_identifier import lugre_rls_online_identifier
from rths_ident.estimators.joint_ukf_identifier import JointUKFIdentifier, joint_ukf_online_identifier
from rths_ident.estimators.joint_ukf_presets import (
    PRESETS as JOINT_UKF_PRESETS,
    DegradingBoucWenUKFIdentifier,
    LuGreUKFIdentifier,
    joint_ukf_preset,
    lugre_ukf_online_identifier,
)

lugre_identifier_step = lugre_identifier.step

__all__ = [
    "RLS",
    "RLSParams",
    "RLSState",
    "ConstrainedRLS",
    "ConstrainedRLSParams",
    "project",
    "clip_to_box",
    "LMS",
    "LMSParams",
    "LMSStabilityWarning",
    "lms_stability_bound",
    "delay_line_regressors",
    "MerweScaledSigmaPoints",
    "UnscentedKalmanFilter",
    "ukf_init",
    "ukf_predict",
    "ukf_update",
    "ukf_step",
    "ukf_scan",
    "ExtendedKalmanFilter",
    "ekf_init",
    "ekf_predict",
    "ekf_update",
    "ekf_step",
    "ekf_scan",
    "LuGreIdentifier",
    "LuGreIdentifierParams",
    "LuGreIdentifierOutput",
    "identification_errors",
    "lugre_identifier_step",
    "LuGreUKFIdentifier",
    "JointUKFIdentifier",
    "IdentifierWrapper",
    "joint_ukf_identifier",
    "joint_ukf_presets",
    "BoucWenUKFIdentifier",
    "DegradingBoucWenUKFIdentifier",
    "rls",
    "qp_projection",
    "lms",
    "lugre_identifier",
    "OnlineIdentifier",
    "IdentifierInputs",
    "Estimate",
    "run_identifier",
    "lugre_rls_online_identifier",
    "lugre_ukf_online_identifier",
    "joint_ukf_online_identifier",
    "joint_ukf_preset",
    "JOINT_UKF_PRESETS",
]
