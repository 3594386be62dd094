"""A model specimen as the element site of an OpenFresco server (what ``rths-ident serve
site`` serves).

:func:`make_site_factory` gives :class:`~rths_ident.transport.openfresco.ElementServer`
its ``site(setup)``: a site with as many basic DOFs (1 or 2) as the client controls,
built for one of the :data:`TRANSFER_SYSTEMS`:

* ``ideal``: the specimen is at the client's trial displacement
  (:class:`~rths_ident.transport.openfresco.ModelElementSite`);
* ``carrion-spencer``: the trial displacement is the command of the Carrion–Spencer
  actuator with control–structure interaction
  (:class:`~rths_ident.hybrid.fast_side.actuator_element_site.ActuatorElementSite`;
  the actuator of seed 000 Table 2.1 unless another is given).
"""

from __future__ import annotations

from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.actuator import CarrionSpencerParams
from rths_ident.hybrid.fast_side.actuator_element_site import DEFAULT_FAST_RATE, ActuatorElementSite
from rths_ident.transport.openfresco import ModelElementSite, OpenFrescoProtocolError

__all__ = ["TRANSFER_SYSTEMS", "make_site_factory"]

#: how the client's trial displacement reaches the specimen
TRANSFER_SYSTEMS = ("ideal", "carrion-spencer")


def make_site_factory(model, params, transfer_system: str = "ideal", *, actuator: CarrionSpencerParams | None = None,
                      fast_rate: float | None = None):
    """``site(setup) -> ElementSite`` for the specimen ``model`` with ``params`` (SI).

    ``actuator`` (carrion-spencer): the actuator's parameters (default Table 2.1);
    ``fast_rate`` [Hz] (carrion-spencer): the controller rate (default
    :data:`~rths_ident.hybrid.fast_side.actuator_element_site.DEFAULT_FAST_RATE`).
    A client controlling other than 1 or 2 displacements is refused
    (:class:`~rths_ident.transport.openfresco.OpenFrescoProtocolError`) when it connects.
    """
    if transfer_system not in TRANSFER_SYSTEMS:
        raise ParameterError(f"transfer_system: expected one of {', '.join(TRANSFER_SYSTEMS)}, "
                             f"got {transfer_system!r}")
    if transfer_system == "carrion-spencer" and actuator is None:
        actuator = CarrionSpencerParams.table_2_1()

    def site_for(setup):
        n = setup.ctrl_disp
        if n not in (1, 2):
            raise OpenFrescoProtocolError(
                f"serve site has a 1-D specimen: the client must control 1 displacement (one node) or 2 "
                f"(two nodes, -dof 1 -dof 1); its setup says {n} (ints {list(setup)})")
        if transfer_system == "ideal":
            return ModelElementSite(model, params, n_basic=n)
        return ActuatorElementSite(model, params, actuator, n_basic=n,
                                   fast_rate=DEFAULT_FAST_RATE if fast_rate is None else fast_rate)

    return site_for
