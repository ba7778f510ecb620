"""`--settings` and the project folder on `sys.path`: how `wymcp` finds settings."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wymcp.cli._settings_option import add_settings_option, project_on_path
from wymcp.conf import ENVIRONMENT_VARIABLE


def test_the_settings_option_defaults_to_none():
    parser = argparse.ArgumentParser()
    add_settings_option(parser)
    assert parser.parse_args([]).settings is None
    assert parser.parse_args(["--settings", "a.b"]).settings == "a.b"
    assert ENVIRONMENT_VARIABLE in parser.format_help()


def test_the_project_goes_on_the_path_once(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".")])
    project_on_path()
    project_on_path()
    assert sys.path.count(str(tmp_path)) == 1
    assert sys.path[0] == str(tmp_path)
    monkeypatch.setattr(sys, "path", ["", *sys.path[1:]])
    project_on_path()  # "" is the current directory already
    assert str(tmp_path) not in sys.path


def test_an_http_command_without_the_http_transport_says_how_to_install_it(
    monkeypatch, capsys
):
    import importlib.util

    from wymcp.cli import main

    real = importlib.util.find_spec

    def without_http(name, *args):
        return None if name == "wymcp.transport.aiohttp" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_http)
    for argv in (["serve"], ["list", "http://127.0.0.1:1/mcp"], ["stats", "http://x/"]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"wymcp {argv[0]}: needs the HTTP transport" in err
        assert "pip install 'wymcp-cli[http]'" in err
