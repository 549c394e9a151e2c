"""Hunt R, part I: wrong readings of seed 003's search model choice that dsweb certify passed, each now failing the
rows added for it: the model an assignment names lower-cased on the search route (I1); a save reporting the
project's override only when the project's value differs from the one saved (I3). Each wrong reading is made in
the reference as the hunt made it and fails exactly its rows; the reference passes them."""

from __future__ import annotations

import pytest

from dsweb_ref import standalone_accounts, standalone_config
from dsweb_ref.certification import targets
from dsweb_ref.certification.checks import standalone, standalone_save

from ._readings import failing_rows, keep_rows, patch_reading

# -- I1: an assigned model ID lower-cased -----------------------------------------------------------

RESOLVE, RESOLUTIONS = "standalone.resolve.table", "RESOLUTION_CASES"
VERBATIM = "assigned-model-id-is-kept-verbatim"


def test_the_reference_passes_the_assigned_verbatim_row(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_rows(standalone, RESOLUTIONS, (VERBATIM,), monkeypatch)
    assert failing_rows(standalone, RESOLUTIONS, RESOLVE, monkeypatch) == set()


@pytest.mark.parametrize(
    ("right", "wrong"),
    [
        # catches: the assigned model lower-cased when the route is built (the saved account model kept)
        ("route=_route(account, model)", "route=_route(account, model.lower())"),
        # catches: the whole reference lower-cased (and stripped) before it is split into connection and model
        ('name, slash, model = reference.partition("/")',
         'name, slash, model = reference.strip().lower().partition("/")'),
    ],
    ids=["model", "reference"],
)
def test_an_assigned_model_lower_cased_fails_exactly_the_verbatim_row(
    right: str, wrong: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    patch_reading(standalone_accounts, "_assigned", right, wrong, monkeypatch)
    assert failing_rows(standalone, RESOLUTIONS, RESOLVE, monkeypatch) == {VERBATIM}


# -- I3: an override reported only when the project's value differs --------------------------------

SAVE, SAVES = "standalone.save.keeps_rest", "SAVE_CASES"
SAME_VALUE = "project-sets-the-same-value"


def test_the_reference_passes_the_same_value_row(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_rows(standalone_save, SAVES, (SAME_VALUE,), monkeypatch)
    assert failing_rows(standalone_save, SAVES, SAVE, monkeypatch) == set()


# catches: overridden_by reported only when the project's value differs from the one saved (None when they agree)
def test_an_override_only_when_the_values_differ_fails_exactly_the_same_value_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    patch_reading(standalone_config, "save_search_model", 'if origin != "project":',
                  'if origin != "project" or effective == value:', monkeypatch, targets)
    assert failing_rows(standalone_save, SAVES, SAVE, monkeypatch) == {SAME_VALUE}
