"""A model specimen as the element site of an OpenFresco server (what ``rths-ident serve
site`` serves).

:func:`make_site_factory` gives :class:`~rths_ident.transport.openfresco.ElementServer`
its ``site(setup)``: a site with as many basic DOFs (1 or 2) as the client controls,
built for one of the :data:`SERVED_TRANSFER_SYSTEMS`:

* ``ideal``: the specimen is at the client's trial displacement
  (:class:`~rths_ident.transport.openfresco.ModelElementSite`);
* ``carrion-spencer``: the trial displacement is the command of the Carrion–Spencer
  actuator with control–structure interaction
  (:class:`~rths_ident.hybrid.fast_side.actuator_element_site.ActuatorElementSite`;
  the actuator of seed 000 Table 2.1 unless another is given).
"""

from __future__ import annotations

from rths_ident.hybrid.fast_side.actuator import CarrionSpencerParams
from rths_ident.hybrid.fast_side.actuator_element_site import DEFAULT_FAST_RATE, ActuatorElementSite
from rths_ident.registry import Registry
from rths_ident.transport.openfresco import ModelElementSite, OpenFrescoProtocolError

__all__ = ["SERVED_TRANSFER_SYSTEMS", "make_site_factory"]


def _ideal_site(model, params, n_basic: int, actuator, fast_rate, interlocks=None):
    del interlocks  # nothing between the client and the specimen to stop: the client's displacement is it
    return ModelElementSite(model, params, n_basic=n_basic)


def _actuator_site(model, params, n_basic: int, actuator, fast_rate, interlocks=None):
    return ActuatorElementSite(model, params, CarrionSpencerParams.table_2_1() if actuator is None else actuator,
                               n_basic=n_basic, fast_rate=DEFAULT_FAST_RATE if fast_rate is None else fast_rate,
                               interlocks=interlocks)


#: the transfer systems (names of :data:`~rths_ident.hybrid.fast_side.actuator.TRANSFER_SYSTEMS`)
#: a served specimen can sit behind → ``site(model, params, n_basic, actuator, fast_rate)``
SERVED_TRANSFER_SYSTEMS = Registry("transfer system", {"ideal": _ideal_site, "carrion-spencer": _actuator_site})


def make_site_factory(model, params, transfer_system: str = "ideal", *, actuator: CarrionSpencerParams | None = None,
                      fast_rate: float | None = None, interlocks=None):
    """``site(setup) -> ElementSite`` for the specimen ``model`` with ``params`` (SI).

    ``interlocks`` (carrion-spencer; :class:`~rths_ident.hybrid.fast_side.interlocks.Interlocks`):
    checked at every commit, the actuator brought to rest when one trips.
    ``actuator`` (carrion-spencer): the actuator's parameters (default Table 2.1);
    ``fast_rate`` [Hz] (carrion-spencer): the controller rate (default
    :data:`~rths_ident.hybrid.fast_side.actuator_element_site.DEFAULT_FAST_RATE`).
    A client controlling other than 1 or 2 displacements is refused
    (:class:`~rths_ident.transport.openfresco.OpenFrescoProtocolError`) when it connects.
    """
    build = SERVED_TRANSFER_SYSTEMS[transfer_system]  # ParameterError listing them for another name

    def site_for(setup):
        n = setup.ctrl_disp
        if n not in (1, 2):
            raise OpenFrescoProtocolError(
                f"serve site has a 1-D specimen: the client must control 1 displacement (one node) or 2 "
                f"(two nodes, -dof 1 -dof 1); its setup says {n} (ints {list(setup)})")
        return build(model, params, n, actuator, fast_rate, interlocks)

    return site_for
