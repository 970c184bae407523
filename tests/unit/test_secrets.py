from pathlib import Path

import pytest

from durabench.configs import mcp_token_envs
from durabench.settings.secrets import REDACTED, scrub_text, scrub_tree, secret_values


def test_secret_values_are_the_token_variables_only() -> None:
    env = {"SOURCEGRAPH_ACCESS_TOKEN": "sgp_abcdef123", "SOURCEGRAPH_URL": "https://sg.example"}
    assert secret_values(env, mcp_token_envs()) == ("sgp_abcdef123",)
    assert secret_values({"SOURCEGRAPH_ACCESS_TOKEN": "x"}, mcp_token_envs()) == ()


def test_scrub_text_and_tree(tmp_path: Path) -> None:
    assert scrub_text("token=sgp_abcdef123!", ["sgp_abcdef123"]) == f"token={REDACTED}!"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "log.txt").write_bytes(b"x sgp_abcdef123 y")
    (tmp_path / "clean.txt").write_text("nothing here")
    assert scrub_tree(tmp_path, ["sgp_abcdef123"]) == 1
    assert (tmp_path / "a" / "log.txt").read_bytes() == f"x {REDACTED} y".encode()
    assert (tmp_path / "clean.txt").read_text() == "nothing here"


@pytest.mark.parametrize("prefix", ["", "x", "xy", "KEY="])
def test_a_key_printed_without_effort_is_scrubbed_in_every_form(prefix: str) -> None:
    import base64
    import json
    from urllib.parse import quote

    from durabench.settings.secrets import REDACTED, scrub_bytes, scrub_text

    key = "sk-ant-api03-Zm9v+bar/baz=0123456789"
    spelled = [
        key,
        quote(key, safe=""),
        json.dumps({"k": key})[7:-2],
        key.encode().hex(),
        key[::-1],
        base64.b64encode(f"{prefix}{key} and more".encode()).decode(),
        base64.urlsafe_b64encode(f"{prefix}{key}".encode()).decode(),
    ]
    for text in spelled:
        assert REDACTED in scrub_text(f"said: {text}", [key]), text
        assert REDACTED.encode() in scrub_bytes(f"said: {text}".encode(), [key.encode()])
    wrapped = base64.encodebytes(f"{'x' * 50}{prefix}{key} and more".encode()).decode()
    assert key.encode() not in base64.b64decode(wrapped.split("\n")[0])  # the break cuts it
    assert REDACTED in scrub_text(f"said: {wrapped}", [key])
    assert REDACTED.encode() in scrub_bytes(f"said: {wrapped}".encode(), [key.encode()])
    assert scrub_text("nothing secret here, 0123456789", [key]) == (
        "nothing secret here, 0123456789"
    )
