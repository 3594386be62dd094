"""The specimen site of ``serve site``: as many basic DOFs as the client controls, the
transfer system's site, and a clear refusal of anything else."""

import pytest

from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.actuator_element_site import ActuatorElementSite
from rths_ident.hybrid.fast_side.actuator import TRANSFER_SYSTEMS
from rths_ident.hybrid.fast_side.served_specimen import SERVED_TRANSFER_SYSTEMS, make_site_factory
from rths_ident.models import LinearElement, LinearParams
from rths_ident.transport.openfresco import ModelElementSite, SetupMessage


def test_site_follows_the_clients_dof_count_and_the_transfer_system():
    params = LinearParams(k=1.0e6)
    ideal = make_site_factory(LinearElement, params)
    assert isinstance(ideal(SetupMessage.for_generic_client(1)), ModelElementSite)
    assert ideal(SetupMessage.for_generic_client(2)).n_basic == 2
    with pytest.raises(ConnectionError, match="1 displacement .* or 2"):
        ideal(SetupMessage.for_generic_client(3))
    actuator = make_site_factory(LinearElement, params, "carrion-spencer")(SetupMessage.for_generic_client(1))
    assert isinstance(actuator, ActuatorElementSite) and actuator.n_basic == 1
    with pytest.raises(ParameterError, match="unknown transfer system 'hydraulic': expected one of ideal | carrion"):
        make_site_factory(LinearElement, params, "hydraulic")


def test_served_transfer_systems_are_registered_transfer_systems():
    assert set(SERVED_TRANSFER_SYSTEMS) <= set(TRANSFER_SYSTEMS)
