"""One builder points the reference at given bases with a given key (replay._bases): the
``--emulator`` CLI runs, the in-process target, the probes and the example adapter all use it."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any
from unittest import mock

from dsweb_ref.certification import report
from dsweb_ref.certification.targets import TargetConfig, reference_settings
from dsweb_ref.replay import _bases
from dsweb_ref.replay.probes import ProbeContext
from dsweb_ref.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
KEY = "dsweb-test-key-for-bases-0001"
MESSAGES, TOOLS = "http://127.0.0.1:9/anthropic/v1", "http://127.0.0.1:9/v1/tools"


def _example_adapter() -> Any:
    path = ROOT / "tests" / "fixtures" / "example_adapter.py"
    spec = importlib.util.spec_from_file_location("example_adapter_for_bases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_reference_setup_reads_the_key_from_the_one_private_variable() -> None:
    defaults = Settings()
    config = TargetConfig(MESSAGES, TOOLS, KEY, search_max_queries=3, send_original_question=False)
    target = reference_settings(config)
    probe = ProbeContext(MESSAGES, TOOLS, KEY, timeout_s=7.0, account_token="dsweb-account-0001").settings(new_api=True)
    adapter = _example_adapter().Adapter(None, ("web_search",))
    adapter.configure({"messages_base": MESSAGES, "tools_base": TOOLS, "api_key": KEY, "search_max_queries": 3})
    for settings in (target, probe, adapter.settings):
        assert settings.credentials.auth == "api_key"
        assert settings.credentials.api_key_env == _bases.KEY_ENV
        assert settings.deepseek_messages.base_url == MESSAGES and settings.deepseek_api.base_url == TOOLS
        assert settings.tools.search_max_queries == (3 if settings is not probe else defaults.tools.search_max_queries)
    # the target and the adapter take their timeouts from configure (timeout_s), the probes set their own
    assert target.deepseek_api.timeout_s == target.deepseek_messages.timeout_s == 30.0
    assert probe.deepseek_api.timeout_s == probe.deepseek_messages.timeout_s == 7.0
    assert adapter.settings.deepseek_api.timeout_s == config.timeout_s == 30.0
    assert target.deepseek_api.send_original_question is False
    assert _bases.credential_environ(KEY, "dsweb-account-0001") == {
        _bases.KEY_ENV: KEY,
        _bases.ACCOUNT_ENV: "dsweb-account-0001",
    }
    # never in a real environment, so the report has no reason to look for it there
    assert _bases.KEY_ENV not in report._SECRET_ENVS and "DSWEB_EMULATOR_KEY" not in report._SECRET_ENVS


def test_the_cli_emulator_runtime_uses_the_builder_and_keeps_the_configured_timeouts() -> None:
    from dsweb_ref.cli import _tooling

    seen: dict[str, Any] = {}

    def fake_build_runtime(settings: Any, **kwargs: Any) -> object:
        seen["settings"], seen["environ"] = settings(), kwargs.get("environ")
        return object()

    args = argparse.Namespace(config=None, new_api=True, emulator=True)
    with mock.patch.object(_tooling, "build_runtime", fake_build_runtime), _tooling.runtime_for(args):
        pass
    settings: Settings = seen["settings"]
    assert settings.credentials.api_key_env == _bases.KEY_ENV and set(seen["environ"]) == {_bases.KEY_ENV}
    assert settings.deepseek_api.timeout_s == Settings().deepseek_api.timeout_s
    assert settings.deepseek_api.base_url.startswith("http://127.0.0.1:")


def test_dsweb_version_does_not_load_the_certification_modules() -> None:
    import subprocess

    code = (
        "import sys, dsweb_ref.cli._tooling; "
        "print(any(m.startswith('dsweb_ref.certification') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
