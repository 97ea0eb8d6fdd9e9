"""The ``reflector:`` settings (``reflectors/settings.py``): the names, and the model."""

from __future__ import annotations

import typing

import pytest
from pydantic import ValidationError

from evolving_agent.reflectors.settings import REFLECTOR_NAMES, ReflectorName, ReflectorSettings


def test_the_names_are_the_literal_and_every_one_is_a_valid_setting() -> None:
    assert REFLECTOR_NAMES == typing.get_args(ReflectorName)
    for name in REFLECTOR_NAMES:
        assert ReflectorSettings(name=name).name == name  # type: ignore[arg-type]


def test_the_defaults_send_no_key_anywhere_but_its_own_service() -> None:
    s = ReflectorSettings()
    assert (s.name, s.api_key_env, s.api_key_for) == ("rules", "OPENAI_API_KEY", None)
    assert s.base_url.startswith("http://127.0.0.1")


@pytest.mark.parametrize(
    "data",
    [{"name": "gpt"}, {"timeout": 0}, {"retries": 11}, {"retries": -1}, {"api_key": "sk-x"}],
)
def test_bad_settings_are_refused(data: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ReflectorSettings.model_validate(data)
